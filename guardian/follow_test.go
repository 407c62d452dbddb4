package guardian

import (
	"strings"
	"testing"
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
