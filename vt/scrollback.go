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
// Invariant: 0 <= first <= len(ends); the live lines are ends[first:], line
// i of them spanning data[start(i):ends[first+i]]; the live text is
// data[base:], where base is ends[first-1] (or 0); count() <= max.
type scrollback struct {
	max   int // lines kept; 0 keeps none
	data  []byte
	ends  []int // end offset (past the '\n') of each line in data
	first int   // index in ends of the oldest live line
}

func (s *scrollback) count() int { return len(s.ends) - s.first }

func (s *scrollback) base() int {
	if s.first == 0 {
		return 0
	}
	return s.ends[s.first-1]
}

// text returns every live line, each followed by '\n'. It aliases s.
func (s *scrollback) text() []byte { return s.data[s.base():] }

// push renders l straight into s.data, so no per-line string is made, and
// drops the oldest line beyond max.
func (s *scrollback) push(l line) {
	if s.max <= 0 {
		return
	}
	s.data = l.appendText(s.data)
	s.data = append(s.data, '\n')
	s.ends = append(s.ends, len(s.data))
	if s.count() > s.max {
		s.first++
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
	for i := range s.ends {
		s.ends[i] -= base
	}
	s.first = 0
}

// drain returns the live lines without their '\n' and empties s.
func (s *scrollback) drain() []string {
	if s.count() == 0 {
		return nil
	}
	lines := make([]string, 0, s.count())
	start := s.base()
	for _, end := range s.ends[s.first:] {
		lines = append(lines, string(s.data[start:end-1]))
		start = end
	}
	s.clear()
	return lines
}

// clear drops every line but keeps the buffers for reuse.
func (s *scrollback) clear() {
	s.data = s.data[:0]
	s.ends = s.ends[:0]
	s.first = 0
}
