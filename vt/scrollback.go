package vt

// scrollback keeps the rendered text of lines that scrolled off the top of
// the main screen: they can never change again, so they are kept as text,
// not cells, and a 10000-line history costs what its text costs.
//
// Lines live in one byte slice, each followed by '\n', so the transcript's
// history is a single slice of it. Dropping the oldest line only moves an
// offset; the bytes are reclaimed by compacting when the dropped part
// outgrows the live part, which keeps pushes amortised O(line).
//
// Lines are logical lines: a row that ended by an autowrap is not ended by
// '\n' but continued by the next row pushed, so the bytes after the last
// line end are an open line still growing (at most MaxLineBytes: beyond
// it the line is cut, and the cut is remembered in cuts).
//
// Invariant: 0 <= first <= len(ends) == len(cuts); the live lines are
// ends[first:], line i of them spanning data[start(i):ends[first+i]]; the
// live text is data[base:], where base is ends[first-1] (or 0), the open
// line included; count() <= max.
type scrollback struct {
	max     int // lines kept; 0 keeps none
	data    []byte
	ends    []int  // end offset (past the '\n') of each line in data
	cuts    []bool // the line was cut at MaxLineBytes and goes on in the next
	first   int    // index in ends of the oldest live line
	dropped int    // lines dropped beyond max since the last drain
}

func (s *scrollback) count() int { return len(s.ends) - s.first }

func (s *scrollback) base() int {
	if s.first == 0 {
		return 0
	}
	return s.ends[s.first-1]
}

// openStart is where the open line begins: past the last line end.
func (s *scrollback) openStart() int {
	if len(s.ends) == 0 {
		return 0
	}
	return s.ends[len(s.ends)-1]
}

// text returns every live line, each followed by '\n', then the open line
// without one. It aliases s.
func (s *scrollback) text() []byte { return s.data[s.base():] }

// push renders l straight into s.data, so no per-line string is made, and
// drops the oldest line beyond max. A row that wrapped stays open for the
// next row to continue. used bounds l's text (see line.appendLogical).
func (s *scrollback) push(l line, used int) {
	if s.max <= 0 {
		return
	}
	s.data = l.appendLogical(s.data, used)
	wrapped := l.wrapped()
	if wrapped && len(s.data)-s.openStart() < MaxLineBytes {
		return
	}
	s.data = append(s.data, '\n')
	s.ends = append(s.ends, len(s.data))
	s.cuts = append(s.cuts, wrapped)
	if s.count() > s.max {
		s.first++
		s.dropped++
		s.compact()
	}
}

// compact reclaims dropped lines once they take more room than the live
// ones (or the index of dropped lines outgrows the live index).
func (s *scrollback) compact() {
	base := s.base()
	if base < len(s.data)-base && s.first < len(s.ends)-s.first {
		return
	}
	n := copy(s.data, s.data[base:])
	s.data = s.data[:n]
	n = copy(s.ends, s.ends[s.first:])
	s.ends = s.ends[:n]
	copy(s.cuts, s.cuts[s.first:])
	s.cuts = s.cuts[:n]
	for i := range s.ends {
		s.ends[i] -= base
	}
	s.first = 0
}

// drain calls emit with each complete live line, without its '\n' (it
// aliases s until the next push), and whether it was cut at MaxLineBytes;
// it returns how many lines were dropped beyond max since the last drain,
// and empties s but for the open line.
func (s *scrollback) drain(emit func(line []byte, cut bool)) int {
	start := s.base()
	for i, end := range s.ends[s.first:] {
		emit(s.data[start:end-1], s.cuts[s.first+i])
		start = end
	}
	dropped := s.dropped
	n := copy(s.data, s.data[s.openStart():])
	s.data = s.data[:n]
	s.ends = s.ends[:0]
	s.cuts = s.cuts[:0]
	s.first, s.dropped = 0, 0
	return dropped
}

// clear drops every line, the open one included, but keeps the buffers
// for reuse.
func (s *scrollback) clear() {
	s.data = s.data[:0]
	s.ends = s.ends[:0]
	s.cuts = s.cuts[:0]
	s.first, s.dropped = 0, 0
}
