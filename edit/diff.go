package edit

import (
	"bytes"
	"fmt"
	"strings"

	"winx/evidence"
)

const (
	// MaxDiffBytes bounds the compact diff of one file in a result; a longer
	// diff is cut at a line and ends with a marker.
	MaxDiffBytes = 16 << 10
	// diffContext is the number of unchanged lines shown around a change.
	diffContext = 2
	// maxDiffEdits bounds the Myers search (time and memory grow with its
	// square); beyond it the changed middle is reported as one hunk.
	maxDiffEdits = 400
)

// hunk is a changed region: old lines [OldStart, OldStart+OldCount) became
// new lines [NewStart, NewStart+NewCount), 1-based.
type hunk struct{ oldStart, oldCount, newStart, newCount int }

// lineHunks returns the changed regions between a and b, in order. Lines
// outside every hunk are equal and paired in order (the alignment is a valid
// one, not necessarily minimal when the edit distance passes maxDiffEdits).
func lineHunks(a, b evidence.Lines) []hunk {
	n, m := a.Count(), b.Count()
	pre := 0
	for pre < n && pre < m && bytes.Equal(a.Line(pre+1), b.Line(pre+1)) {
		pre++
	}
	suf := 0
	for suf < n-pre && suf < m-pre && bytes.Equal(a.Line(n-suf), b.Line(m-suf)) {
		suf++
	}
	if pre == n && pre == m {
		return nil
	}
	// Intern the middle lines so comparisons are integer compares.
	ids := make(map[string]int)
	intern := func(l evidence.Lines, from, to int) []int {
		out := make([]int, 0, to-from)
		for i := from; i < to; i++ {
			s := string(l.Line(i + 1))
			id, ok := ids[s]
			if !ok {
				id = len(ids)
				ids[s] = id
			}
			out = append(out, id)
		}
		return out
	}
	x, y := intern(a, pre, n-suf), intern(b, pre, m-suf)
	hs := myers(x, y)
	if hs == nil {
		hs = []hunk{{0, len(x), 0, len(y)}}
	}
	for i := range hs {
		hs[i].oldStart += pre + 1
		hs[i].newStart += pre + 1
	}
	return hs
}

// myers returns the hunks of the shortest edit script from x to y (0-based
// starts), or nil if it needs more than maxDiffEdits edits.
func myers(x, y []int) []hunk {
	n, m := len(x), len(y)
	maxD := min(n+m, maxDiffEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				i = v[off+k+1]
			} else {
				i = v[off+k-1] + 1
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i, j = i+1, j+1
			}
			v[off+k] = i
			if i >= n && j >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return nil
	}
	// Walk back, collecting equal pairs as edits between them.
	type pair struct{ i, j int }
	var equal []pair
	i, j := n, m
	for d := found; d > 0; d-- {
		vp := trace[d]
		k := i - j
		var pk int
		if k == -d || (k != d && vp[off+k-1] < vp[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		pi := vp[off+pk]
		pj := pi - pk
		// The snake of step d runs from just after the move to (i, j).
		mi, mj := pi+1, pj // a deletion: x advanced
		if pk == k+1 {
			mi, mj = pi, pj+1 // an insertion: y advanced
		}
		for i > mi && j > mj {
			equal = append(equal, pair{i - 1, j - 1})
			i, j = i-1, j-1
		}
		i, j = pi, pj
	}
	for i > 0 && j > 0 {
		equal = append(equal, pair{i - 1, j - 1})
		i, j = i-1, j-1
	}
	// equal is in reverse order; turn the gaps between pairs into hunks.
	var hs []hunk
	pi, pj := 0, 0
	for e := len(equal) - 1; e >= -1; e-- {
		ni, nj := n, m
		if e >= 0 {
			ni, nj = equal[e].i, equal[e].j
		}
		if ni > pi || nj > pj {
			hs = append(hs, hunk{pi, ni - pi, pj, nj - pj})
		}
		pi, pj = ni+1, nj+1
	}
	return hs
}

// diffTruncated ends a diff cut at MaxDiffBytes.
const diffTruncated = "... (diff truncated)\n"

// unifiedDiff renders hunks as a compact unified diff of path with
// diffContext lines of context, at most MaxDiffBytes.
func unifiedDiff(path string, a, b evidence.Lines, hs []hunk) string {
	if len(hs) == 0 {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", path, path)
	line := func(prefix byte, l []byte) {
		out.WriteByte(prefix)
		t := bytes.TrimRight(l, "\r\n")
		out.Write(t)
		out.WriteByte('\n')
		if len(t) == len(l) && len(l) > 0 {
			out.WriteString("\\ No newline at end of file\n")
		}
	}
	for g := 0; g < len(hs); {
		// Group hunks whose contexts touch.
		e := g
		for e+1 < len(hs) && hs[e+1].oldStart-(hs[e].oldStart+hs[e].oldCount) <= 2*diffContext {
			e++
		}
		os := max(hs[g].oldStart-diffContext, 1)
		ns := hs[g].newStart - (hs[g].oldStart - os)
		oe := min(hs[e].oldStart+hs[e].oldCount-1+diffContext, a.Count())
		ne := hs[e].newStart + hs[e].newCount - 1 + (oe - (hs[e].oldStart + hs[e].oldCount - 1))
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", os, oe-os+1, ns, ne-ns+1)
		o := os
		for h := g; h <= e; h++ {
			for ; o < hs[h].oldStart; o++ {
				line(' ', a.Line(o))
			}
			for i := 0; i < hs[h].oldCount; i++ {
				line('-', a.Line(hs[h].oldStart+i))
			}
			for i := 0; i < hs[h].newCount; i++ {
				line('+', b.Line(hs[h].newStart+i))
			}
			o = hs[h].oldStart + hs[h].oldCount
		}
		for ; o <= oe; o++ {
			line(' ', a.Line(o))
		}
		g = e + 1
		if out.Len() > MaxDiffBytes {
			break
		}
	}
	s := out.String()
	if len(s) > MaxDiffBytes {
		cut := strings.LastIndexByte(s[:MaxDiffBytes], '\n')
		s = s[:cut+1] + diffTruncated
	}
	return s
}

// carryRanges maps the old-revision line ranges covered (sorted, concrete)
// through hs to the new revision: only lines outside every hunk survive.
func carryRanges(covered []evidence.Range, hs []hunk, oldTotal int) []evidence.Range {
	var out []evidence.Range
	// Equal segments: old [lo, hi] maps to new by adding delta.
	type seg struct{ lo, hi, delta int }
	var segs []seg
	prevOld, prevNew := 1, 1
	for _, h := range hs {
		if h.oldStart > prevOld {
			segs = append(segs, seg{prevOld, h.oldStart - 1, prevNew - prevOld})
		}
		prevOld, prevNew = h.oldStart+h.oldCount, h.newStart+h.newCount
	}
	if prevOld <= oldTotal {
		segs = append(segs, seg{prevOld, oldTotal, prevNew - prevOld})
	}
	for _, c := range covered {
		for _, s := range segs {
			lo, hi := max(c.Start, s.lo), min(c.End, s.hi)
			if lo <= hi {
				out = append(out, evidence.Range{Start: lo + s.delta, End: hi + s.delta})
			}
		}
	}
	return out
}

// coveredRanges returns the concrete ranges of 1..total shown at rev of path.
func coveredRanges(l *evidence.Ledger, path string, rev evidence.Revision, total int) []evidence.Range {
	if total == 0 {
		return nil
	}
	missing, known, seen := l.Missing(path, rev, evidence.Range{Start: 1, End: total})
	if !known || seen != rev {
		return nil
	}
	var out []evidence.Range
	next := 1
	for _, m := range missing {
		if m.Start > next {
			out = append(out, evidence.Range{Start: next, End: m.Start - 1})
		}
		next = m.End + 1
		if m.End == 0 {
			next = total + 1
		}
	}
	if next <= total {
		out = append(out, evidence.Range{Start: next, End: total})
	}
	return out
}
