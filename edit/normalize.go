package edit

// The line and text normalizations behind the matcher's tolerances.

import (
	"strings"
	"unicode/utf8"
)

func normLine(s string, f fix) string {
	if f&fixPunct != 0 {
		s = asciiPunct(s)
	}
	if f&fixIndent != 0 {
		s = strings.TrimLeft(s, " \t")
	}
	if f&fixTrailing != 0 {
		s = strings.TrimRight(s, " \t")
	}
	return s
}

func isBlank(s string) bool { return strings.TrimLeft(s, " \t") == "" }

func leading(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// indentDelta finds the uniform indentation change between SEARCH lines
// raw(j) and original lines idx[j]; blank lines do not count.
func indentDelta(m *matcher, idx []int, raw func(int) string) (indent, bool) {
	var d indent
	seen := false
	for j, oi := range idx {
		o, s := m.lines[oi].text, raw(j)
		if isBlank(o) || isBlank(s) {
			continue
		}
		lo, ls := leading(o), leading(s)
		var cur indent
		switch {
		case strings.HasSuffix(lo, ls):
			cur.add = lo[:len(lo)-len(ls)]
		case strings.HasSuffix(ls, lo):
			cur.del = ls[:len(ls)-len(lo)]
		default:
			return indent{}, false
		}
		if seen && cur != d {
			return indent{}, false
		}
		d, seen = cur, true
	}
	return d, true
}

func reindent(l string, d indent) string {
	if isBlank(l) {
		return l
	}
	if d.add != "" {
		return d.add + l
	}
	if d.del != "" {
		if rest, ok := strings.CutPrefix(l, d.del); ok {
			return rest
		}
		// Less indented than the removed prefix: remove what there is.
		lead := leading(l)
		return l[min(len(lead), len(d.del)):]
	}
	return l
}

// stripNumbers removes ReadFiles line-number prefixes: every line must be
// spaces, 1-9 digits and then a tab ("  12\tcode") or a colon and an
// optional space ("12: code"), all in one style; a line of only the number
// (an empty line whose tab was trimmed) fits either. With consecutive the
// numbers must count up by one. It returns the stripped lines and the range
// the numbers name.
func stripNumbers(lines []string, consecutive bool) ([]string, *Anchor, bool) {
	if len(lines) == 0 {
		return nil, nil, false
	}
	const (
		anyStyle = iota
		tabStyle
		colonStyle
	)
	style := anyStyle
	out := make([]string, len(lines))
	first, prev := 0, 0
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		j := 0
		for j < len(t) && j <= maxAnchorDigits && t[j] >= '0' && t[j] <= '9' {
			j++
		}
		n, ok := parseLineNumber(t[:j])
		if !ok {
			return nil, nil, false
		}
		rest, st := t[j:], anyStyle
		switch {
		case rest == "":
		case rest[0] == '\t':
			rest, st = rest[1:], tabStyle
		case rest[0] == ':':
			rest, st = strings.TrimPrefix(rest[1:], " "), colonStyle
		default:
			return nil, nil, false
		}
		if st != anyStyle {
			if style != anyStyle && style != st {
				return nil, nil, false
			}
			style = st
		}
		if consecutive && i > 0 && n != prev+1 {
			return nil, nil, false
		}
		if i == 0 {
			first = n
		}
		prev = n
		out[i] = rest
	}
	if style == anyStyle {
		return nil, nil, false
	}
	return out, &Anchor{Start: first, End: first + len(lines) - 1}, true
}

func hasEscapes(lines []string) bool {
	for _, l := range lines {
		if strings.Contains(l, `\"`) || strings.Contains(l, `\'`) {
			return true
		}
	}
	return false
}

func unescapeLines(lines []string) []string {
	r := strings.NewReplacer(`\"`, `"`, `\'`, `'`)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = r.Replace(l)
	}
	return out
}

// punctASCII returns the ASCII form of typographic punctuation models and
// word processors substitute, or "" if r is not one of them.
func punctASCII(r rune) string {
	switch r {
	case '\u2018', '\u2019', '\u201a', '\u201b', '\u2032':
		return "'"
	case '\u201c', '\u201d', '\u201e', '\u201f', '\u2033':
		return `"`
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return "-"
	case '\u2026':
		return "..."
	case '\u00a0':
		return " "
	}
	return ""
}

// asciiPunct replaces typographic punctuation by ASCII. Invalid UTF-8 is
// copied through unchanged.
func asciiPunct(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	changed := false
	for j := i; j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		if a := punctASCII(r); a != "" {
			if !changed {
				b.Grow(len(s))
				b.WriteString(s[:j])
				changed = true
			}
			b.WriteString(a)
		} else if changed {
			b.WriteString(s[j : j+size])
		}
		j += size
	}
	if !changed {
		return s
	}
	return b.String()
}
