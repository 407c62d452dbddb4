package redact

import (
	"cmp"
	"slices"
	"strings"
	"testing"
)

// FuzzRedact checks, for any text: no panic; the answer is the one of the
// unfiltered search (every matcher run); redacting the output again
// changes nothing; one placeholder per merged region; and no secret that a
// rule found in the input is left in the output (unless the same text also
// occurs in the input outside every redacted region, where it is not a
// secret by any rule's reading).
func FuzzRedact(f *testing.F) {
	for _, tt := range redactCases {
		f.Add(tt.in)
	}
	for _, in := range pathological(64) {
		f.Add(in)
	}
	for _, in := range []string{
		"-----BEGIN ", "-----BEGIN  PRIVATE KEY-----", "://:@", "a://:@@", "x://u:[REDACTED:jwt]@h",
		"eyJ.", "eyJaaaaaaaaaa.aaaaaaaaaa.aaaaaaaaaa", "Bearer \t", "secretaccesskey[", "SECRET_ACCESS_KEY [",
		"ghp_" + strings.Repeat("A", 36) + "_", "sk-ant-" + strings.Repeat("9", 20), "\x00\xff\xfe",
		r("private-key") + "-----BEGIN PRIVATE KEY-----",
		// Each of these redacted twice once differed from redacted once.
		"secret_access_key " + jwt + " = " + awsSecret,
		"x://" + jwt + ":pw@h",
		"x://u:pw@h-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----@z",
		"x://u:secret_access_key=" + awsSecret + "@h",
		"x://u:-----BEGIN PRIVATE KEY-----\nb\n-----END PRIVATE KEY-----x@h",
		googleKey[:38] + "-" + ghToken,
	} {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		// The checks below are quadratic in the worst case; the redactor's
		// own speed on large inputs is the benchmarks' business.
		if len(in) > maxFuzzInput {
			return
		}
		checkRedact(t, in)
		checkRedact(t, compose(in[:min(len(in), maxFuzzProgram)]))
	})
}

// maxFuzzInput bounds the inputs FuzzRedact checks, and maxFuzzProgram the
// part of them that compose turns into text (up to about 250 bytes each).
const (
	maxFuzzInput   = 4 << 10
	maxFuzzProgram = 128
)

// fragments are the pieces compose builds text from: secrets and parts of
// secrets, the contexts the rules look at, and the bytes at their edges.
var fragments = []string{
	awsKeyID, awsSecret, ghToken, anthropicKey, openAIKey, googleKey, slackToken, stripeLive, jwt, bearer,
	gitlabPAT, npmToken, pypiToken, hfToken, sendgridKey, doToken, "glpat-", "npm_", "hf_", "SG.", "dop_v1_",
	"-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----\n",
	"://", "x://", "u:", ":", "@", "/", "[", "]", " ", "\n", ".", "-", "_", "=", "\"", "x", "1",
	"Bearer ", "aws_secret_access_key", " = ", "[None]: ", "eyJ", "AKIA", "AIza", "sk-", "ghp_",
	r("jwt"), r("url-credentials"), r("aws-secret-access-key"), r("private-key"), "[REDACTED:",
}

// compose reads each byte of program as the index of a fragment, so that the
// fuzzer explores how secrets and their contexts combine.
func compose(program string) string {
	var b strings.Builder
	for i := 0; i < len(program); i++ {
		b.WriteString(fragments[int(program[i])%len(fragments)])
	}
	return b.String()
}

// checkRedact checks the properties of FuzzRedact on one input.
func checkRedact(t *testing.T, in string) {
	t.Helper()
	red := New(false)
	{
		out, n := red.String(in)

		again, n2 := red.String(out)
		if again != out || n2 != 0 {
			t.Fatalf("not idempotent:\nin    %q\nonce  %q\ntwice %q (%d replacements)", in, out, again, n2)
		}

		if want, wn := unfiltered(in); out != want || n != wn {
			t.Fatalf("the prefilter changed the answer on %q:\n got %q (%d)\nwant %q (%d)", in, out, n, want, wn)
		}

		spans := find(in)
		regions := merge(spans)
		if n != len(regions) {
			t.Fatalf("String(%q) made %d replacements, want %d (one per merged region)", in, n, len(regions))
		}

		// Mask every placeholder, so that a secret can only be found in text
		// that came from the input outside the redacted regions.
		masked := out
		for _, rule := range rules {
			masked = strings.ReplaceAll(masked, placeholder(rule.Name), "\x00")
		}
		checked := make(map[string]bool)
		for _, sp := range spans {
			secret := in[sp.start:sp.end]
			if checked[secret] {
				continue
			}
			checked[secret] = true
			if secret == "" {
				t.Fatalf("rule %s found an empty secret at %d in %q", rules[sp.rule].Name, sp.start, in)
			}
			if strings.Contains(secret, placeholderPrefix) || strings.Contains(secret, "\x00") ||
				occursOutside(in, secret, regions) {
				continue
			}
			if strings.Contains(masked, secret) {
				t.Fatalf("output still holds secret %q found by %s:\nin  %q\nout %q", secret, rules[sp.rule].Name, in, out)
			}
		}
	}
}

// merge returns the regions String replaces: overlapping spans joined.
func merge(spans []span) []span {
	var regions []span
	for _, sp := range spans {
		if k := len(regions) - 1; k >= 0 && sp.start < regions[k].end {
			regions[k].end = max(regions[k].end, sp.end)
			continue
		}
		regions = append(regions, sp)
	}
	return regions
}

// occursOutside reports whether sub occurs somewhere in s not wholly inside
// one of the regions, which are sorted and disjoint.
func occursOutside(s, sub string, regions []span) bool {
	for i := 0; ; i++ {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return false
		}
		i += j
		// The last region starting at or before i is the only one that can
		// hold the occurrence.
		k, found := slices.BinarySearchFunc(regions, i, func(rg span, i int) int { return cmp.Compare(rg.start, i) })
		if !found {
			k--
		}
		if k < 0 || i+len(sub) > regions[k].end {
			return true
		}
	}
}
