package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// unfiltered is String with every matcher run, the prefilter bypassed.
func unfiltered(s string) (string, int) { return replace(s, findIn(s, filter.all)) }

// TestPrefilterNeverSkipsASecret runs each matcher alone on every case of
// the rule table: whenever it finds a secret, the prefilter must have let it
// run. Every rule must find something in the table, so that each one's
// literals are checked against real examples.
func TestPrefilterNeverSkipsASecret(t *testing.T) {
	seen := make(map[int]bool)
	for _, tt := range redactCases {
		present := filter.present(tt.in)
		for k, fm := range filter.matchers {
			found := false
			fm.m.find(tt.in, func(int, int) { found = true })
			if !found {
				continue
			}
			seen[fm.rule] = true
			if present&(1<<k) == 0 {
				t.Errorf("%s: rule %s finds a secret in %q, but the prefilter skips it (literals %q)",
					tt.name, rules[fm.rule].Name, tt.in, fm.m.literals())
			}
		}
		got, n := New(false).String(tt.in)
		want, wn := unfiltered(tt.in)
		if got != want || n != wn {
			t.Errorf("%s: prefiltered %q (%d), unfiltered %q (%d)", tt.name, got, n, want, wn)
		}
	}
	for i, r := range rules {
		if !seen[i] {
			t.Errorf("no case of the table is found by rule %s", r.Name)
		}
	}
}

// TestPrefilterMatchesUnfiltered compares the prefiltered and the unfiltered
// redaction on random texts: random bytes and words, the fragments the fuzz
// target composes from (secrets, their parts and contexts), and secrets
// embedded at random places, near the text's ends included.
func TestPrefilterMatchesUnfiltered(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2026))
	words := []string{"the", "secret", "access", "key", "github", "gh", "sk", "rk", "xox", "ey", "BEGIN", "Bearer", "bearer", "ECRET", "AKI", "AIz"}
	secrets := []string{awsKeyID, awsSTSKeyID, awsSecret, ghToken, ghPAT, anthropicKey, openAIKey, openAIProj, googleKey,
		slackToken, stripeLive, stripeRK, stripeTest, jwt, "Bearer " + bearer, "aws_secret_access_key = " + awsSecret,
		pem("RSA PRIVATE KEY"), "https://u:pw" + "1234@host/x", "-----BEGIN PRIVATE KEY-----\nMII",
		gitlabPAT, gitlabRoute, npmToken, pypiToken, hfToken, sendgridKey, doToken}
	for iter := 0; iter < 3000; iter++ {
		var b strings.Builder
		for n := rng.IntN(40); n > 0; n-- {
			switch rng.IntN(6) {
			case 0:
				b.WriteByte(byte(rng.IntN(256)))
			case 1:
				b.WriteString(words[rng.IntN(len(words))])
			case 2:
				b.WriteString(fragments[rng.IntN(len(fragments))])
			case 3:
				s := secrets[rng.IntN(len(secrets))]
				if rng.IntN(3) == 0 { // a cut secret: a prefix or a suffix
					if k := rng.IntN(len(s)); rng.IntN(2) == 0 {
						s = s[:k]
					} else {
						s = s[k:]
					}
				}
				b.WriteString(s)
			case 4:
				b.WriteString(" \n\t=:\"'"[rng.IntN(7):][:1])
			default:
				b.WriteString(strings.Repeat("x", rng.IntN(8)))
			}
		}
		in := b.String()
		got, n := New(false).String(in)
		want, wn := unfiltered(in)
		if got != want || n != wn {
			t.Fatalf("prefiltered and unfiltered differ on %q:\n got %q (%d)\nwant %q (%d)", in, got, n, want, wn)
		}
	}
}

// BenchmarkPresent measures the prefilter's pass over 90 KB of code.
func BenchmarkPresent(b *testing.B) {
	s := strings.Repeat("\tx := compute(i) // a typical line of code, checked\n", 1800)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		filter.present(s)
	}
}

// TestPrefilterFindsLiteralsAtAnyOffset puts every literal at even and odd
// offsets, at the start and at the very end of the text: the pass looks at
// every other byte and must still see each one.
func TestPrefilterFindsLiteralsAtAnyOffset(t *testing.T) {
	for k, fm := range filter.matchers {
		for _, l := range fm.m.literals() {
			for pad := 0; pad < 4; pad++ {
				for _, s := range []string{strings.Repeat(".", pad) + l, l + strings.Repeat(".", pad), strings.Repeat("x", pad) + l + strings.Repeat("y", pad)} {
					if filter.present(s)&(1<<k) == 0 {
						t.Errorf("literal %q of rule %s not seen in %q", l, rules[fm.rule].Name, s)
					}
				}
			}
		}
	}
}

// TestPrefilterGivesUpOnDenseText: a text that marks a pair at most places
// runs every matcher (the prefilter would cost more than it saves), and
// the answer is still the unfiltered one.
func TestPrefilterGivesUpOnDenseText(t *testing.T) {
	for _, s := range []string{strings.Repeat("sk-", 5000), strings.Repeat("AIza", 4000) + " " + openAIKey, strings.Repeat("eyJ.", 3000)} {
		if got := filter.present(s); got != filter.all {
			t.Errorf("present(%.20q...) = %b, want every matcher", s, got)
		}
		got, n := New(false).String(s)
		want, wn := unfiltered(s)
		if got != want || n != wn {
			t.Errorf("%.20q...: prefiltered %d replacements, unfiltered %d", s, n, wn)
		}
	}
	// Ordinary code stays under the limit: only the matchers of the
	// literals it holds run.
	code := strings.Repeat("\tresult := compute(value) // check the spec before it is used\n", 2000)
	if got := filter.present(code); got == filter.all {
		t.Errorf("present gave up on ordinary code")
	}
}
