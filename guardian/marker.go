package guardian

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// The completion marker is an OSC sequence the shell prints from its prompt
// hook after every command:
//
//	ESC ] 6973 ; W ; <nonce> ; <exit code> ; <cwd> BEL
//
// and the start marker is printed by the command line itself, just before
// the command runs, so that prompt text the shell printed before it read the
// line (a user's PS1) is never taken for the command's output:
//
//	ESC ] 6973 ; S ; <nonce> BEL
//
// The nonce is random per shell, so output that merely looks like a marker
// (a log file, a test of this very code) is plain output. The cwd is last
// because it may contain ';'. A terminal would consume an unknown OSC, so a
// forged marker is also invisible in rendered text.
var markerPrefix = []byte("\x1b]6973;")

// maxMarkerLen bounds how long a marker may be (the cwd is the long part);
// a "marker" that does not end within it is plain output.
const maxMarkerLen = 8 << 10

func newNonce() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("guardian: no randomness for the shell nonce: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// marker is one parsed marker: a start marker, or a completion marker with
// the exit code and cwd.
type marker struct {
	start    bool
	exitCode int
	cwd      string
}

// markerScanner splits a PTY byte stream into output and markers carrying
// the right nonce. It is not safe for concurrent use.
type markerScanner struct {
	nonce   string
	pending []byte // bytes that may be the start of a marker
}

// scan consumes p and calls out for plain output and mark for each marker,
// in stream order. Bytes that might begin a marker are held until the next
// call decides.
func (m *markerScanner) scan(p []byte, out func([]byte), mark func(marker)) {
	buf := append(m.pending, p...)
	m.pending = nil
	for len(buf) > 0 {
		i := bytes.Index(buf, markerPrefix)
		if i < 0 {
			keep := partialPrefixLen(buf)
			if n := len(buf) - keep; n > 0 {
				out(buf[:n])
			}
			m.pending = append([]byte(nil), buf[len(buf)-keep:]...)
			return
		}
		if i > 0 {
			out(buf[:i])
			buf = buf[i:]
		}
		end := bytes.IndexByte(buf, '\a')
		if end < 0 {
			if len(buf) < maxMarkerLen {
				m.pending = append([]byte(nil), buf...)
				return
			}
			end = len(buf) - 1 // runaway: give it up as output below
		}
		body := buf[len(markerPrefix):end]
		if mk, ok := m.parse(body); ok && buf[end] == '\a' {
			mark(mk)
		} else {
			out(buf[:end+1])
		}
		buf = buf[end+1:]
	}
}

// parse checks the nonce and reads "S;<nonce>" or "W;<nonce>;<code>;<cwd>".
func (m *markerScanner) parse(body []byte) (marker, bool) {
	if rest, ok := bytes.CutPrefix(body, []byte("S;")); ok {
		return marker{start: true}, string(rest) == m.nonce
	}
	rest, ok := bytes.CutPrefix(body, []byte("W;"))
	if !ok {
		return marker{}, false
	}
	parts := bytes.SplitN(rest, []byte(";"), 3)
	if len(parts) != 3 || string(parts[0]) != m.nonce {
		return marker{}, false
	}
	code, err := strconv.Atoi(string(parts[1]))
	if err != nil {
		return marker{}, false
	}
	return marker{exitCode: code, cwd: string(parts[2])}, true
}

// partialPrefixLen returns how many trailing bytes of buf are a proper
// prefix of markerPrefix.
func partialPrefixLen(buf []byte) int {
	max := len(markerPrefix) - 1
	if max > len(buf) {
		max = len(buf)
	}
	for n := max; n > 0; n-- {
		if bytes.Equal(buf[len(buf)-n:], markerPrefix[:n]) {
			return n
		}
	}
	return 0
}
