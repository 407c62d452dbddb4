package guardian

import (
	"strings"
	"testing"
)

// TestPersonRecord: the command lines a person ran are told from the keys
// they typed; input to programs (or to a prompt that does not echo) is
// counted, never recorded.
func TestPersonRecord(t *testing.T) {
	type typed struct {
		keys     string
		atPrompt bool
	}
	tests := []struct {
		name  string
		typed []typed
		want  []string // in the note, in order
		not   []string // never in the note
	}{
		{"a plain line", []typed{{"echo hi\r", true}}, []string{`command lines run: "echo hi"`}, nil},
		{"backspace and Ctrl-U", []typed{{"ecx\x7fho ok\r", true}, {"rm -rf x\x15ls\r", true}}, []string{`"echo ok", "ls"`}, []string{"rm -rf"}},
		{"arrow keys make it approximate", []typed{{"\x1b[Aecho\r", true}}, []string{`"echo (edited at the terminal; approximate)"`}, nil},
		{"a password is only counted", []typed{{"sudo true\r", true}, {"hunter2\r", false}}, []string{`"sudo true"`, "1 line(s) typed to running programs"}, []string{"hunter2"}},
		{"Ctrl-C drops the line", []typed{{"danger\x03", true}, {"\r", true}}, []string{"no command line was run"}, []string{"danger"}},
		{"keys split over writes", []typed{{"ec", true}, {"ho split\r", true}}, []string{`"echo split"`}, nil},
		{"bounded", []typed{{strings.Repeat("true\r", maxPersonLines+3), true}}, []string{"and 3 more"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p person
			for _, k := range tc.typed {
				p.record([]byte(k.keys), k.atPrompt)
			}
			p.finishLine(false)
			note := p.note()
			for _, w := range tc.want {
				if !strings.Contains(note, w) {
					t.Errorf("note = %q, want it to say %q", note, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(note, n) {
					t.Errorf("note = %q, must not say %q", note, n)
				}
			}
		})
	}
}

// TestPersonLineCut: a line longer than the note's bound is cut.
func TestPersonLineCut(t *testing.T) {
	var p person
	p.record([]byte("echo "+strings.Repeat("x", 1000)+"\r"), true)
	if n := p.note(); len(n) > maxPersonLineBytes+300 || !strings.Contains(n, "…") {
		t.Errorf("note of a long line = %d bytes %q, want it cut", len(n), n)
	}
}
