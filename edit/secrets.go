package edit

// Secrets in edits. ReadFiles shows a file with its secrets replaced by
// "[REDACTED:<rule>]" (evidence/redact), so the text a model sends back in
// SEARCH blocks, replacements and whole-file contents holds placeholders
// where the file holds secrets. The engine therefore matches on the same
// redacted view of the file, and turns placeholders back into the bytes
// they stand for before anything is written: a placeholder in new text
// becomes the secret it replaced in the region the edit rewrites. A
// placeholder that stands for no such secret would write the placeholder
// over the real secret (or invent one); it is refused with a
// *SecretPlaceholderError, and nothing is written.

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"winx/evidence"
	"winx/evidence/redact"
)

// ErrSecretPlaceholder: new text holds a redaction placeholder that stands
// for no secret of the region it replaces.
var ErrSecretPlaceholder = errors.New("edit: redaction placeholder")

// SecretPlaceholderError refuses an edit whose new text would write a
// redaction placeholder literally. Placeholder is the text found.
type SecretPlaceholderError struct {
	Path        string
	Placeholder string
	Msg         string
}

func (e *SecretPlaceholderError) Error() string {
	return fmt.Sprintf("edit: redaction placeholder: %s: %s %s", e.Path, e.Placeholder, e.Msg)
}

func (e *SecretPlaceholderError) Unwrap() error { return ErrSecretPlaceholder }

// maxPlaceholderName bounds the rule name of a placeholder-shaped text.
const maxPlaceholderName = 64

// placeholderAt reports the length of a placeholder-shaped text
// ("[REDACTED:" name "]", name of [A-Za-z0-9_-]) at s[i:], 0 if none. Any
// name counts, not only the rules' names: a made-up one must not pass.
func placeholderAt(s string, i int) int {
	if !strings.HasPrefix(s[i:], redact.PlaceholderPrefix) {
		return 0
	}
	j := i + len(redact.PlaceholderPrefix)
	for k := j; k < len(s) && k-j <= maxPlaceholderName; k++ {
		c := s[k]
		switch {
		case c == ']':
			if k == j {
				return 0
			}
			return k + 1 - i
		case isNameByte(c):
		default:
			return 0
		}
	}
	return 0
}

func isNameByte(c byte) bool {
	return c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// hasPlaceholder reports whether s holds a placeholder-shaped text.
func hasPlaceholder(s string) bool {
	for i := strings.Index(s, redact.PlaceholderPrefix); i >= 0; {
		if placeholderAt(s, i) > 0 {
			return true
		}
		n := strings.Index(s[i+1:], redact.PlaceholderPrefix)
		if n < 0 {
			return false
		}
		i += 1 + n
	}
	return false
}

// secretView is a file's original text and the redacted view ReadFiles
// showed of it, with the map between them.
type secretView struct {
	orig, view string
	// regs are the redacted regions, in order: orig[o0:o1] is shown as
	// view[v0:v1].
	regs []viewRegion
}

type viewRegion struct {
	o0, o1, v0, v1 int
	placeholder    string
}

// newSecretView builds the view of orig under r.
func newSecretView(r *redact.Redactor, orig string) *secretView {
	sv := &secretView{orig: orig, view: orig}
	rs := r.Regions(orig)
	if len(rs) == 0 {
		return sv
	}
	var b strings.Builder
	b.Grow(len(orig))
	at := 0
	for _, g := range rs {
		b.WriteString(orig[at:g.Start])
		v0 := b.Len()
		b.WriteString(g.Placeholder)
		sv.regs = append(sv.regs, viewRegion{o0: g.Start, o1: g.End, v0: v0, v1: b.Len(), placeholder: g.Placeholder})
		at = g.End
	}
	b.WriteString(orig[at:])
	sv.view = b.String()
	return sv
}

// toOrig maps a view offset that is not strictly inside a placeholder to
// the original offset; ok is false inside one.
func (sv *secretView) toOrig(v int) (o int, ok bool) {
	i := sort.Search(len(sv.regs), func(i int) bool { return sv.regs[i].v1 > v })
	// regs[i] is the first region ending after v.
	if i < len(sv.regs) && sv.regs[i].v0 < v {
		return 0, false
	}
	if i == 0 {
		return v, true
	}
	g := sv.regs[i-1]
	return g.o1 + (v - g.v1), true
}

// secretsIn returns the regions wholly inside orig[o0:o1].
func (sv *secretView) secretsIn(o0, o1 int) []viewRegion {
	var out []viewRegion
	for _, g := range sv.regs {
		if g.o0 >= o0 && g.o1 <= o1 {
			out = append(out, g)
		}
	}
	return out
}

// fill replaces the placeholders of text with the secrets of pool they
// stand for: the k-th occurrence of a placeholder gets the k-th secret of
// pool with that placeholder (any occurrence, when all of them are the same
// bytes). A placeholder that literal (the original region's own text)
// holds as such stays as it is. Anything else is refused.
func (sv *secretView) fill(path, text string, pool []viewRegion, literal string) (string, error) {
	if !hasPlaceholder(text) {
		return text, nil
	}
	var b strings.Builder
	used := map[string]int{}
	at := 0
	for i := 0; i < len(text); {
		n := 0
		if text[i] == '[' {
			n = placeholderAt(text, i)
		}
		if n == 0 {
			i++
			continue
		}
		p := text[i : i+n]
		var cands []string
		for _, g := range pool {
			if g.placeholder == p {
				cands = append(cands, sv.orig[g.o0:g.o1])
			}
		}
		k := used[p]
		used[p]++
		var secret string
		switch {
		case len(cands) > 0 && allSame(cands):
			secret = cands[0]
		case len(cands) > 0 && countPlaceholder(text, p) != len(cands):
			// Different secrets share the placeholder and the new text
			// keeps a different number of them: which is which cannot be
			// told, and guessing could move a secret to another place.
			return "", &SecretPlaceholderError{Path: path, Placeholder: p,
				Msg: fmt.Sprintf("appears %d times but the text it replaces holds %d different secrets of that kind; keep each of them, in order, or edit a smaller region", countPlaceholder(text, p), len(cands))}
		case len(cands) > 0:
			secret = cands[k]
		case strings.Contains(literal, p):
			secret = p // the file holds this text literally
		default:
			return "", &SecretPlaceholderError{Path: path, Placeholder: p,
				Msg: "stands for no secret in the text this edit replaces; writing it would put the placeholder in the file (include the line that holds the secret in the replaced text, or write the real value)"}
		}
		b.WriteString(text[at:i])
		b.WriteString(secret)
		i += n
		at = i
	}
	b.WriteString(text[at:])
	return b.String(), nil
}

// countPlaceholder counts the placeholder-shaped occurrences of p in text.
func countPlaceholder(text, p string) int {
	n := 0
	for i := 0; i < len(text); i++ {
		if text[i] == '[' {
			if m := placeholderAt(text, i); m > 0 {
				if text[i:i+m] == p {
					n++
				}
				i += m - 1
			}
		}
	}
	return n
}

func allSame(s []string) bool {
	for _, x := range s[1:] {
		if x != s[0] {
			return false
		}
	}
	return true
}

// literalText is what of orig[o0:o1] the file holds as plain text: those
// bytes with their secrets left out.
func (sv *secretView) literalText(o0, o1 int) string {
	var b strings.Builder
	at := o0
	for _, g := range sv.regs {
		if g.o0 >= o0 && g.o1 <= o1 {
			b.WriteString(sv.orig[at:g.o0])
			b.WriteByte(0) // a secret is not literal text
			at = g.o1
		}
	}
	if at < o1 {
		b.WriteString(sv.orig[at:o1])
	}
	return b.String()
}

// applySearch maps a search_replace applied to the view back to the
// original: unchanged text comes from the original, each block's
// replacement is filled from the secrets of the view text it replaced.
// A match whose edge cuts a placeholder is refused.
func (sv *secretView) applySearch(path string, a *Applied) (string, error) {
	ms := append([]Match(nil), a.Matches...)
	sort.Slice(ms, func(i, j int) bool { return ms[i].From < ms[j].From })
	var b strings.Builder
	b.Grow(len(sv.orig))
	at := 0 // original offset copied so far
	for _, m := range ms {
		o0, ok0 := sv.toOrig(m.From)
		o1, ok1 := sv.toOrig(m.To)
		if !ok0 || !ok1 {
			return "", &SecretPlaceholderError{Path: path, Placeholder: "[REDACTED:...]",
				Msg: "a SEARCH block starts or ends inside a redacted secret; include the whole placeholder"}
		}
		text, err := sv.fill(path, m.Text, sv.secretsIn(o0, o1), sv.literalText(o0, o1))
		if err != nil {
			return "", err
		}
		b.WriteString(sv.orig[at:o0])
		b.WriteString(text)
		at = o1
	}
	b.WriteString(sv.orig[at:])
	return b.String(), nil
}

// origLines maps the view's 1-based line range a..b to the original's
// (they differ only where a secret spans lines).
func (sv *secretView) origLines(ol evidence.Lines, a, b int) (int, int) {
	if len(sv.regs) == 0 {
		return a, b
	}
	vl := evidence.IndexLines([]byte(sv.view))
	vs, _ := vl.Span(a)
	_, ve := vl.Span(b)
	o0, _ := sv.toOrigOuter(vs, false)
	o1, _ := sv.toOrigOuter(ve, true)
	return lineOf(ol, o0), lineOf(ol, max(o1-1, o0))
}

// renumber turns the view line numbers of a nearest candidate into the
// file's: a redacted region that spans lines (a PEM key) is one line of
// the view, so the view's numbers after it are off. ol indexes the
// original.
func (sv *secretView) renumber(n *Nearest, ol evidence.Lines) {
	if len(sv.regs) == 0 {
		return
	}
	n.StartLine, _ = sv.origLines(ol, n.StartLine, n.StartLine)
	_, n.EndLine = sv.origLines(ol, n.EndLine, n.EndLine)
	rows := strings.Split(n.Text, "\n")
	for i, row := range rows {
		// Each row is a two-byte mark, the number, a tab and the text.
		tab := strings.IndexByte(row, '\t')
		if len(row) < 2 || tab < 2 {
			continue
		}
		v, err := strconv.Atoi(row[2:tab])
		if err != nil {
			continue
		}
		o, _ := sv.origLines(ol, v, v)
		rows[i] = row[:2] + strconv.Itoa(o) + row[tab:]
	}
	n.Text = strings.Join(rows, "\n")
}

// toOrigOuter maps v to the original, widening to a placeholder's start
// (end false) or end (end true) when v falls inside one.
func (sv *secretView) toOrigOuter(v int, end bool) (int, bool) {
	if o, ok := sv.toOrig(v); ok {
		return o, true
	}
	for _, g := range sv.regs {
		if g.v0 < v && v < g.v1 {
			if end {
				return g.o1, false
			}
			return g.o0, false
		}
	}
	return v, false
}

// lineOf is the 1-based line of ol holding byte offset o.
func lineOf(ol evidence.Lines, o int) int {
	n := ol.Count()
	i := sort.Search(n, func(i int) bool { _, e := ol.Span(i + 1); return e > o })
	return min(i+1, max(n, 1))
}

// fillPatches resolves the placeholders of line_patch replacements: each
// against the secrets of the lines its patch deletes.
func (sv *secretView) fillPatches(path string, ol evidence.Lines, patches []Patch) ([]Patch, error) {
	out, copied := patches, false
	for i, pt := range patches {
		if !hasPlaceholder(pt.Replacement) {
			continue
		}
		o0, o1 := 0, 0
		if pt.DeleteLines > 0 && pt.StartLine+pt.DeleteLines-1 <= ol.Count() {
			o0, o1 = ol.RangeSpan(evidence.Range{Start: pt.StartLine, End: pt.StartLine + pt.DeleteLines - 1})
		}
		text, err := sv.fill(path, pt.Replacement, sv.secretsIn(o0, o1), sv.literalText(o0, o1))
		if err != nil {
			return nil, err
		}
		if !copied { // the caller's patches stay as given
			out, copied = append([]Patch(nil), patches...), true
		}
		out[i].Replacement = text
	}
	return out, nil
}
