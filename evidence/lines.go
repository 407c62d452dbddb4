package evidence

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// MaxLineNumber is the largest line number a range may name. It keeps every
// line arithmetic far from integer overflow.
const MaxLineNumber = 1 << 30

// Lines indexes the lines of a byte slice. A line is the bytes up to and
// including its "\n" ("\r\n" stays "\r\n": the "\r" is part of the line's
// content as far as offsets go); a final line without a newline is a line;
// empty input has no lines. The zero value has no lines.
type Lines struct {
	b []byte
	// ends[i] is the offset just past line i+1, terminator included.
	// Invariant: strictly increasing, last element == len(b).
	ends []int
}

// IndexLines indexes b. It keeps b, which must not be changed afterwards.
func IndexLines(b []byte) Lines {
	if len(b) == 0 {
		return Lines{}
	}
	n := bytes.Count(b, []byte{'\n'})
	if b[len(b)-1] != '\n' {
		n++
	}
	ends := make([]int, 0, n)
	for off := 0; off < len(b); {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			off = len(b)
		} else {
			off += i + 1
		}
		ends = append(ends, off)
	}
	return Lines{b: b, ends: ends}
}

// Count returns the number of lines.
func (l Lines) Count() int { return len(l.ends) }

// Span returns the byte offsets [start, end) of line n (1-based), its
// terminator included. It panics if n is not in 1..Count().
func (l Lines) Span(n int) (start, end int) {
	if n < 1 || n > len(l.ends) {
		panic(fmt.Sprintf("evidence: line %d out of range 1..%d", n, len(l.ends)))
	}
	if n > 1 {
		start = l.ends[n-2]
	}
	return start, l.ends[n-1]
}

// Line returns line n (1-based) with its terminator.
func (l Lines) Line(n int) []byte {
	s, e := l.Span(n)
	return l.b[s:e:e]
}

// Text returns line n (1-based) without its "\n" or "\r\n".
func (l Lines) Text(n int) []byte {
	return trimEOL(l.Line(n))
}

// textLen is len(l.Text(n)) without the slicing, for n in 1..Count().
func (l Lines) textLen(n int) int {
	start := 0
	if n > 1 {
		start = l.ends[n-2]
	}
	end := l.ends[n-1]
	if end > start && l.b[end-1] == '\n' {
		end--
		if end > start && l.b[end-1] == '\r' {
			end--
		}
	}
	return end - start
}

// RangeSpan returns the byte offsets [start, end) covering the lines of r,
// which must be concrete and within 1..Count() (as Range.Clamp returns it).
func (l Lines) RangeSpan(r Range) (start, end int) {
	start, _ = l.Span(r.Start)
	_, end = l.Span(r.End)
	return start, end
}

func trimEOL(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	return line
}

// Range is a span of lines, 1-based and inclusive. End 0 means "to the end
// of the file". The zero Range (Start 0) means "no lines".
type Range struct{ Start, End int }

// All is the whole file.
var All = Range{Start: 1}

// IsZero reports whether r names no lines.
func (r Range) IsZero() bool { return r.Start == 0 }

// Clamp returns r limited to a file of total lines, with End made concrete.
// It returns false, and the zero Range, when r names no line of the file:
// an empty file, Start past the end, or an invalid r.
func (r Range) Clamp(total int) (Range, bool) {
	if r.Start < 1 || total < 1 || r.Start > total || (r.End != 0 && r.End < r.Start) {
		return Range{}, false
	}
	if r.End == 0 || r.End > total {
		r.End = total
	}
	return r, true
}

// String formats r as used in requiredReads and path specs: "N" for one
// line, "A-B", "A-" when End is 0, and "" for the zero Range. ParsePathSpec
// reads every non-zero result back to the same Range.
func (r Range) String() string {
	switch {
	case r.Start == 0:
		return ""
	case r.End == 0:
		return strconv.Itoa(r.Start) + "-"
	case r.End == r.Start:
		return strconv.Itoa(r.Start)
	default:
		return strconv.Itoa(r.Start) + "-" + strconv.Itoa(r.End)
	}
}

// RangeError reports a path spec whose trailing range is malformed.
type RangeError struct {
	Spec   string // the spec as given (bounded in Error)
	Reason string
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("evidence: line range in %q: %s", truncateForError(e.Spec), e.Reason)
}

// ParsePathSpec splits a ReadFiles path spec into the path and an optional
// trailing line range:
//
//	path        whole file              (hasRange false, r == All)
//	path:N      line N                  Range{N, N}
//	path:A-B    lines A..B              Range{A, B}
//	path:A-     line A to the end       Range{A, 0}
//	path:-B     lines 1..B              Range{1, B}
//
// Only a suffix after the last ':' made of ASCII digits in one of these
// shapes is a range; anything else is part of the path ("a:b", "x:", "x:-",
// "x:1-2-3" are plain paths), so paths containing ':' read as themselves. A
// path that itself ends in ":<digits>" must be given with a range
// ("notes:12:1-"). A suffix of the right shape with a bad value (0, A > B,
// a number over MaxLineNumber) or an empty path is a *RangeError.
func ParsePathSpec(spec string) (path string, r Range, hasRange bool, err error) {
	i := strings.LastIndexByte(spec, ':')
	if i < 0 {
		return nonEmpty(spec)
	}
	suffix := spec[i+1:]
	a, dash, b, ok := splitRangeShape(suffix)
	if !ok {
		return nonEmpty(spec)
	}
	path = spec[:i]
	if path == "" {
		return "", Range{}, false, &RangeError{Spec: spec, Reason: "empty path"}
	}
	num := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n > MaxLineNumber {
			return 0, &RangeError{Spec: spec, Reason: fmt.Sprintf("line number %s is over %d", truncateForError(s), MaxLineNumber)}
		}
		if n < 1 {
			return 0, &RangeError{Spec: spec, Reason: "line numbers start at 1"}
		}
		return n, nil
	}
	switch {
	case !dash: // N
		n, err := num(a)
		if err != nil {
			return "", Range{}, false, err
		}
		r = Range{n, n}
	case a == "": // -B
		n, err := num(b)
		if err != nil {
			return "", Range{}, false, err
		}
		r = Range{1, n}
	case b == "": // A-
		n, err := num(a)
		if err != nil {
			return "", Range{}, false, err
		}
		r = Range{n, 0}
	default: // A-B
		x, err := num(a)
		if err != nil {
			return "", Range{}, false, err
		}
		y, err := num(b)
		if err != nil {
			return "", Range{}, false, err
		}
		if y < x {
			return "", Range{}, false, &RangeError{Spec: spec, Reason: fmt.Sprintf("end %d is before start %d", y, x)}
		}
		r = Range{x, y}
	}
	return path, r, true, nil
}

func nonEmpty(spec string) (string, Range, bool, error) {
	if spec == "" {
		return "", Range{}, false, &RangeError{Spec: spec, Reason: "empty path"}
	}
	return spec, All, false, nil
}

// splitRangeShape matches s against D, D-, -D, D-D (D = one or more ASCII
// digits) and returns the digit runs.
func splitRangeShape(s string) (a string, dash bool, b string, ok bool) {
	j := strings.IndexByte(s, '-')
	if j < 0 {
		return s, false, "", allDigits(s)
	}
	a, b = s[:j], s[j+1:]
	if a == "" && b == "" {
		return "", false, "", false
	}
	if (a != "" && !allDigits(a)) || (b != "" && !allDigits(b)) {
		return "", false, "", false
	}
	return a, true, b, true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
