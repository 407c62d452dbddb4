package guardian

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestOutcomeMergeCutsOnCharacters: the budget cut never splits a
// multi-byte character.
func TestOutcomeMergeCutsOnCharacters(t *testing.T) {
	acc := &Outcome{Running: true}
	acc.Output.Text = strings.Repeat("é", DefaultOutputBudget/2)
	next := &Outcome{}
	next.Output.Text = "xy" // with the newline, an odd overflow: a cut inside a character
	acc.Merge(next)
	if !utf8.ValidString(acc.Output.Text) || !strings.HasSuffix(acc.Output.Text, "xy") || len(acc.Output.Text) > DefaultOutputBudget {
		t.Errorf("merged text of %d bytes, valid UTF-8 %v", len(acc.Output.Text), utf8.ValidString(acc.Output.Text))
	}
	if acc.Output.DroppedBytes == 0 {
		t.Error("the dropped head was not counted")
	}
}

// TestOpenLineSentOnce: a line still being written when a look is taken
// is sent again by the next look; joining the two looks (Merge, as a
// follow or a redelivery does) keeps only its current version, and a
// prompt handed out as awaiting input is not an open line.
func TestOpenLineSentOnce(t *testing.T) {
	s := newTestSession(t, "")
	first := run(t, s, `printf 'one\nab'; sleep 1; printf 'cd\n'`, 500*time.Millisecond)
	if !first.Running || !strings.HasSuffix(first.Output.Text, "ab") || !first.Output.Open {
		t.Fatalf("first look = %+v, want running with the open line ab", first.Output)
	}
	next, err := s.Poll(t.Context(), first.Generation, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if next.Output.Open {
		t.Errorf("a finished command has an open line: %+v", next.Output)
	}
	first.Merge(next)
	if first.Output.Text != "one\nabcd" {
		t.Errorf("merged looks = %q, want %q", first.Output.Text, "one\nabcd")
	}

	prompt := run(t, s, `read -p 'Name? ' v; echo got=$v`, 10*time.Second)
	if !prompt.AwaitingInput || prompt.Output.Open {
		t.Fatalf("prompt look = awaiting %v, open %v; want awaiting and not open", prompt.AwaitingInput, prompt.Output.Open)
	}
	answer, err := s.SendText(t.Context(), "bob", true, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	prompt.Merge(answer)
	if strings.Count(prompt.Output.Text, "Name?") != 1 || !strings.Contains(prompt.Output.Text, "got=bob") {
		t.Errorf("prompt and answer = %q, want the prompt once and got=bob", prompt.Output.Text)
	}
}
