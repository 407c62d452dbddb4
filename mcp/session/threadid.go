package session

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxThreadIDLen bounds a normalized thread id in bytes.
const MaxThreadIDLen = 96

// threadHashLen is the number of hex digits of sha256 that mark a rewritten id.
const threadHashLen = 8

// NormalizeThreadID turns a client's thread id into the form sessions are
// keyed by. Only [A-Za-z0-9_] is kept. When that changed the text, or the text
// is longer than MaxThreadIDLen, the result is a prefix of the kept text, "_",
// and 8 hex digits of sha256 of the original, so "user-1", "user1" and
// "user_1" stay three different threads. The empty string stays empty.
//
// Normalization is idempotent: every result is made of kept characters and
// fits MaxThreadIDLen, so an id Winx handed out comes back unchanged.
func NormalizeThreadID(s string) string {
	if s == "" {
		return ""
	}
	var kept strings.Builder
	kept.Grow(min(len(s), MaxThreadIDLen))
	for i := 0; i < len(s); i++ {
		if IsThreadIDByte(s[i]) {
			kept.WriteByte(s[i])
		}
	}
	k := kept.String()
	if k == s && len(s) <= MaxThreadIDLen {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	prefix := k[:min(len(k), MaxThreadIDLen-1-threadHashLen)]
	return prefix + "_" + hex.EncodeToString(sum[:threadHashLen/2])
}

// IsThreadIDByte reports whether c may appear in a normalized thread id:
// [A-Za-z0-9_].
func IsThreadIDByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// ThreadIDOrDefault is the thread a call names: the client's id normalized,
// or the session's external id when the client gave none.
func ThreadIDOrDefault(clientThreadID, externalID string) string {
	if tid := NormalizeThreadID(clientThreadID); tid != "" {
		return tid
	}
	return externalID
}
