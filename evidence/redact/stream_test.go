package redact

import (
	"strings"
	"testing"
)

const streamToken = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"

// A running line never shows the start of a secret whose rest is still to
// come, whatever the prefix; complete text is shown redacted.
func TestStableHoldsSecretStarts(t *testing.T) {
	r := New(false)
	for _, tc := range []struct{ partial, emit string }{
		{"progress 45%", "progress 45%"},
		{"token: gh", "token: "},
		{"token: ghp_abc", "token: "},
		{"xghp_abc", ""},
		{"key github_pat_11AB", "key "},
		{"export OPENAI=sk-pr", "export "},
		{"id AKIA12", "id "},
		{"jwt eyJhbGciOi", "jwt "},
		{"-----BEG", ""},
		{"curl https://user:pa", "curl "},
		{"aws_secret_access_key=AbC", ""},
		{"aws_secret_access_key = AbC", ""},
		{"Authorization: Bearer abc", "Authorization: "},
		{"Authorization: Bear", "Authorization: "},
		{"slack xoxb-12", "slack "},
		{"done " + streamToken + " ok", "done [REDACTED:github-token] ok"},
	} {
		emit, held := r.Stable(tc.partial)
		if emit != tc.emit {
			t.Errorf("Stable(%q) = %q, want %q", tc.partial, emit, tc.emit)
		}
		if emit == tc.partial && held != 0 || strings.Contains(emit, "ghp_") {
			t.Errorf("Stable(%q) = %q held %d", tc.partial, emit, held)
		}
	}
	if emit, held := New(true).Stable("ghp_abc"); emit != "ghp_abc" || held != 0 {
		t.Errorf("disabled Stable = %q, %d", emit, held)
	}
	// Every prefix of a line with a token: nothing of the token shows.
	line := "x=1 " + streamToken + " tail"
	for i := range len(line) + 1 {
		emit, _ := r.Stable(line[:i])
		if strings.Contains(emit, "ghp_") || strings.Contains(emit, "0123456789abc") {
			t.Errorf("Stable(%q) = %q shows part of the token", line[:i], emit)
		}
	}
}

// A private key block across lines is redacted line by line, and the
// lines after END are redacted as usual.
func TestLinesPrivateKey(t *testing.T) {
	l := New(false).Lines()
	in := []string{"before", "-----BEGIN RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA", "abcdef", "-----END RSA PRIVATE KEY----- after " + streamToken, "plain"}
	var out []string
	for i, s := range in {
		if i == 3 {
			if emit, held := l.Partial("abc"); emit != "" || held != 3 {
				t.Errorf("Partial inside a key = %q, %d", emit, held)
			}
		}
		o, _ := l.Line(s)
		out = append(out, o)
	}
	want := []string{"before", "[REDACTED:private-key]", "[REDACTED:private-key]", "[REDACTED:private-key]", "[REDACTED:private-key] after [REDACTED:github-token]", "plain"}
	if strings.Join(out, "\n") != strings.Join(want, "\n") {
		t.Errorf("Lines = %q, want %q", out, want)
	}
	var nilR *Redactor
	if o, n := nilR.Lines().Line(streamToken); n != 1 || o != "[REDACTED:github-token]" {
		t.Errorf("nil Redactor Lines = %q, %d", o, n)
	}
}
