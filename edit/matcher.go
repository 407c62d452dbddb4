package edit

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Limits and budgets of the matcher.
const (
	// MaxOriginalSize is the largest original Apply accepts.
	MaxOriginalSize = 64 << 20
	// MaxFuzzCost is the budget of tolerance cost one block's match may
	// spend. Each tolerance costs 1 except substring-in-line, which costs
	// 2, so a match may combine at most three one-point tolerances (or a
	// substring plus one more); a match that needs more is refused as
	// TooFuzzy rather than guessed.
	MaxFuzzCost = 3
	// AnchorSlack is how many lines an anchor may be off and still count
	// as pointing at a candidate: a candidate within AnchorSlack lines of
	// @A-B is "there".
	AnchorSlack = 2
	// nearestMaxOccurrences: a SEARCH line that occurs more often than
	// this in the original (a lone "}", a blank line) does not vote for a
	// nearest-candidate window. It bounds the nearest search at
	// len(search lines) * nearestMaxOccurrences votes.
	nearestMaxOccurrences = 64
	// nearestScanLines bounds the similarity scan that looks for a
	// candidate when no SEARCH line equals a line of the file: at most
	// this many lines of the file are compared (the first ones), and
	// nearestScanSearch SEARCH lines, each cut to nearestScanBytes. A
	// scan costs at most the product, about 10^8 byte steps in the worst
	// case and far less for lines of code.
	nearestScanLines  = 20000
	nearestScanSearch = 8
	nearestScanBytes  = 256
	// nearestMinSimilar is the least similarity (Dice coefficient of the
	// lines' character bigrams, 0..1) a line needs to be offered as a
	// candidate: below it the line has little in common with the SEARCH,
	// and showing it would mislead more than help.
	nearestMinSimilar = 0.5
	// MaxCandidates bounds MatchError.Candidates; a snippet found in more
	// places lists the first MaxCandidates.
	MaxCandidates = 32
)

// Names of tolerances, as reported in Applied.Tolerances and Match.Tolerances.
const (
	ToleranceTrailingWhitespace = "trailing-whitespace"
	ToleranceIndentation        = "indentation"
	ToleranceUnicodePunctuation = "unicode-punctuation"
	ToleranceBlankLines         = "blank-lines"
	ToleranceLineNumbers        = "line-numbers"
	ToleranceOverEscapedQuotes  = "over-escaped-quotes"
	ToleranceSubstringInLine    = "substring-in-line"
	ToleranceStaleAnchor        = "stale-anchor"
)

// ErrTooLarge is returned (wrapped) when Apply's input exceeds
// MaxOriginalSize, MaxBlocks or MaxBlocksSize.
var ErrTooLarge = errors.New("edit: input too large")

// Applied is the result of a successful Apply.
type Applied struct {
	Content    string   // the new bytes
	Tolerances []string // union of the tolerances used by all blocks, in a fixed order
	Matches    []Match  // one per block, in block order
}

// Match says where one block matched in the original.
type Match struct {
	Block              int // index into the blocks slice
	StartLine, EndLine int // 1-based inclusive lines of the original that were replaced
	// From and To are the byte range [From, To) of the original that was
	// replaced. For a line match it covers whole lines including the line
	// ending of EndLine; for substring-in-line it covers the substring.
	From, To   int
	Tolerances []string // tolerances this block needed, in a fixed order
	// Text is what replaced [From, To): the block's REPLACE as the
	// tolerances adapted it.
	Text string
}

// MatchKind says why a block was refused.
type MatchKind int

const (
	NotFound  MatchKind = iota + 1 // no acceptable match; Nearest may show the closest window
	Ambiguous                      // several equally good matches; Candidates lists their start lines
	TooFuzzy                       // a match exists but needs more than MaxFuzzCost of tolerances
	Overlap                        // every match overlaps a line an earlier block already replaces
)

func (k MatchKind) String() string {
	switch k {
	case NotFound:
		return "not found"
	case Ambiguous:
		return "ambiguous"
	case TooFuzzy:
		return "too fuzzy"
	case Overlap:
		return "overlap"
	}
	return "MatchKind(" + strconv.Itoa(int(k)) + ")"
}

// MatchError refuses one block. Apply returns it for the first block that
// fails; it never returns a partial result.
type MatchError struct {
	Block      int // index into the blocks slice
	Blocks     int // how many blocks the edit has, for messages
	Line       int // the block's Line in the edit content
	Kind       MatchKind
	Candidates []int    // Ambiguous, TooFuzzy, Overlap: 1-based start lines of the matches
	Tolerances []string // TooFuzzy: what the cheapest match would have needed
	Nearest    *Nearest // NotFound: the closest window, if any line of it is equal
}

// Nearest is the original window most like a SEARCH that was not found.
type Nearest struct {
	StartLine, EndLine int // 1-based inclusive
	Equal              int // window lines equal to their SEARCH line after normalization
	// Text is the window, one original line per line as ReadFiles shows
	// it (its number, a tab, the text), each prefixed with "~ " if it
	// differs from the SEARCH line at the same position (after normalizing
	// whitespace and punctuation) or "  " if it is equal.
	Text string
}

// BlockName names the refused block by its place among the edit's blocks
// ("SEARCH block 2 of 3"): the line it starts at is a line of the edit
// content, which read as a line of the file would send the model to the
// wrong place.
func (e *MatchError) BlockName() string {
	if e.Blocks > 1 {
		return fmt.Sprintf("SEARCH block %d of %d", e.Block+1, e.Blocks)
	}
	return fmt.Sprintf("SEARCH block %d", e.Block+1)
}

func (e *MatchError) Error() string {
	where := "edit: " + e.BlockName()
	switch e.Kind {
	case NotFound:
		if n := e.Nearest; n != nil {
			return fmt.Sprintf("%s was not found in the file; the nearest candidate is lines %d-%d (%d of %d lines equal)",
				where, n.StartLine, n.EndLine, n.Equal, n.EndLine-n.StartLine+1)
		}
		return where + " was not found in the file, and no line of the file is like it"
	case Ambiguous:
		return fmt.Sprintf("%s matches %d places (lines %s); add context or an @N anchor", where, len(e.Candidates), joinInts(e.Candidates))
	case TooFuzzy:
		return fmt.Sprintf("%s: its match at line %s needs too many tolerances (%s)", where, joinInts(e.Candidates), strings.Join(e.Tolerances, ", "))
	case Overlap:
		return fmt.Sprintf("%s: its match at line %s overlaps an earlier block's match", where, joinInts(e.Candidates))
	}
	return where + ": " + e.Kind.String()
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// fix is a set of tolerances. The low four bits are line normalizations and
// index the matcher's key cache.
type fix uint16

const (
	fixTrailing fix = 1 << iota
	fixIndent
	fixPunct
	fixBlank
	fixNumbers
	fixEscapes
	fixSubstring
	fixStale

	lineFixes = fixTrailing | fixIndent | fixPunct | fixBlank
)

// names lists the tolerances in f in their fixed reporting order.
func (f fix) names() []string {
	var out []string
	for _, t := range [...]struct {
		f    fix
		name string
	}{
		{fixIndent, ToleranceIndentation},
		{fixNumbers, ToleranceLineNumbers},
		{fixPunct, ToleranceUnicodePunctuation},
		{fixBlank, ToleranceBlankLines},
		{fixTrailing, ToleranceTrailingWhitespace},
		{fixSubstring, ToleranceSubstringInLine},
		{fixEscapes, ToleranceOverEscapedQuotes},
		{fixStale, ToleranceStaleAnchor},
	} {
		if f&t.f != 0 {
			out = append(out, t.name)
		}
	}
	return out
}

func (f fix) cost() int {
	c := 0
	for b := fix(1); b != 0 && b <= f; b <<= 1 {
		if f&b != 0 {
			c++
			if b == fixSubstring {
				c++
			}
		}
	}
	return c
}

// srcLine is one line of the original.
type srcLine struct {
	text string // without the line ending
	eol  string // "\n", "\r\n" or "" (last line without a newline)
	off  int    // byte offset of text in the original
}

func splitSource(s string) []srcLine {
	lines := make([]srcLine, 0, strings.Count(s, "\n")+1)
	for off := 0; off < len(s); {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			lines = append(lines, srcLine{text: s[off:], off: off})
			break
		}
		text, eol := s[off:off+i], "\n"
		if strings.HasSuffix(text, "\r") {
			text, eol = text[:len(text)-1], "\r\n"
		}
		lines = append(lines, srcLine{text: text, eol: eol, off: off})
		off += i + 1
	}
	return lines
}

// bodyLines splits a Search or Replace body into lines: a final "\n" is
// optional and trailing carriage returns are dropped.
func bodyLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	return lines
}

// matcher holds the original and caches derived from it for one Apply call.
// It is not safe for concurrent use.
type matcher struct {
	lines    []srcLine
	eol      string           // the first line ending of the file, "\n" if none
	nonBlank []int            // lazily built: indexes of the non-blank lines
	full     []string         // lazily built: every line under fullNorm, the prefilter key
	nearIdx  map[string][]int // lazily built: fully normalized line -> line indexes
}

func newMatcher(src string) *matcher {
	m := &matcher{lines: splitSource(src), eol: "\n"}
	for _, l := range m.lines {
		if l.eol != "" {
			m.eol = l.eol
			break
		}
	}
	return m
}

// fullNorm is every line normalization at once. Two lines equal under any
// combination of line fixes are equal under fullNorm, so it serves as a
// cheap prefilter before the exact comparison under a given fix.
const fullNorm = fixPunct | fixIndent | fixTrailing

func (m *matcher) fullKeys() []string {
	if m.full == nil {
		m.full = make([]string, len(m.lines))
		for i, l := range m.lines {
			m.full[i] = normLine(l.text, fullNorm)
		}
	}
	return m.full
}

// view returns the original lines a fix compares: all of them, or under
// fixBlank only the non-blank ones. idx is nil for all lines; otherwise
// idx[k] is the original index of the k-th compared line.
func (m *matcher) view(f fix) (n int, idx []int) {
	if f&fixBlank == 0 {
		return len(m.lines), nil
	}
	if m.nonBlank == nil {
		m.nonBlank = make([]int, 0, len(m.lines))
		for i, l := range m.lines {
			if !isBlank(l.text) {
				m.nonBlank = append(m.nonBlank, i)
			}
		}
	}
	return len(m.nonBlank), m.nonBlank
}

// indent is a uniform leading-whitespace change from SEARCH to original:
// the original has add prepended to, or del removed from, every non-blank
// SEARCH line's indentation. At most one of them is non-empty.
type indent struct{ add, del string }

// candidate is one place a block's SEARCH matches.
type candidate struct {
	start, end  int // original line indexes, inclusive
	col, colEnd int // substring-in-line: byte range within line start; otherwise 0, 0
	f           fix
	delta       indent
}

func (c candidate) substring() bool { return c.f&fixSubstring != 0 }

// variant is a block's SEARCH after the pre-passes a fix selects.
type variant struct {
	lines []string
	hint  *Anchor // where leaked line numbers say the SEARCH came from
}

// find returns every window of the original where search matches under f.
func (m *matcher) find(v variant, f fix) []candidate {
	if f&fixSubstring != 0 {
		return m.findSubstring(v, f)
	}
	type sline struct {
		key, raw string
	}
	var s []sline
	for _, l := range v.lines {
		if f&fixBlank != 0 && isBlank(l) {
			continue
		}
		s = append(s, sline{normLine(l, f), l})
	}
	n, idx := m.view(f)
	orig := func(k int) int {
		if idx == nil {
			return k
		}
		return idx[k]
	}
	key := func(k int) string { return normLine(m.lines[orig(k)].text, f) }
	if len(s) == 0 || len(s) > n {
		return nil
	}
	// Compare the longest SEARCH line first, it is the likeliest to be
	// rare, and compare it by its cached fullNorm key first.
	pivot := 0
	for i := range s {
		if len(s[i].key) > len(s[pivot].key) {
			pivot = i
		}
	}
	full, pivotFull := m.fullKeys(), normLine(s[pivot].raw, fullNorm)
	var out []candidate
outer:
	for i := 0; i+len(s) <= n; i++ {
		if full[orig(i+pivot)] != pivotFull || key(i+pivot) != s[pivot].key {
			continue
		}
		for j := range s {
			if key(i+j) != s[j].key {
				continue outer
			}
		}
		c := candidate{start: orig(i), end: orig(i + len(s) - 1), f: f}
		if f&fixIndent != 0 {
			lines := make([]int, len(s))
			for j := range lines {
				lines[j] = orig(i + j)
			}
			d, ok := indentDelta(m, lines, func(j int) string { return s[j].raw })
			if !ok {
				continue
			}
			c.delta = d
		}
		out = append(out, c)
	}
	return out
}

// findSubstring matches a one-line SEARCH inside original lines, exactly.
func (m *matcher) findSubstring(v variant, f fix) []candidate {
	if len(v.lines) != 1 || v.lines[0] == "" {
		return nil
	}
	needle := v.lines[0]
	var out []candidate
	for i, l := range m.lines {
		for at := 0; ; {
			j := strings.Index(l.text[at:], needle)
			if j < 0 {
				break
			}
			col := at + j
			out = append(out, candidate{start: i, end: i, col: col, colEnd: col + len(needle), f: f})
			at = col + len(needle)
		}
	}
	return out
}

// Apply matches every block against original and returns the new content.
//
// Blocks are matched against the original, not against the content earlier
// blocks produced: line numbers, anchors and Match positions are all in the
// coordinates of the original revision the model read, and a block can never
// match text another block inserted. Two blocks may not replace the same line
// (Overlap), but they may come in any order.
//
// For each block the matcher tries the SEARCH exactly, then under
// progressively more tolerances, cheapest first (see MaxFuzzCost), and takes
// the matches of the cheapest level that has any:
//
//   - trailing-whitespace: spaces and tabs at line ends are ignored.
//   - indentation: leading whitespace may differ by one uniform prefix added
//     to or removed from every non-blank line; the replacement is re-indented
//     by the same change.
//   - unicode-punctuation: ‘’‚‛′ “”„‟″ ‐‑‒–—―− … and NBSP compare as their ASCII
//     forms; when the matched original has none of them, the replacement's
//     are turned into ASCII too.
//   - blank-lines: blank lines on either side are ignored; the match spans
//     from the first to the last matched non-blank line.
//   - line-numbers: when every SEARCH line starts with a ReadFiles-style
//     number ("  12\tcode", or "12: code"), consecutive and in one style,
//     the numbers are stripped (from the replacement too when all of its
//     lines carry them) and the first one serves as an anchor hint.
//   - over-escaped-quotes: \" and \' in SEARCH (and replacement) read as " and '.
//   - substring-in-line: a one-line SEARCH may match inside a line; only
//     that part of the line is replaced (by the replacement without its
//     final newline).
//
// Among several matches: an anchor picks the one within AnchorSlack lines of
// it (the nearest; a tie is Ambiguous); an anchor with no match there is
// stale, adds "stale-anchor" (cost 1) and is ignored. Then a unique match
// wins; else the first match after the previous block's match wins; else
// the block is Ambiguous. Matches overlapping an earlier block's lines are
// dropped first (Overlap if none remain).
//
// Replacement lines take the line ending of the first replaced line (CRLF
// stays CRLF); the last one takes the ending of the last replaced line, so a
// file without a final newline keeps it that way. Bytes outside the matched
// ranges are copied unchanged. Any refusal is a *MatchError for the first
// failing block and no content is returned.
func Apply(original string, blocks []Block) (*Applied, error) {
	if len(original) > MaxOriginalSize {
		return nil, fmt.Errorf("%w: original is %d bytes, limit %d", ErrTooLarge, len(original), MaxOriginalSize)
	}
	if len(blocks) > MaxBlocks {
		return nil, fmt.Errorf("%w: %d blocks, limit %d", ErrTooLarge, len(blocks), MaxBlocks)
	}
	total := 0
	for i, b := range blocks {
		total += len(b.Search) + len(b.Replace)
		if strings.TrimSpace(b.Search) == "" {
			return nil, &BlockSyntaxError{Line: b.Line, Msg: fmt.Sprintf("block %d: empty SEARCH", i+1)}
		}
		if a := b.Anchor; a != nil && (a.Start < 1 || a.End < a.Start) {
			return nil, &BlockSyntaxError{Line: b.Line, Msg: fmt.Sprintf("block %d: invalid anchor %s", i+1, a)}
		}
	}
	if total > MaxBlocksSize {
		return nil, fmt.Errorf("%w: blocks hold %d bytes, limit %d", ErrTooLarge, total, MaxBlocksSize)
	}

	m := newMatcher(original)
	var (
		claimed = make([]candidate, 0, len(blocks))
		texts   = make([]string, 0, len(blocks))
		matches = make([]Match, 0, len(blocks))
		used    fix
	)
	for i, b := range blocks {
		var prev *candidate
		if i > 0 {
			prev = &claimed[i-1]
		}
		c, err := m.matchBlock(i, b, prev, claimed)
		if err != nil {
			var me *MatchError
			if errors.As(err, &me) {
				me.Blocks = len(blocks)
			}
			return nil, err
		}
		text, from, to := m.replacement(c, b)
		claimed = append(claimed, c)
		texts = append(texts, text)
		matches = append(matches, Match{
			Block: i, StartLine: c.start + 1, EndLine: c.end + 1,
			From: from, To: to, Tolerances: c.f.names(), Text: text,
		})
		used |= c.f
	}

	order := make([]int, len(matches))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return matches[a].From - matches[b].From })
	var out strings.Builder
	out.Grow(len(original))
	at := 0
	for _, i := range order {
		mt := matches[i]
		if mt.From < at {
			panic("edit: invariant violated: matches overlap after the overlap check")
		}
		out.WriteString(original[at:mt.From])
		out.WriteString(texts[i])
		at = mt.To
	}
	out.WriteString(original[at:])
	return &Applied{Content: out.String(), Tolerances: used.names(), Matches: matches}, nil
}

// matchBlock finds the one place block bi matches, or refuses it.
func (m *matcher) matchBlock(bi int, b Block, prev *candidate, claimed []candidate) (candidate, error) {
	refuse := func(kind MatchKind, cands []candidate) *MatchError {
		e := &MatchError{Block: bi, Line: b.Line, Kind: kind}
		for _, c := range cands[:min(len(cands), MaxCandidates)] {
			e.Candidates = append(e.Candidates, c.start+1)
		}
		return e
	}

	// Pre-passes rewrite the SEARCH itself; vs is indexed by the
	// fixNumbers and fixEscapes bits.
	var vs [4]*variant
	base := bodyLines(b.Search)
	vs[0] = &variant{lines: base}
	numbered, hint, numbersOK := stripNumbers(base, true)
	if numbersOK {
		vs[1] = &variant{lines: numbered, hint: hint}
	}
	if hasEscapes(base) {
		vs[2] = &variant{lines: unescapeLines(base)}
		if numbersOK {
			vs[3] = &variant{lines: unescapeLines(numbered), hint: hint}
		}
	}
	variantOf := func(f fix) *variant { return vs[(f>>4)&3] }

	// maxLevel is the cost of every one-point tolerance at once, the
	// most any combination can cost.
	const maxLevel = 6
	var found []candidate
	seen := make(map[[4]int]bool) // windows another fix of this level found
	level := 0
	for ; level <= maxLevel; level++ {
		for f := fix(0); f < fixStale; f++ {
			if f.cost() != level {
				continue
			}
			v := variantOf(f)
			if v == nil || (f&fixSubstring != 0 && (f&lineFixes != 0 || len(v.lines) != 1)) {
				continue
			}
			for _, c := range m.find(*v, f) {
				k := [4]int{c.start, c.end, c.col, c.colEnd}
				if !seen[k] {
					seen[k] = true
					found = append(found, c)
				}
			}
		}
		if len(found) > 0 {
			break
		}
	}
	if len(found) == 0 {
		v := vs[0]
		if vs[1] != nil {
			v = vs[1]
		}
		e := refuse(NotFound, nil)
		e.Nearest = m.nearest(v.lines)
		return candidate{}, e
	}
	if level > MaxFuzzCost {
		e := refuse(TooFuzzy, found)
		e.Tolerances = found[0].f.names()
		return candidate{}, e
	}

	free := slices.DeleteFunc(slices.Clone(found), func(c candidate) bool {
		return slices.ContainsFunc(claimed, func(d candidate) bool { return c.start <= d.end && d.start <= c.end })
	})
	if len(free) == 0 {
		return candidate{}, refuse(Overlap, found)
	}

	anchor, explicit := b.Anchor, true
	if anchor == nil {
		explicit = false
		if free[0].f&fixNumbers != 0 {
			anchor = variantOf(free[0].f).hint
		}
	}
	if anchor != nil {
		lo, hi := anchor.Start-1, anchor.End-1
		dist := func(c candidate) int { return max(0, lo-c.end, c.start-hi) }
		var near []candidate
		for _, c := range free {
			d := dist(c)
			switch {
			case d > AnchorSlack:
			case len(near) == 0 || d < dist(near[0]):
				near = append(near[:0], c)
			case d == dist(near[0]):
				near = append(near, c)
			}
		}
		switch {
		case len(near) == 1:
			return near[0], nil
		case len(near) > 1:
			return candidate{}, refuse(Ambiguous, near)
		case explicit:
			c, err := pick(free, prev, refuse)
			if err != nil {
				return candidate{}, err
			}
			c.f |= fixStale
			if c.f.cost() > MaxFuzzCost {
				e := refuse(TooFuzzy, []candidate{c})
				e.Tolerances = c.f.names()
				return candidate{}, e
			}
			return c, nil
		}
	}
	return pick(free, prev, refuse)
}

// pick chooses among candidates without an anchor: the only one, or the
// first after the previous block's match.
func pick(free []candidate, prev *candidate, refuse func(MatchKind, []candidate) *MatchError) (candidate, error) {
	if len(free) == 1 {
		return free[0], nil
	}
	if prev != nil {
		best := -1
		for i, c := range free {
			if c.start > prev.end && (best < 0 || c.start < free[best].start) {
				best = i
			}
		}
		if best >= 0 {
			return free[best], nil
		}
	}
	return candidate{}, refuse(Ambiguous, free)
}

// replacement renders block b's Replace for candidate c and returns it with
// the byte range [from, to) of the original it replaces.
func (m *matcher) replacement(c candidate, b Block) (text string, from, to int) {
	repl := bodyLines(b.Replace)
	if c.f&fixNumbers != 0 {
		if s, _, ok := stripNumbers(repl, false); ok {
			repl = s
		}
	}
	if c.f&fixEscapes != 0 {
		repl = unescapeLines(repl)
	}
	if c.f&fixPunct != 0 && !m.regionHasPunct(c) {
		for i, l := range repl {
			repl[i] = asciiPunct(l)
		}
	}
	if c.f&fixIndent != 0 {
		for i, l := range repl {
			repl[i] = reindent(l, c.delta)
		}
	}
	first, last := m.lines[c.start], m.lines[c.end]
	eol := first.eol
	if eol == "" {
		eol = m.eol
	}
	if c.substring() {
		return strings.Join(repl, eol), first.off + c.col, first.off + c.colEnd
	}
	from, to = first.off, last.off+len(last.text)+len(last.eol)
	if len(repl) == 0 {
		return "", from, to
	}
	return strings.Join(repl, eol) + last.eol, from, to
}

func (m *matcher) regionHasPunct(c candidate) bool {
	for i := c.start; i <= c.end; i++ {
		if asciiPunct(m.lines[i].text) != m.lines[i].text {
			return true
		}
	}
	return false
}

// nearest finds the window of len(search) original lines that shares the
// most normalized lines with search at the same offsets. Each SEARCH line
// that occurs at most nearestMaxOccurrences times votes for the windows it
// would align; the best-voted window is rendered.
func (m *matcher) nearest(search []string) *Nearest {
	if len(search) == 0 || len(m.lines) == 0 {
		return nil
	}
	full := m.fullKeys()
	if m.nearIdx == nil {
		m.nearIdx = make(map[string][]int)
		for i, k := range full {
			if k == "" {
				continue
			}
			if ps := m.nearIdx[k]; len(ps) <= nearestMaxOccurrences {
				m.nearIdx[k] = append(ps, i)
			}
		}
	}
	votes := make(map[int]int)
	for i, l := range search {
		k := normLine(l, fullNorm)
		ps := m.nearIdx[k]
		if k == "" || len(ps) > nearestMaxOccurrences {
			continue
		}
		for _, p := range ps {
			votes[p-i]++
		}
	}
	best, bestVotes := 0, 0
	for start, v := range votes {
		if v > bestVotes || (v == bestVotes && start < best) {
			best, bestVotes = start, v
		}
	}
	if bestVotes == 0 {
		var ok bool
		if best, ok = m.similar(search, full); !ok {
			return nil
		}
	}
	start := max(0, min(best, len(m.lines)-len(search)))
	end := min(start+len(search), len(m.lines)) - 1
	n := &Nearest{StartLine: start + 1, EndLine: end + 1}
	var b strings.Builder
	for i := start; i <= end; i++ {
		if j := i - start; j < len(search) && full[i] == normLine(search[j], fullNorm) {
			n.Equal++
			b.WriteString("  ")
		} else {
			b.WriteString("~ ")
		}
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteByte('\t')
		b.WriteString(m.lines[i].text)
		if i < end {
			b.WriteByte('\n')
		}
	}
	n.Text = b.String()
	return n
}

// similar finds a window for a SEARCH none of whose lines equals a line of
// the file (a typo, a renamed identifier): each of the first
// nearestScanSearch non-blank SEARCH lines votes, with its similarity, for
// the window that aligns it with its most similar line among the first
// nearestScanLines of the file, if that line is at least nearestMinSimilar
// alike. It returns the best window's start (0-based), or false when no
// line is alike enough.
func (m *matcher) similar(search, full []string) (int, bool) {
	scan := full[:min(len(full), nearestScanLines)]
	votes := make(map[int]float64)
	used := 0
	t := new(pairTable)
	for i, l := range search {
		k := normLine(l, fullNorm)
		if k == "" {
			continue
		}
		if used++; used > nearestScanSearch {
			break
		}
		t.setWant(k)
		bestLine, bestSim := -1, nearestMinSimilar
		for p, line := range scan {
			if line == "" {
				continue
			}
			if sim := t.dice(line); sim >= bestSim && (sim > bestSim || bestLine < 0) {
				bestLine, bestSim = p, sim
			}
		}
		if bestLine >= 0 {
			votes[bestLine-i] += bestSim
		}
	}
	best, bestVotes := 0, 0.0
	for start, v := range votes {
		if v > bestVotes || (v == bestVotes && start < best) {
			best, bestVotes = start, v
		}
	}
	return best, bestVotes > 0
}

// pairTable counts byte pairs: want holds a SEARCH line's, seen those of
// the file line being compared (reset after each line through touched).
type pairTable struct {
	want, seen [1 << 16]uint16
	nWant      int
	touched    []uint16
}

// setWant makes s, cut to nearestScanBytes, the line compared against.
func (t *pairTable) setWant(s string) {
	clear(t.want[:])
	s = s[:min(len(s), nearestScanBytes)]
	t.nWant = max(len(s)-1, 0)
	for i := 0; i+1 < len(s); i++ {
		t.want[uint16(s[i])<<8|uint16(s[i+1])]++
	}
}

// dice is the Dice coefficient of the want line's byte pairs and line's,
// line cut to nearestScanBytes: 1 for the same pairs, 0 for none shared.
func (t *pairTable) dice(line string) float64 {
	line = line[:min(len(line), nearestScanBytes)]
	nl := max(len(line)-1, 0)
	if t.nWant+nl == 0 {
		return 0
	}
	shared := 0
	for i := 0; i+1 < len(line); i++ {
		k := uint16(line[i])<<8 | uint16(line[i+1])
		if t.seen[k] < t.want[k] {
			if t.seen[k] == 0 {
				t.touched = append(t.touched, k)
			}
			t.seen[k]++
			shared++
		}
	}
	for _, k := range t.touched {
		t.seen[k] = 0
	}
	t.touched = t.touched[:0]
	return 2 * float64(shared) / float64(t.nWant+nl)
}
