package session

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
)

// Key identifies a session: a principal's canonical workspace root within
// an affinity scope ("" is the workspace-wide session). It is comparable and
// is the registry's map key; nothing parses it back from text.
type Key struct {
	Principal string
	Root      string // canonical workspace root
	Scope     string // affinity scope; "" means workspace-wide
}

// Legacy is the string encoding keys had before they were typed,
// principal NUL root [NUL scope], kept for hashing only: the values derived
// from it (temporary-artifact directories, edit receipts, external ids)
// must stay the same across upgrades so existing directories and records
// are found again. A root is absolute and holds no NUL, so the encoding is
// unambiguous for an unscoped key even if a principal contained one.
func (k Key) Legacy() string {
	s := k.Principal + "\x00" + k.Root
	if k.Scope != "" {
		s += "\x00" + k.Scope
	}
	return s
}

// ExternalID is the id a client sees for the session of k (see
// ExternalSessionID). A scoped session is its own session: its id carries
// the scope, hashed so no client text reaches it.
func (k Key) ExternalID() string {
	if k.Scope == "" {
		return ExternalSessionID(k.Principal, k.Root)
	}
	return ExternalSessionID(k.Principal+"\x00"+k.Scope, k.Root)
}

// maxProjectNameLen bounds the project part of an external session id.
const maxProjectNameLen = 40

// ExternalSessionID is the id a client sees for a workspace-wide session:
// ws_<project>_<8 hex of sha256(principal NUL root)>, where project is the
// root's base name with every byte outside [A-Za-z0-9_] replaced by "_".
// It is already a normalized thread id, so it can serve as one.
func ExternalSessionID(principal, canonicalRoot string) string {
	base := filepath.Base(canonicalRoot)
	var name strings.Builder
	for i := 0; i < len(base) && name.Len() < maxProjectNameLen; i++ {
		if c := base[i]; IsThreadIDByte(c) {
			name.WriteByte(c)
		} else {
			name.WriteByte('_')
		}
	}
	project := name.String()
	if strings.Trim(project, "_") == "" {
		project = "root"
	}
	sum := sha256.Sum256([]byte(Key{Principal: principal, Root: canonicalRoot}.Legacy()))
	return "ws_" + project + "_" + hex.EncodeToString(sum[:4])
}

// TempArtifactDir is the directory for temporary artifacts of the session
// of k: <root>/.winx/tmp/session-<16 hex of sha256(k.Legacy())>. The
// registry creates it before the session's shell starts (ensureTempDir).
func TempArtifactDir(k Key) string {
	sum := sha256.Sum256([]byte(k.Legacy()))
	return filepath.Join(k.Root, ".winx", "tmp", "session-"+hex.EncodeToString(sum[:8]))
}

// Session affinity modes (--session-affinity): which calls share a session.
const (
	// AffinityWorkspace: one session per principal and canonical
	// workspace (the default).
	AffinityWorkspace = "workspace"
	// AffinityConversation: one session per conversation (the HTTP
	// Mcp-Session-Id, else X-Winx-Conversation-Id, else the first call's
	// thread id) and workspace.
	AffinityConversation = "conversation"
	// AffinityThread: one session per thread id and workspace.
	AffinityThread = "thread"
)

// Scope is the Key.Scope of a call under the affinity mode, from the
// caller's conversation id (may be "") and the call's thread_id. Scopes are
// internal keys; clients never see them.
func Scope(affinity, conversation, threadID string) string {
	switch affinity {
	case AffinityConversation:
		if conversation != "" {
			return "c:" + conversation
		}
		if threadID != "" {
			return "t:" + NormalizeThreadID(threadID)
		}
	case AffinityThread:
		if threadID != "" {
			return "t:" + NormalizeThreadID(threadID)
		}
	}
	return ""
}
