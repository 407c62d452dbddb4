package guardian

import (
	"errors"
	"strings"
	"testing"
)

// TestRecognizerMarkerForms: an unprefixed marker is a regular expression
// (the Rust Winx's form), re: still marks one, lit: marks a literal.
func TestRecognizerMarkerForms(t *testing.T) {
	for _, tc := range []struct {
		name, marker, screen string
		want                 TurnState
	}{
		{"winx regexp", `APPROVE\?`, "Plan ready. APPROVE?", TurnAwaitingApproval},
		{"winx regexp no match", `APPROVE\?`, "APPROVED", TurnNone},
		{"anchored", `\[y/N\]\s*$`, "Delete? [y/N] ", TurnAwaitingApproval},
		{"re prefix", `re:^Allow\?`, "Allow?", TurnAwaitingApproval},
		{"literal", `lit:[y/N]`, "Delete? [y/N]", TurnAwaitingApproval},
		{"literal is not a class", `lit:[y/N]`, "yes", TurnNone},
	} {
		r, err := ParseTurnRecognizer(`{"awaiting_approval": [` + jsonString(tc.marker) + `]}`)
		if err != nil {
			t.Fatalf("%s: ParseTurnRecognizer: %v", tc.name, err)
		}
		if got := r.Classify(strings.Split(tc.screen, "\n")); got != tc.want {
			t.Errorf("%s: marker %q on %q = %q, want %q", tc.name, tc.marker, tc.screen, got, tc.want)
		}
	}
	for _, bad := range []string{`APPROVE(`, `re:(`, `lit:`, ``} {
		_, err := ParseTurnRecognizer(`{"busy": [` + jsonString(bad) + `]}`)
		if !errors.Is(err, ErrRecognizerConfig) || (bad != "" && bad != "lit:" && !strings.Contains(err.Error(), bad)) {
			t.Errorf("marker %q: %v, want ErrRecognizerConfig naming the marker", bad, err)
		}
	}
}

func jsonString(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
