package guardian

import (
	"bytes"
	"crypto/rand"
	"fmt"
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
// The cwd is last because it may contain ';'.
//
// Completion cannot be forged from output: a program the command runs may
// print anything, including a well-formed marker. Two layers keep such a
// marker from ending the command:
//
//   - The shell's terminal: a completion marker counts only if, when it is
//     scanned, the terminal's foreground process group is the shell's own
//     (the shell is the session leader, its group is its pid). A program
//     the command runs is a job in a group of its own, holding the
//     foreground until it ends, so what it prints is output.
//   - A nonce per command: each typed line hands the shell a fresh nonce
//     (commandLine), which it keeps in a non-exported variable for its
//     prompt hook, and only a marker with the current command's nonce
//     counts (before the first command, the start nonce of the rc file).
//     The nonce is in no file, environment or command line a program can
//     read, so the nonce covers what the foreground check cannot see: a
//     background job printing while the shell runs a builtin, or a program
//     whose marker is scanned only after it exited.
//
// Limits: code that runs inside the shell process itself (a sourced script,
// a function or trap the shell runs) reads the variable and prints with the
// shell's terminal, so it can forge completion; a process that can read the
// shell's memory (/proc/PID/mem, where ptrace of the shell is allowed) can
// learn the nonce, which is why the foreground check is the primary layer;
// so can a process that opened the PTY by its path (not as its controlling
// terminal, so job control does not stop it) and reads the typed line
// before the shell does; and with job control off (set +m) programs share
// the shell's group and only the nonce is left.
//
// What it costs: the shell's own marker is refused, and the command runs
// on, when it is printed with a nonce the scanner no longer expects (a
// command that assigns __winx_n; a prompt after a Ctrl-C that flushed the
// typed line before the shell read it, so an interrupt replaces the shell)
// or scanned after the shell started a job on its own (a line typed ahead
// to a command that ended without reading it: that line's end then ends
// the command).
var markerPrefix = []byte("\x1b]6973;")

// maxMarkerLen bounds how long a marker may be (the cwd is the long part);
// a "marker" that does not end within it is plain output.
const maxMarkerLen = 8 << 10

// nonceLen and nonceAlphabet shape a nonce: 11 characters of [A-Za-z0-9],
// 65.5 bits. They are typed with every command, where each byte costs
// about 10 µs of the round trip (the line editor reads a byte at a time),
// and need no quoting there. The nonce is never readable by a program the
// command runs (see above), so it can only be guessed, one marker per
// guess, and a guess counts only when the foreground check is passed:
// even at 40 million markers a second (1 GB/s through the terminal, far
// above what a PTY carries) 2^65 guesses take some 30,000 years.
const (
	nonceLen      = 11
	nonceAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

// newNonce returns a random nonce of nonceLen characters of nonceAlphabet.
func newNonce() string {
	// Bytes at or above 248 (4 × 62) are drawn again, so that every
	// character is equally likely.
	const limit = 256 - 256%len(nonceAlphabet)
	out := make([]byte, 0, nonceLen)
	var b [2 * nonceLen]byte
	for len(out) < nonceLen {
		if _, err := rand.Read(b[:]); err != nil {
			panic("guardian: no randomness for the marker nonce: " + err.Error())
		}
		for _, c := range b {
			if int(c) < limit && len(out) < nonceLen {
				out = append(out, nonceAlphabet[int(c)%len(nonceAlphabet)])
			}
		}
	}
	return string(out)
}

// marker is one parsed marker: a start marker, or a completion marker with
// the exit code and cwd.
type marker struct {
	start    bool
	exitCode int
	cwd      string
}

// markerScanner splits a PTY byte stream into output and the markers that
// count. It is not safe for concurrent use; nonce may change between calls
// of scan.
type markerScanner struct {
	// nonce is what a marker must carry: the running (or last) command's,
	// or the rc file's start nonce before the first command.
	nonce string
	// shellHasTerminal reports whether the shell's own process group holds
	// the terminal's foreground now; a completion marker counts only then.
	// nil counts as never.
	shellHasTerminal func() bool
	pending          []byte // bytes that may be the start of a marker
}

// scan consumes p and calls out for plain output and mark for each marker
// that counts, in stream order. Bytes that might begin a marker are held
// until the next call decides. A completion marker that does not count is
// replaced by a note saying so (refusedNote); anything else that does not
// count is output as it came.
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
		mk, nonce, ok := parseMarker(buf[len(markerPrefix):end])
		switch {
		case !ok || buf[end] != '\a':
			out(buf[:end+1])
		case mk.start && nonce == m.nonce:
			// Printed by the typed line itself, in the shell; by the time
			// it is scanned the command may hold the terminal already.
			mark(mk)
		case mk.start:
			out(buf[:end+1])
		case nonce == m.nonce && m.shellHasTerminal != nil && m.shellHasTerminal():
			mark(mk)
		default:
			out(refusedNote(mk))
		}
		buf = buf[end+1:]
	}
}

// refusedNote is what the model sees in place of a completion marker that
// does not count: a terminal would swallow the OSC without a trace, but a
// program that prints one is either forging its result or printing a
// session's transcript, and either is worth knowing. Control characters of
// the cwd are quoted so they cannot drive the terminal.
func refusedNote(mk marker) []byte {
	return fmt.Appendf(nil, "[winx: ignored a completion marker (exit %d, cwd %q) the shell did not print]\r\n", mk.exitCode, mk.cwd)
}

// parseMarker reads "S;<nonce>" or "W;<nonce>;<code>;<cwd>".
func parseMarker(body []byte) (mk marker, nonce string, ok bool) {
	if rest, ok := bytes.CutPrefix(body, []byte("S;")); ok {
		return marker{start: true}, string(rest), true
	}
	rest, ok := bytes.CutPrefix(body, []byte("W;"))
	if !ok {
		return marker{}, "", false
	}
	parts := bytes.SplitN(rest, []byte(";"), 3)
	if len(parts) != 3 {
		return marker{}, "", false
	}
	code, err := strconv.Atoi(string(parts[1]))
	if err != nil {
		return marker{}, "", false
	}
	return marker{exitCode: code, cwd: string(parts[2])}, string(parts[0]), true
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
