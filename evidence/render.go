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
	// Text is the rendering. Each shown line is its 1-based number, a tab,
	// (the gutter is no wider than the number: the tab already aligns the
	// text, and padding to a fixed width cost every line read bytes), the line without its "\n" or "\r\n", and
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
	v, _ := renderLines(s, lines, r, tokenBudget, nil)
	return v
}

// RenderFramed is Render with the rendering placed between a head and a
// tail that frame derives from the view (its Text still empty), in one
// string built once: a caller showing the rendering inside its own text
// gets that text without copying the rendering again. It returns the view,
// whose Text is the rendering alone (a substring of the framed text), and
// the framed text.
func RenderFramed(s *Snapshot, r Range, tokenBudget int, frame func(View) (head, tail string)) (View, string) {
	return renderLines(s, IndexLines(s.Bytes), r, tokenBudget, frame)
}

// renderLines renders in two passes: the first finds the last complete line
// within the budget from the line lengths alone, so the view is known
// before any byte is written; the second writes the frame's head, the lines
// and the tail into one buffer of the exact size.
func renderLines(s *Snapshot, lines Lines, r Range, tokenBudget int, frame func(View) (head, tail string)) (View, string) {
	v := View{Path: s.Path, Revision: s.Revision, TotalLines: lines.Count()}
	if IsBinary(s.Bytes) {
		v.Binary = true
		return framed(v, "[binary file: "+strconv.Itoa(len(s.Bytes))+" bytes, "+string(s.Revision)+"; not shown]\n", frame)
	}
	want, ok := r.Clamp(v.TotalLines)
	if !ok {
		return framed(v, "", frame)
	}
	if tokenBudget <= 0 {
		tokenBudget = DefaultTokenBudget
	}
	budget := 1 << 62
	if tokenBudget < budget/BytesPerToken {
		budget = tokenBudget * BytesPerToken
	}

	size := 0 // bytes of the complete lines that fit
	last := 0 // last complete line that fits
	for ln := want.Start; ln <= want.End; ln++ {
		cost := digits(ln) + 1 + lines.textLen(ln) + 1
		if size+cost > budget {
			break
		}
		size += cost
		last = ln
	}
	var cut []byte
	if last == want.End {
		v.Shown = want
	} else {
		v.Truncated = true
		next := last + 1
		if last == 0 {
			cut = appendCutLine(nil, lines.Text(want.Start), want.Start, budget)
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
	var head, tail string
	if frame != nil {
		head, tail = frame(v)
	}
	// A strings.Builder of the exact size, so the text is never copied.
	var out strings.Builder
	out.Grow(len(head) + size + len(cut) + len(tail))
	out.WriteString(head)
	var num [24]byte
	for ln := want.Start; ln <= last; ln++ {
		out.Write(strconv.AppendInt(num[:0], int64(ln), 10))
		out.WriteByte('\t')
		out.Write(lines.Text(ln))
		out.WriteByte('\n')
	}
	out.Write(cut)
	out.WriteString(tail)
	full := out.String()
	v.Text = full[len(head) : len(full)-len(tail)]
	v.Tokens = tokensOf(len(v.Text))
	return v, full
}

// framed finishes a view whose text is known without rendering lines.
func framed(v View, text string, frame func(View) (head, tail string)) (View, string) {
	v.Tokens = tokensOf(len(text))
	if frame == nil {
		v.Text = text
		return v, text
	}
	head, tail := frame(v)
	full := head + text + tail
	v.Text = full[len(head) : len(full)-len(tail)]
	return v, full
}

// appendCutLine shows the start of a line too long for the budget, cut at a
// UTF-8 boundary, followed by a marker saying how much was shown.
func appendCutLine(out, text []byte, ln, budget int) []byte {
	room := budget - digits(ln) - 1 - cutMarkerReserve
	room = max(0, min(room, len(text)))
	for room > 0 && room < len(text) && !utf8.RuneStart(text[room]) {
		room--
	}
	out = strconv.AppendInt(out, int64(ln), 10)
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

func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}
