// Package redact replaces secrets in text that leaves the process with
// "[REDACTED:<rule>]". It owns the rule set and the replacement; it does not
// decide whether redaction is on (callers read WINX_NO_REDACT and pass the
// answer to New) and it keeps no state between calls.
//
// Each rule finds its secrets in the original text with a hand-written
// scanner: a literal found with strings.Index, then bounded checks of the
// bytes around it. Every scanner is linear in the length of the text, so
// redaction is linear too, whatever the input (see the pathological inputs in
// the tests and benchmarks). The secrets that all rules find are merged where
// they overlap and each merged region is replaced once, named after the rule
// of its leftmost secret (the earlier rule in Rules on a tie). A region whose
// text already is a placeholder is left alone, so redacting twice gives the
// same text as redacting once.
//
// The rules prefer redacting too much to too little (a PEM private key with
// no END line is redacted to the end of the text) but avoid ordinary text:
// tokens with a short or common lead ("sk-", "AKIA", "eyJ", "Bearer") must
// start at a word boundary, generic shapes need a digit, and JWT segments,
// API key bodies and bearer tokens have minimum lengths.
//
// Redacting twice gives the same text as redacting once, which constrains
// the scanners: a decision must not change when a neighbouring secret has
// become a placeholder. So a placeholder counts as a word at token
// boundaries, ends a URL's authority, and is never a bracketed hint.
package redact

import (
	"cmp"
	"slices"
	"strings"
)

// Redactor replaces secrets in text. The zero value and a nil *Redactor
// redact; only New(true) returns one that does not.
type Redactor struct {
	disabled bool // set by New; never changed
}

// New returns a Redactor. When disabled is true (the caller saw
// WINX_NO_REDACT=1), String returns its input unchanged.
func New(disabled bool) *Redactor {
	return &Redactor{disabled: disabled}
}

// String returns s with every secret replaced by "[REDACTED:<rule name>]",
// and the number of replacements made. For the url-credentials,
// aws-secret-access-key and bearer-token rules only the secret part is
// replaced: "https://user:[REDACTED:url-credentials]@host".
func (r *Redactor) String(s string) (string, int) {
	if r != nil && r.disabled {
		return s, 0
	}
	return replace(s, find(s))
}

// replace returns s with each merged region of spans (sorted as find sorts
// them) replaced by its placeholder, and the number of replacements.
func replace(s string, spans []span) (string, int) {
	if len(spans) == 0 {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s))
	last, n := 0, 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].start < cur.end; i++ {
			cur.end = max(cur.end, spans[i].end)
		}
		b.WriteString(s[last:cur.start])
		b.WriteString(placeholder(rules[cur.rule].Name))
		last = cur.end
		n++
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// span is one secret: s[start:end], found by rules[rule].
type span struct {
	start, end int
	rule       int
}

// find returns every secret that any rule finds in s, sorted by start and
// then by rule order. Spans may overlap; secrets that are already
// placeholders are left out.
func find(s string) []span {
	return findIn(s, filter.present(s))
}

// findIn is find with only the matchers of the set run (filter's bits).
func findIn(s string, set uint64) []span {
	var spans []span
	for k, fm := range filter.matchers {
		if set&(1<<k) == 0 {
			continue
		}
		fm.m.find(s, func(start, end int) {
			if !isPlaceholder(s[start:end]) {
				spans = append(spans, span{start: start, end: end, rule: fm.rule})
			}
		})
	}
	slices.SortFunc(spans, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.rule, b.rule))
	})
	return spans
}

const (
	placeholderPrefix = "[REDACTED:"
	placeholderSuffix = "]"
)

// placeholder returns the text that replaces a secret found by the rule.
func placeholder(rule string) string {
	return placeholderPrefix + rule + placeholderSuffix
}

// isPlaceholder reports whether s is exactly the placeholder of some rule.
func isPlaceholder(s string) bool {
	name, ok := strings.CutPrefix(s, placeholderPrefix)
	if !ok {
		return false
	}
	name, ok = strings.CutSuffix(name, placeholderSuffix)
	if !ok {
		return false
	}
	for _, r := range rules {
		if r.Name == name {
			return true
		}
	}
	return false
}
