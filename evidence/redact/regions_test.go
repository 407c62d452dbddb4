package redact

import (
	"strings"
	"testing"
)

// Regions names exactly what String replaces: rebuilding the text from
// the regions gives String's answer.
func TestRegionsMatchString(t *testing.T) {
	tok := "ghp_" + strings.Repeat("a1B2", 9)
	for _, s := range []string{"", "plain", "a " + tok + " b " + tok, "https://u:pw1234@example.com/x", "[REDACTED:github-token] " + tok} {
		r := New(false)
		want, _ := r.String(s)
		var b strings.Builder
		at := 0
		for _, g := range r.Regions(s) {
			b.WriteString(s[at:g.Start])
			b.WriteString(g.Placeholder)
			at = g.End
		}
		b.WriteString(s[at:])
		if b.String() != want {
			t.Errorf("Regions(%q) rebuild %q, String %q", s, b.String(), want)
		}
	}
	if New(true).Regions("x "+tok) != nil || !New(true).Disabled() || New(false).Disabled() {
		t.Errorf("a disabled Redactor reports regions or is not Disabled")
	}
}
