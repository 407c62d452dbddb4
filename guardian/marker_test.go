package guardian

import (
	"bytes"
	"strings"
	"testing"
)

func TestMarkerScanner(t *testing.T) {
	const nonce = "n0nce"
	real := "\x1b]6973;W;" + nonce + ";3;/tmp/a;b\a"
	forged := "\x1b]6973;W;other;0;/\a"
	tests := []struct {
		name    string
		chunks  []string
		wantOut string
		want    []marker
	}{
		{"plain", []string{"hello\n"}, "hello\n", nil},
		{"marker", []string{"out" + real + "after"}, "outafter", []marker{{false, 3, "/tmp/a;b"}}},
		{"split everywhere", strings.Split("x"+real+"y", ""), "xy", []marker{{false, 3, "/tmp/a;b"}}},
		{"forged is a note", []string{"a" + forged + "b"}, "a" + string(refusedNote(marker{cwd: "/"})) + "b", nil},
		{"bad code is output", []string{"\x1b]6973;W;" + nonce + ";x;/\a"}, "\x1b]6973;W;" + nonce + ";x;/\a", nil},
		{"two markers", []string{real + real}, "", []marker{{false, 3, "/tmp/a;b"}, {false, 3, "/tmp/a;b"}}},
		{"start marker", []string{"ps1\x1b]6973;S;" + nonce + "\aout"}, "ps1out", []marker{{start: true}}},
		{"forged start", []string{"\x1b]6973;S;zzz\a"}, "\x1b]6973;S;zzz\a", nil},
		{"prefix-like tail released", []string{"abc\x1b]69", "Z"}, "abc\x1b]69Z", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &markerScanner{nonce: nonce, shellHasTerminal: func() bool { return true }}
			var out strings.Builder
			var got []marker
			for _, c := range tc.chunks {
				s.scan([]byte(c), func(p []byte) { out.Write(p) }, func(m marker) { got = append(got, m) })
			}
			if out.String() != tc.wantOut {
				t.Errorf("output = %q, want %q", out.String(), tc.wantOut)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("markers = %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("marker[%d] = %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestMarkerScannerNonceAndTerminal: a completion marker counts only with
// the current nonce while the shell holds the terminal; a start marker
// needs the nonce alone (the command may hold the terminal by the time it
// is scanned). Whatever does not count leaves the command running.
func TestMarkerScannerNonceAndTerminal(t *testing.T) {
	const prev, cur = "prevNonce01", "currNonce02"
	done := func(n string) string { return "\x1b]6973;W;" + n + ";0;/etc\a" }
	start := func(n string) string { return "\x1b]6973;S;" + n + "\a" }
	note := string(refusedNote(marker{exitCode: 0, cwd: "/etc"}))
	tests := []struct {
		name     string
		in       string
		terminal func() bool
		wantOut  string
		want     []marker
	}{
		{"current nonce, shell has the terminal", done(cur), func() bool { return true }, "", []marker{{cwd: "/etc"}}},
		{"current nonce, a job has the terminal", done(cur), func() bool { return false }, note, nil},
		{"current nonce, terminal unknown", done(cur), nil, note, nil},
		{"previous nonce, shell has the terminal", done(prev), func() bool { return true }, note, nil},
		{"previous nonce, a job has the terminal", done(prev), func() bool { return false }, note, nil},
		{"start, a job has the terminal", start(cur) + "out", func() bool { return false }, "out", []marker{{start: true}}},
		{"start with the previous nonce", start(prev), func() bool { return true }, start(prev), nil},
		{"cwd cannot drive the terminal", "\x1b]6973;W;x;1;/a\x1b[2J\a", func() bool { return true },
			"[winx: ignored a completion marker (exit 1, cwd \"/a\\x1b[2J\") the shell did not print]\r\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			s := &markerScanner{nonce: cur}
			if tc.terminal != nil {
				s.shellHasTerminal = func() bool { asked = true; return tc.terminal() }
			}
			var out strings.Builder
			var got []marker
			s.scan([]byte(tc.in), func(p []byte) { out.Write(p) }, func(m marker) { got = append(got, m) })
			if out.String() != tc.wantOut {
				t.Errorf("output = %q, want %q", out.String(), tc.wantOut)
			}
			if len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
				t.Errorf("markers = %v, want %v", got, tc.want)
			}
			if asked && !strings.Contains(tc.in, cur) {
				t.Errorf("the terminal was asked about a marker with another nonce")
			}
		})
	}
}

// TestMarkerScannerNonceChange: the nonce changes between reads (a new
// command was typed); a marker held back in pending is judged by the
// nonce of the read that completes it.
func TestMarkerScannerNonceChange(t *testing.T) {
	s := &markerScanner{nonce: "old", shellHasTerminal: func() bool { return true }}
	var got []marker
	var out strings.Builder
	scan := func(p string) {
		s.scan([]byte(p), func(p []byte) { out.Write(p) }, func(m marker) { got = append(got, m) })
	}
	scan("\x1b]6973;W;old;0;/a\a\x1b]6973;W;old;1;")
	s.nonce = "new"
	scan("/b\a\x1b]6973;W;new;2;/c\a")
	want := []marker{{exitCode: 0, cwd: "/a"}, {exitCode: 2, cwd: "/c"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("markers = %v, want %v", got, want)
	}
	if wantOut := string(refusedNote(marker{exitCode: 1, cwd: "/b"})); out.String() != wantOut {
		t.Errorf("output = %q, want %q", out.String(), wantOut)
	}
}

func TestNewNonce(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := newNonce()
		if len(n) != nonceLen || strings.Trim(n, nonceAlphabet) != "" {
			t.Fatalf("newNonce() = %q, want %d characters of %q", n, nonceLen, nonceAlphabet)
		}
		if seen[n] {
			t.Fatalf("newNonce() repeated %q", n)
		}
		seen[n] = true
	}
	// Typed unquoted, it must stay one shell word that means itself.
	if line := commandLine("echo hi", "", "AZaz09AZaz0"); line != "\x15\\__winx_s AZaz09AZaz0; eval $'echo hi'\n" {
		t.Errorf("commandLine = %q", line)
	}
}

func TestMarkerScannerRunaway(t *testing.T) {
	s := &markerScanner{nonce: "n"}
	var out strings.Builder
	in := "\x1b]6973;W;" + strings.Repeat("x", maxMarkerLen+10)
	s.scan([]byte(in), func(p []byte) { out.Write(p) }, func(marker) { t.Error("unexpected marker") })
	if len(s.pending) >= maxMarkerLen {
		t.Errorf("pending holds %d bytes, want fewer than %d", len(s.pending), maxMarkerLen)
	}
}

func FuzzMarkerScanner(f *testing.F) {
	f.Add([]byte("out\x1b]6973;W;n;0;/tmp\aafter"), 3)
	f.Add([]byte("\x1b]6973;W;"), 1)
	f.Add([]byte("\x1b]6973;W;x;0;\x01\x02\a\x1b]6973;W;n;1;/\a"), 2)
	f.Fuzz(func(t *testing.T, in []byte, chunk int) {
		if chunk <= 0 {
			chunk = 1
		}
		fg := len(in)%2 == 0
		s := &markerScanner{nonce: "n", shellHasTerminal: func() bool { return fg }}
		total := 0
		for i := 0; i < len(in); i += chunk {
			end := min(i+chunk, len(in))
			s.scan(in[i:end], func(p []byte) { total += len(p) }, func(marker) {})
		}
		// A refused completion marker becomes a note: a fixed text and
		// its cwd quoted (at most 4 bytes for one).
		limit := 4*len(in) + len(refusedNote(marker{}))*bytes.Count(in, markerPrefix)
		if total+len(s.pending) > limit {
			t.Fatalf("emitted %d + pending %d bytes from %d", total, len(s.pending), len(in))
		}
		if len(s.pending) > maxMarkerLen {
			t.Fatalf("pending %d bytes", len(s.pending))
		}
	})
}

func TestRefusedNoteText(t *testing.T) {
	if got := string(refusedNote(marker{cwd: "/etc"})); got != refusedEtc+"\r\n" {
		t.Errorf("refusedNote = %q, want %q", got, refusedEtc+"\r\n")
	}
}
