package edit

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func blk(search, replace string) Block { return Block{Search: search, Replace: replace} }

func anchored(search, replace string, start, end int) Block {
	return Block{Search: search, Replace: replace, Anchor: &Anchor{start, end}}
}

const twoFuncs = "func a() {\n\treturn nil\n}\nfunc b() {\n\treturn nil\n}\n"

func TestApply(t *testing.T) {
	tests := []struct {
		name     string
		original string
		blocks   []Block
		want     string
		tols     []string
		lines    [][2]int // StartLine, EndLine per block; nil to skip
	}{
		{
			name:     "exact",
			original: "a\nb\nc\n",
			blocks:   []Block{blk("b\n", "B\n")},
			want:     "a\nB\nc\n",
			lines:    [][2]int{{2, 2}},
		},
		{
			name:     "exact without final newline in bodies",
			original: "a\nb\nc\n",
			blocks:   []Block{blk("a\nb", "x")},
			want:     "x\nc\n",
			lines:    [][2]int{{1, 2}},
		},
		{
			name:     "delete lines",
			original: "a\nb\nc\n",
			blocks:   []Block{blk("b\n", "")},
			want:     "a\nc\n",
		},
		{
			name:     "replace by one blank line",
			original: "a\nb\nc\n",
			blocks:   []Block{blk("b\n", "\n")},
			want:     "a\n\nc\n",
		},
		{
			name:     "indentation added and replacement re-indented",
			original: "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
			blocks:   []Block{blk("if x {\n\treturn 1\n}\n", "if y {\n\treturn 2\n\n}\n")},
			want:     "func f() {\n\tif y {\n\t\treturn 2\n\n\t}\n}\n",
			tols:     []string{ToleranceIndentation},
			lines:    [][2]int{{2, 4}},
		},
		{
			name:     "indentation removed and replacement dedented",
			original: "x = 1\nif y:\n    z = 2\n",
			blocks:   []Block{blk("        if y:\n            z = 2\n", "        if y:\n            z = 3\n    w = 0\n")},
			want:     "x = 1\nif y:\n    z = 3\nw = 0\n",
			tols:     []string{ToleranceIndentation},
		},
		{
			name:     "line numbers, tab style, stripped from replacement too",
			original: "a\nb\nc\nd\ne\n",
			blocks:   []Block{blk("     3\tc\n     4\td\n", "     3\tC\n     4\tD\n")},
			want:     "a\nb\nC\nD\ne\n",
			tols:     []string{ToleranceLineNumbers},
			lines:    [][2]int{{3, 4}},
		},
		{
			name:     "line numbers, colon style, plain replacement",
			original: "a\nb\n  c\nd\n",
			blocks:   []Block{blk("3:   c\n4: d\n", "  C\nD\n")},
			want:     "a\nb\n  C\nD\n",
			tols:     []string{ToleranceLineNumbers},
		},
		{
			name:     "line numbers with an empty numbered line",
			original: "a\n\nb\n",
			blocks:   []Block{blk("1\ta\n2\n3\tb\n", "x\n")},
			want:     "x\n",
			tols:     []string{ToleranceLineNumbers},
		},
		{
			name:     "unicode punctuation in SEARCH, replacement made ASCII",
			original: "say(\"hello\") - ok...\n",
			blocks:   []Block{blk("say(“hello”) — ok…\n", "say(“bye”) — ok…\n")},
			want:     "say(\"bye\") - ok...\n",
			tols:     []string{ToleranceUnicodePunctuation},
		},
		{
			name:     "unicode punctuation in the file, replacement kept",
			original: "it’s “fine”\n",
			blocks:   []Block{blk("it's \"fine\"\n", "it’s “great”\n")},
			want:     "it’s “great”\n",
			tols:     []string{ToleranceUnicodePunctuation},
		},
		{
			name:     "extra blank lines in the file",
			original: "a\n\n\nb\nc\n",
			blocks:   []Block{blk("a\nb\n", "X\n")},
			want:     "X\nc\n",
			tols:     []string{ToleranceBlankLines},
			lines:    [][2]int{{1, 4}},
		},
		{
			name:     "extra blank lines in SEARCH",
			original: "a\nb\nc\n",
			blocks:   []Block{blk("a\n\n\nb\n", "X\n")},
			want:     "X\nc\n",
			tols:     []string{ToleranceBlankLines},
		},
		{
			name:     "trailing whitespace",
			original: "a  \nb\t\nc\n",
			blocks:   []Block{blk("a\nb   \n", "A\nB\n")},
			want:     "A\nB\nc\n",
			tols:     []string{ToleranceTrailingWhitespace},
		},
		{
			name:     "substring inside one line",
			original: "x := compute(a, b) + 1\ny\n",
			blocks:   []Block{blk("compute(a, b)", "compute(b, a)")},
			want:     "x := compute(b, a) + 1\ny\n",
			tols:     []string{ToleranceSubstringInLine},
			lines:    [][2]int{{1, 1}},
		},
		{
			name:     "substring replaced by two lines keeps CRLF",
			original: "a\r\nfoo(bar)\r\n",
			blocks:   []Block{blk("bar\n", "x,\ny\n")},
			want:     "a\r\nfoo(x,\r\ny)\r\n",
			tols:     []string{ToleranceSubstringInLine},
		},
		{
			name:     "over-escaped quotes",
			original: "print(\"hi\")\n",
			blocks:   []Block{blk(`print(\"hi\")`+"\n", `print(\"bye\")`+"\n")},
			want:     "print(\"bye\")\n",
			tols:     []string{ToleranceOverEscapedQuotes},
		},
		{
			name:     "three tolerances at once stay within budget",
			original: "if x {\n\ty := “a”  \n}\n",
			blocks:   []Block{blk("    if x {\n    \ty := \"a\"\n    }\n", "    if x {\n    \ty := \"b\"\n    }\n")},
			want:     "if x {\n\ty := \"b\"\n}\n",
			tols:     []string{ToleranceIndentation, ToleranceUnicodePunctuation, ToleranceTrailingWhitespace},
		},
		{
			name:     "CRLF kept in replaced lines",
			original: "a\r\nb\r\nc\r\n",
			blocks:   []Block{blk("b\n", "B1\nB2\n")},
			want:     "a\r\nB1\r\nB2\r\nc\r\n",
		},
		{
			name:     "CRLF with indentation drift",
			original: "x\r\n\tb\r\n\tc\r\n",
			blocks:   []Block{blk("b\r\nc\r\n", "B\r\n\tC\r\n")},
			want:     "x\r\n\tB\r\n\t\tC\r\n",
			tols:     []string{ToleranceIndentation},
		},
		{
			name:     "no trailing newline kept",
			original: "a\nb",
			blocks:   []Block{blk("b\n", "B\nC\n")},
			want:     "a\nB\nC",
		},
		{
			name:     "single line without newline, CRLF elsewhere",
			original: "a\r\nb",
			blocks:   []Block{blk("b", "B\nC")},
			want:     "a\r\nB\r\nC",
		},
		{
			name:     "unicode text",
			original: "日本語\nnaïve ñ\n🙂\n",
			blocks:   []Block{blk("naïve ñ\n", "наивный\n")},
			want:     "日本語\nнаивный\n🙂\n",
		},
		{
			name:     "neighbour disambiguates a repeated snippet",
			original: twoFuncs,
			blocks:   []Block{blk("func b() {\n", "func b2() {\n"), blk("\treturn nil\n", "\treturn err\n")},
			want:     "func a() {\n\treturn nil\n}\nfunc b2() {\n\treturn err\n}\n",
			lines:    [][2]int{{4, 4}, {5, 5}},
		},
		{
			name:     "blocks out of order",
			original: "a\nb\nc\n",
			blocks:   []Block{blk("c\n", "C\n"), blk("a\n", "A\n")},
			want:     "A\nb\nC\n",
			lines:    [][2]int{{3, 3}, {1, 1}},
		},
		{
			name:     "anchor @N pins an occurrence",
			original: twoFuncs,
			blocks:   []Block{anchored("\treturn nil\n", "\treturn err\n", 2, 2)},
			want:     "func a() {\n\treturn err\n}\nfunc b() {\n\treturn nil\n}\n",
		},
		{
			name:     "anchor @A-B pins the occurrence inside",
			original: twoFuncs,
			blocks:   []Block{anchored("\treturn nil\n", "\treturn err\n", 4, 6)},
			want:     "func a() {\n\treturn nil\n}\nfunc b() {\n\treturn err\n}\n",
		},
		{
			name:     "anchor slightly off pins the nearest",
			original: twoFuncs,
			blocks:   []Block{anchored("\treturn nil\n", "\treturn err\n", 7, 7)},
			want:     "func a() {\n\treturn nil\n}\nfunc b() {\n\treturn err\n}\n",
		},
		{
			name:     "stale anchor falls back to search",
			original: twoFuncs,
			blocks:   []Block{anchored("func b() {\n", "func c() {\n", 40, 40)},
			want:     "func a() {\n\treturn nil\n}\nfunc c() {\n\treturn nil\n}\n",
			tols:     []string{ToleranceStaleAnchor},
		},
		{
			name:     "leaked line numbers disambiguate",
			original: twoFuncs,
			blocks:   []Block{blk("     5\t\treturn nil\n", "     5\t\treturn err\n")},
			want:     "func a() {\n\treturn nil\n}\nfunc b() {\n\treturn err\n}\n",
			tols:     []string{ToleranceLineNumbers},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(tt.original, tt.blocks)
			if err != nil {
				t.Fatalf("Apply(%q, %+v) error %v", tt.original, tt.blocks, err)
			}
			if got.Content != tt.want {
				t.Errorf("Apply(%q).Content = %q, want %q", tt.original, got.Content, tt.want)
			}
			if !slices.Equal(got.Tolerances, tt.tols) {
				t.Errorf("Apply(%q).Tolerances = %q, want %q", tt.original, got.Tolerances, tt.tols)
			}
			if len(got.Matches) != len(tt.blocks) {
				t.Fatalf("Apply(%q) gave %d matches, want %d", tt.original, len(got.Matches), len(tt.blocks))
			}
			for i, want := range tt.lines {
				m := got.Matches[i]
				if m.Block != i || m.StartLine != want[0] || m.EndLine != want[1] {
					t.Errorf("Apply(%q).Matches[%d] = %+v, want block %d lines %d-%d", tt.original, i, m, i, want[0], want[1])
				}
			}
			checkOutside(t, tt.original, got)
		})
	}
}

// checkOutside verifies that every byte of original outside the matched
// ranges survives, in order, in the result.
func checkOutside(t *testing.T, original string, a *Applied) {
	t.Helper()
	ms := slices.Clone(a.Matches)
	slices.SortFunc(ms, func(x, y Match) int { return x.From - y.From })
	out := a.Content
	if !strings.HasPrefix(out, original[:ms[0].From]) {
		t.Fatalf("bytes before the first match changed: %q, want prefix %q", out, original[:ms[0].From])
	}
	if !strings.HasSuffix(out, original[ms[len(ms)-1].To:]) {
		t.Fatalf("bytes after the last match changed: %q, want suffix %q", out, original[ms[len(ms)-1].To:])
	}
	pos := ms[0].From
	for i := 1; i < len(ms); i++ {
		gap := original[ms[i-1].To:ms[i].From]
		j := strings.Index(out[pos:], gap)
		if j < 0 {
			t.Fatalf("bytes between matches %d and %d (%q) are missing from %q", i-1, i, gap, out)
		}
		pos += j + len(gap)
	}
}

func TestApplyRefusals(t *testing.T) {
	tests := []struct {
		name       string
		original   string
		blocks     []Block
		block      int
		kind       MatchKind
		candidates []int
		tols       []string
		nearest    *Nearest
	}{
		{
			name:       "ambiguous lists candidates",
			original:   "x\ny\nx\n",
			blocks:     []Block{blk("x\n", "z\n")},
			kind:       Ambiguous,
			candidates: []int{1, 3},
		},
		{
			name:       "ambiguous inside one anchor range",
			original:   twoFuncs,
			blocks:     []Block{anchored("\treturn nil\n", "", 1, 6)},
			kind:       Ambiguous,
			candidates: []int{2, 5},
		},
		{
			name:       "neighbour does not help when nothing follows it",
			original:   "x\ny\nx\nz\n",
			blocks:     []Block{blk("z\n", "Z\n"), blk("x\n", "X\n")},
			block:      1,
			kind:       Ambiguous,
			candidates: []int{1, 3},
		},
		{
			name:       "substring in several lines is ambiguous",
			original:   "f(a)\ng(a)\n",
			blocks:     []Block{blk("(a)", "(b)")},
			kind:       Ambiguous,
			candidates: []int{1, 2},
		},
		{
			name:     "not found shows the nearest window with ~ lines",
			original: "one\ntwo\nthree\nfour\nfive\nsix\n",
			blocks:   []Block{blk("three\nFOUR!\nfive\n", "x\n")},
			kind:     NotFound,
			nearest:  &Nearest{StartLine: 3, EndLine: 5, Equal: 2, Text: "  3\tthree\n~ 4\tfour\n  5\tfive"},
		},
		{
			name:     "not found with no equal line shows the most similar one",
			original: "package p\n\nfunc parse(input string) error {\n\treturn nil\n}\n",
			blocks:   []Block{blk("func parse(inptu string) eror {\n", "x\n")},
			kind:     NotFound,
			nearest:  &Nearest{StartLine: 3, EndLine: 3, Equal: 0, Text: "~ 3\tfunc parse(input string) error {"},
		},
		{
			name:     "not found with nothing in common",
			original: "one\ntwo\n",
			blocks:   []Block{blk("zzz\n", "x\n")},
			kind:     NotFound,
		},
		{
			name:     "not found in an empty file",
			original: "",
			blocks:   []Block{blk("zzz\n", "x\n")},
			kind:     NotFound,
		},
		{
			name:       "too fuzzy: four tolerances",
			original:   "if x {\n\n\ty := “a”  \n}\n",
			blocks:     []Block{blk("    if x {\n    \ty := \"a\"\n    }\n", "")},
			kind:       TooFuzzy,
			candidates: []int{1},
			tols:       []string{ToleranceIndentation, ToleranceUnicodePunctuation, ToleranceBlankLines, ToleranceTrailingWhitespace},
		},
		{
			name:       "too fuzzy: three tolerances and a stale anchor",
			original:   "if x {\n\ty := “a”  \n}\n",
			blocks:     []Block{anchored("    if x {\n    \ty := \"a\"\n    }\n", "", 90, 92)},
			kind:       TooFuzzy,
			candidates: []int{1},
			tols:       []string{ToleranceIndentation, ToleranceUnicodePunctuation, ToleranceTrailingWhitespace, ToleranceStaleAnchor},
		},
		{
			name:       "overlap with an earlier block",
			original:   "a\nb\nc\n",
			blocks:     []Block{blk("a\nb\n", "x\n"), blk("b\nc\n", "y\n")},
			block:      1,
			kind:       Overlap,
			candidates: []int{2},
		},
		{
			name:     "second block fails, nothing applied",
			original: "a\nb\n",
			blocks:   []Block{blk("a\n", "A\n"), blk("q\n", "Q\n")},
			block:    1,
			kind:     NotFound,
		},
		{
			name:     "inconsistent indentation is not a match",
			original: "a\n  b\n",
			blocks:   []Block{blk("  a\nb\n", "")},
			kind:     NotFound,
			nearest:  &Nearest{StartLine: 1, EndLine: 2, Equal: 2, Text: "  1\ta\n  2\t  b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(tt.original, tt.blocks)
			var me *MatchError
			if !errors.As(err, &me) {
				t.Fatalf("Apply(%q) = %+v, %v, want *MatchError", tt.original, got, err)
			}
			if got != nil {
				t.Errorf("Apply(%q) returned a result with an error", tt.original)
			}
			if me.Block != tt.block || me.Kind != tt.kind {
				t.Errorf("Apply(%q) error = block %d %v, want block %d %v", tt.original, me.Block, me.Kind, tt.block, tt.kind)
			}
			if !slices.Equal(me.Candidates, tt.candidates) {
				t.Errorf("Apply(%q) candidates = %v, want %v", tt.original, me.Candidates, tt.candidates)
			}
			if !slices.Equal(me.Tolerances, tt.tols) {
				t.Errorf("Apply(%q) tolerances = %q, want %q", tt.original, me.Tolerances, tt.tols)
			}
			if !reflect.DeepEqual(me.Nearest, tt.nearest) {
				t.Errorf("Apply(%q) nearest = %+v, want %+v", tt.original, me.Nearest, tt.nearest)
			}
			if me.Error() == "" || !strings.HasPrefix(me.Error(), "edit: SEARCH block ") {
				t.Errorf("MatchError.Error() = %q", me.Error())
			}
		})
	}
}

func TestApplyInvalidInput(t *testing.T) {
	var se *BlockSyntaxError
	if _, err := Apply("a\n", []Block{blk(" \n", "x")}); !errors.As(err, &se) {
		t.Errorf("Apply(empty SEARCH) error %v, want *BlockSyntaxError", err)
	}
	if _, err := Apply("a\n", []Block{anchored("a", "x", 3, 2)}); !errors.As(err, &se) {
		t.Errorf("Apply(reversed anchor) error %v, want *BlockSyntaxError", err)
	}
	if _, err := Apply("a\n", make([]Block, MaxBlocks+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Apply(%d blocks) error %v, want ErrTooLarge", MaxBlocks+1, err)
	}
}

// bigFile returns n lines of Go-like code with many repeated lines.
func bigFile(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		switch i % 5 {
		case 0:
			lines[i] = fmt.Sprintf("func f%d(x int) int {", i)
		case 1:
			lines[i] = fmt.Sprintf("\tv := x * %d", i)
		case 2:
			lines[i] = "\treturn v"
		case 3:
			lines[i] = "}"
		default:
			lines[i] = ""
		}
	}
	return lines
}

func TestApplyLargeNotFoundIsFast(t *testing.T) {
	lines := bigFile(10000)
	original := strings.Join(lines, "\n") + "\n"
	search := slices.Clone(lines[5000:5050])
	search[26] = "\tv := changed"
	start := time.Now()
	_, err := Apply(original, []Block{blk(strings.Join(search, "\n")+"\n", "x")})
	elapsed := time.Since(start)
	var me *MatchError
	if !errors.As(err, &me) || me.Kind != NotFound || me.Nearest == nil || me.Nearest.StartLine != 5001 || me.Nearest.Equal != 49 {
		t.Fatalf("Apply(50-line miss) error %v (nearest %+v), want NotFound near line 5001 with 49 equal", err, me.Nearest)
	}
	if !strings.Contains(me.Nearest.Text, "~ 5027\t\tv := x * 5026") {
		t.Errorf("nearest text lacks the ~ line:\n%s", me.Nearest.Text)
	}
	if elapsed > 2*time.Second {
		t.Errorf("Apply(10,000 lines, 50-line miss) took %v, want well under 2s", elapsed)
	}
}

func BenchmarkMatcher10k(b *testing.B) {
	lines := bigFile(10000)
	original := strings.Join(lines, "\n") + "\n"
	var search, replace []string
	for _, l := range lines[9900:9905] {
		search = append(search, "    "+l)
		replace = append(replace, "    "+strings.ReplaceAll(l, "return v", "return v + 1"))
	}
	block := blk(strings.Join(search, "\n")+"\n", strings.Join(replace, "\n")+"\n")
	b.ReportAllocs()
	for b.Loop() {
		a, err := Apply(original, []Block{block})
		if err != nil || !slices.Equal(a.Tolerances, []string{ToleranceIndentation}) {
			b.Fatalf("Apply = %v, %v", a, err)
		}
	}
}

func BenchmarkMatcher10kNotFound(b *testing.B) {
	lines := bigFile(10000)
	original := strings.Join(lines, "\n") + "\n"
	search := slices.Clone(lines[5000:5050])
	search[26] = "\tv := changed"
	block := blk(strings.Join(search, "\n")+"\n", "x")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Apply(original, []Block{block}); err == nil {
			b.Fatal("Apply succeeded, want NotFound")
		}
	}
}

func FuzzMatcher(f *testing.F) {
	f.Add("a\nb\nc\n", uint8(1), uint8(1), uint8(0), "B\n", uint8(0))
	f.Add(twoFuncs, uint8(1), uint8(0), uint8(1), "\treturn err", uint8(3))
	f.Add("x\r\n\ty := “a”  \r\n}", uint8(1), uint8(1), uint8(0xff), "z", uint8(2))
	f.Add("if x {\n\tprint(\"hi\")\n}\n", uint8(0), uint8(2), uint8(0x22), "", uint8(1))
	f.Fuzz(func(t *testing.T, original string, start, n, perturb uint8, replace string, second uint8) {
		if len(original) > 1<<16 || len(replace) > 1<<12 {
			return
		}
		src := splitSource(original)
		if len(src) == 0 {
			return
		}
		mk := func(start, n int) Block {
			s := start % len(src)
			e := min(len(src), s+n%6+1)
			var lines []string
			for i, l := range src[s:e] {
				text := l.text
				if perturb&1 != 0 {
					text = "  " + text
				}
				if perturb&2 != 0 {
					text += " \t"
				}
				if perturb&4 != 0 {
					text = strings.ReplaceAll(text, `"`, "“")
				}
				if perturb&8 != 0 {
					text = fmt.Sprintf("%6d\t%s", s+i+1, text)
				}
				if perturb&16 != 0 && i == 0 {
					lines = append(lines, "")
				}
				if perturb&32 != 0 {
					text = strings.ReplaceAll(text, `"`, `\"`)
				}
				lines = append(lines, text)
			}
			b := Block{Search: strings.Join(lines, "\n") + "\n", Replace: replace}
			if perturb&64 != 0 {
				b.Anchor = &Anchor{s + 1, e}
			}
			return b
		}
		blocks := []Block{mk(int(start), int(n))}
		if second != 0 {
			blocks = append(blocks, mk(int(start)+int(second), int(n)))
		}
		got, err := Apply(original, blocks)
		if err != nil {
			var me *MatchError
			var se *BlockSyntaxError
			if !errors.As(err, &me) && !errors.As(err, &se) {
				t.Fatalf("Apply error %T %v, want *MatchError or *BlockSyntaxError", err, err)
			}
			if got != nil {
				t.Fatal("Apply returned a result with an error")
			}
			_ = err.Error()
			return
		}
		if len(got.Matches) != len(blocks) {
			t.Fatalf("Apply gave %d matches for %d blocks", len(got.Matches), len(blocks))
		}
		for _, m := range got.Matches {
			if m.From < 0 || m.To < m.From || m.To > len(original) || m.StartLine < 1 || m.EndLine < m.StartLine || m.EndLine > len(src) {
				t.Fatalf("bad match %+v for a %d-byte, %d-line original", m, len(original), len(src))
			}
		}
		checkOutside(t, original, got)
	})
}
