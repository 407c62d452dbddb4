package evidence

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	// BytesPerToken is the token estimate: a rendered text of n bytes costs
	// ceil(n / BytesPerToken) tokens. It is deliberately simple and slightly
	// pessimistic for code, and it is the same for every caller.
	BytesPerToken = 4
	// DefaultTokenBudget is used when Render is given a budget <= 0.
	DefaultTokenBudget = 8000
	// BinarySniffLen is how many leading bytes are searched for a NUL to
	// decide that a file is binary.
	BinarySniffLen = 8 << 10
	// lineNumberWidth is the minimum width of the right-aligned line number.
	lineNumberWidth = 6
	// cutMarkerReserve is the room kept for the marker after a cut line.
	cutMarkerReserve = 64
)

// View is one rendered range of a snapshot, ready for the model.
type View struct {
	Path       string // Snapshot.Path
	Revision   Revision
	TotalLines int
	// Shown is the range of complete lines in Text: exactly what a read
	// records in the Ledger. It is the zero Range when no complete line was
	// shown (empty file, range past the end, binary file, or a first line
	// longer than the whole budget).
	Shown Range
	// Text is the rendering. Each shown line is its 1-based number right
	// aligned in 6 columns, a tab, the line without its "\n" or "\r\n", and
	// "\n". A cut line (see PartialLine) ends with a bracketed marker. A
	// binary file is a single bracketed note.
	Text string
	// Tokens is the estimate of Text: ceil(len(Text) / BytesPerToken).
	Tokens int
	// Truncated: the budget stopped the rendering before the requested end.
	Truncated bool
	// Continuation, when Truncated, is the exact path spec of the rest of
	// the request: "path:N-M" when the request had an end, "path:N-" when
	// it ran to the end of the file.
	Continuation string
	// PartialLine is the number of a line longer than the whole budget that
	// was shown cut, with a marker; it is not in Shown and does not count as
	// read. 0 if none. Continuation then starts after it.
	PartialLine int
	// Binary: the file has a NUL in its first BinarySniffLen bytes; Text is
	// a note and no line is shown.
	Binary bool
}

// IsBinary reports whether b looks binary: a NUL in the first
// BinarySniffLen bytes.
func IsBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), BinarySniffLen)], 0) >= 0
}

// Render renders range r of s within tokenBudget tokens (DefaultTokenBudget
// if <= 0). The cost of a line is the bytes it adds to Text, so Tokens never
// exceeds the budget except for the marker of a cut line. Rendering stops at
// the last complete line that fits; if not even the first line fits, that
// line is shown cut at a UTF-8 boundary so the model sees something, but it
// is not counted as shown.
func Render(s *Snapshot, r Range, tokenBudget int) View {
	return RenderLines(s, IndexLines(s.Bytes), r, tokenBudget)
}

// RenderLines is Render with the line index already built (it must be
// IndexLines(s.Bytes)), for callers that also need the index.
func RenderLines(s *Snapshot, lines Lines, r Range, tokenBudget int) View {
	v := View{Path: s.Path, Revision: s.Revision, TotalLines: lines.Count()}
	if IsBinary(s.Bytes) {
		v.Binary = true
		v.Text = "[binary file: " + strconv.Itoa(len(s.Bytes)) + " bytes, " + string(s.Revision) + "; not shown]\n"
		v.Tokens = tokensOf(len(v.Text))
		return v
	}
	want, ok := r.Clamp(v.TotalLines)
	if !ok {
		return v
	}
	if tokenBudget <= 0 {
		tokenBudget = DefaultTokenBudget
	}
	budget := 1 << 62
	if tokenBudget < budget/BytesPerToken {
		budget = tokenBudget * BytesPerToken
	}

	start, end := lines.RangeSpan(want)
	n := want.End - want.Start + 1
	// A strings.Builder, so Text is not copied: Grow once for the whole
	// range (or the budget), then append in place.
	var out strings.Builder
	out.Grow(min(budget, end-start+n*(lineNumberWidth+2)) + cutMarkerReserve)
	var num [24]byte
	last := 0 // last complete line rendered
	for ln := want.Start; ln <= want.End; ln++ {
		text := lines.Text(ln)
		cost := lineNumberCost(ln) + 1 + len(text) + 1
		if out.Len()+cost > budget {
			break
		}
		out.Write(appendLineNumber(num[:0], ln))
		out.WriteByte('\t')
		out.Write(text)
		out.WriteByte('\n')
		last = ln
	}
	if last == want.End {
		v.Shown = want
	} else {
		v.Truncated = true
		next := last + 1
		if last == 0 {
			out.Write(appendCutLine(nil, lines.Text(want.Start), want.Start, budget))
			v.PartialLine = want.Start
			next = want.Start + 1
		} else {
			v.Shown = Range{want.Start, last}
		}
		// If the cut line was the whole request, nothing is left to ask
		// for at this budget and Continuation stays empty.
		if next <= want.End {
			rest := Range{Start: next}
			if r.End != 0 {
				rest.End = want.End
			}
			v.Continuation = s.Path + ":" + rest.String()
			if rest.End == rest.Start {
				// "path:N" would read as one line too; keep the
				// documented "N-M" shape.
				v.Continuation = s.Path + ":" + strconv.Itoa(next) + "-" + strconv.Itoa(next)
			}
		}
	}
	v.Text = out.String()
	v.Tokens = tokensOf(len(v.Text))
	return v
}

// appendCutLine shows the start of a line too long for the budget, cut at a
// UTF-8 boundary, followed by a marker saying how much was shown.
func appendCutLine(out, text []byte, ln, budget int) []byte {
	room := budget - lineNumberCost(ln) - 1 - cutMarkerReserve
	room = max(0, min(room, len(text)))
	for room > 0 && room < len(text) && !utf8.RuneStart(text[room]) {
		room--
	}
	out = appendLineNumber(out, ln)
	out = append(out, '\t')
	out = append(out, text[:room]...)
	out = append(out, " [line cut: "...)
	out = strconv.AppendInt(out, int64(room), 10)
	out = append(out, " of "...)
	out = strconv.AppendInt(out, int64(len(text)), 10)
	out = append(out, " bytes shown; not counted as read]\n"...)
	return out
}

func tokensOf(n int) int { return (n + BytesPerToken - 1) / BytesPerToken }

func lineNumberCost(n int) int { return max(digits(n), lineNumberWidth) }

func appendLineNumber(out []byte, n int) []byte {
	for pad := lineNumberCost(n) - digits(n); pad > 0; pad-- {
		out = append(out, ' ')
	}
	return strconv.AppendInt(out, int64(n), 10)
}

func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}
