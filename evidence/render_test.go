package evidence

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func snap(s string) *Snapshot {
	b := []byte(s)
	return &Snapshot{Path: "/w/f.txt", Bytes: b, Revision: RevisionOf(b), Size: int64(len(b))}
}

// numbered renders lines the documented way: the number, unpadded, a tab.
func numbered(first int, lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%d\t%s\n", first+i, l)
	}
	return b.String()
}

func TestRender(t *testing.T) {
	ten := ""
	for i := 1; i <= 10; i++ {
		ten += fmt.Sprintf("line %d\n", i)
	}
	lineCost := len(numbered(1, "line 1")) // 9 bytes for lines 1..9
	budget3 := (3*lineCost + BytesPerToken - 1) / BytesPerToken
	tests := []struct {
		name   string
		in     string
		r      Range
		budget int
		want   View // Path and Revision are checked separately
	}{
		{"empty file", "", All, 100, View{}},
		{"whole", "a\nb", All, 100, View{TotalLines: 2, Shown: Range{1, 2}, Text: numbered(1, "a", "b")}},
		{"crlf stripped in text", "a\r\nb\r\n", All, 100, View{TotalLines: 2, Shown: Range{1, 2}, Text: numbered(1, "a", "b")}},
		{"blank last line", "a\n\n", All, 100, View{TotalLines: 2, Shown: Range{1, 2}, Text: numbered(1, "a", "")}},
		{"unicode", "héllo\n世界", All, 100, View{TotalLines: 2, Shown: Range{1, 2}, Text: numbered(1, "héllo", "世界")}},
		{"one line", ten, Range{4, 4}, 100, View{TotalLines: 10, Shown: Range{4, 4}, Text: numbered(4, "line 4")}},
		{"end past eof clamps", ten, Range{9, 50}, 100, View{TotalLines: 10, Shown: Range{9, 10}, Text: numbered(9, "line 9", "line 10")}},
		{"start past eof", ten, Range{11, 0}, 100, View{TotalLines: 10}},
		{
			"truncated open", ten, Range{2, 0}, budget3,
			View{TotalLines: 10, Shown: Range{2, 4}, Text: numbered(2, "line 2", "line 3", "line 4"), Truncated: true, Continuation: "/w/f.txt:5-"},
		},
		{
			"truncated closed", ten, Range{2, 8}, budget3,
			View{TotalLines: 10, Shown: Range{2, 4}, Text: numbered(2, "line 2", "line 3", "line 4"), Truncated: true, Continuation: "/w/f.txt:5-8"},
		},
		{
			"truncated leaves one line", ten, Range{2, 5}, budget3,
			View{TotalLines: 10, Shown: Range{2, 4}, Text: numbered(2, "line 2", "line 3", "line 4"), Truncated: true, Continuation: "/w/f.txt:5-5"},
		},
		{
			"exact fit is not truncated", ten, Range{2, 4}, budget3,
			View{TotalLines: 10, Shown: Range{2, 4}, Text: numbered(2, "line 2", "line 3", "line 4")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snap(tt.in)
			got := Render(s, tt.r, tt.budget)
			if got.Path != s.Path || got.Revision != s.Revision {
				t.Errorf("Render: Path, Revision = %q, %q, want %q, %q", got.Path, got.Revision, s.Path, s.Revision)
			}
			got.Path, got.Revision = "", ""
			tt.want.Tokens = tokensOf(len(tt.want.Text))
			if got != tt.want {
				t.Errorf("Render(%q, %v, %d) =\n%#v\nwant\n%#v", truncateForError(tt.in), tt.r, tt.budget, got, tt.want)
			}
			if got.Tokens > tt.budget {
				t.Errorf("Render: Tokens %d over budget %d", got.Tokens, tt.budget)
			}
		})
	}
}

func TestRenderHugeLine(t *testing.T) {
	huge := strings.Repeat("é", 100_000) // 200,000 bytes, 2-byte runes
	s := snap("short\n" + huge + "\nafter\n")

	// The huge line after a short one: stop before it.
	v := Render(s, All, 1000)
	if v.Shown != (Range{1, 1}) || !v.Truncated || v.Continuation != "/w/f.txt:2-" || v.PartialLine != 0 {
		t.Errorf("Render(all) = Shown %v Truncated %v Continuation %q PartialLine %d, want 1-1, true, %q, 0",
			v.Shown, v.Truncated, v.Continuation, v.PartialLine, "/w/f.txt:2-")
	}

	// Asked for directly: shown cut, counted as nothing.
	v = Render(s, Range{2, 0}, 1000)
	if !v.Shown.IsZero() || !v.Truncated || v.PartialLine != 2 || v.Continuation != "/w/f.txt:3-" {
		t.Errorf("Render(2-) = Shown %v Truncated %v PartialLine %d Continuation %q, want zero, true, 2, %q",
			v.Shown, v.Truncated, v.PartialLine, v.Continuation, "/w/f.txt:3-")
	}
	if !utf8.ValidString(v.Text) || !strings.Contains(v.Text, "not counted as read]") || !strings.HasPrefix(v.Text, "2\té") {
		t.Errorf("Render(2-).Text = %.80q..., want a cut valid UTF-8 line with a marker", v.Text)
	}
	if len(v.Text) > 1000*BytesPerToken {
		t.Errorf("Render(2-).Text is %d bytes, over the budget of %d", len(v.Text), 1000*BytesPerToken)
	}

	// The huge line alone: nothing left to continue with.
	v = Render(s, Range{2, 2}, 1000)
	if !v.Shown.IsZero() || !v.Truncated || v.PartialLine != 2 || v.Continuation != "" {
		t.Errorf("Render(2) = Shown %v Truncated %v PartialLine %d Continuation %q, want zero, true, 2, empty",
			v.Shown, v.Truncated, v.PartialLine, v.Continuation)
	}

	// A budget too small even for the marker still renders the number and marker.
	v = Render(snap("abcdef\n"), All, 1)
	if !v.Shown.IsZero() || v.PartialLine != 1 || !strings.Contains(v.Text, "[line cut: 0 of 6 bytes shown") {
		t.Errorf("Render(budget 1) = %#v", v)
	}
}

func TestRenderBinary(t *testing.T) {
	s := snap("abc\x00def\nghi\n")
	v := Render(s, All, 100)
	if !v.Binary || !v.Shown.IsZero() || v.Truncated || !strings.HasPrefix(v.Text, "[binary file: 12 bytes, sha256:") || v.TotalLines != 2 {
		t.Errorf("Render(binary) = %#v", v)
	}
	// A NUL after the sniffed prefix does not make the file binary.
	late := strings.Repeat("a", BinarySniffLen) + "\x00\n"
	if v := Render(snap(late), All, 100_000); v.Binary || v.Shown != (Range{1, 1}) {
		t.Errorf("Render(late NUL) Binary %v Shown %v, want false, 1-1", v.Binary, v.Shown)
	}
}

func TestRenderDefaultBudget(t *testing.T) {
	var b strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&b, "this is line number %d of a long file\n", i+1)
	}
	v := Render(snap(b.String()), All, 0)
	if !v.Truncated || v.Tokens > DefaultTokenBudget || v.Shown.Start != 1 {
		t.Errorf("Render(budget 0) Truncated %v Tokens %d Shown %v, want truncated within %d", v.Truncated, v.Tokens, v.Shown, DefaultTokenBudget)
	}
	// The continuation, parsed and rendered, picks up exactly after Shown.
	_, r, _, err := ParsePathSpec(v.Continuation)
	if err != nil || r.Start != v.Shown.End+1 || r.End != 0 {
		t.Errorf("ParsePathSpec(%q) = %v, %v, want %d-", v.Continuation, r, err, v.Shown.End+1)
	}
}

// TestRenderLineNumberWidth: the gutter is the number and a tab, no
// padding, whatever the range; numbers of any size are whole.
func TestRenderLineNumberWidth(t *testing.T) {
	var src strings.Builder
	for i := 1; i <= 1200; i++ {
		src.WriteString("x\n")
	}
	s := snap(src.String())
	cases := []struct {
		name string
		r    Range
		want string // the first and last rendered lines
	}{
		{"nine lines", Range{Start: 1, End: 9}, "1\tx\n9\tx\n"},
		{"to line 236", Range{Start: 1, End: 236}, "1\tx\n236\tx\n"},
		{"from line 100", Range{Start: 100, End: 120}, "100\tx\n120\tx\n"},
		{"whole file", Range{Start: 1}, "1\tx\n1200\tx\n"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			v := Render(s, tt.r, 0)
			rows := strings.SplitAfter(strings.TrimSuffix(v.Text, "\n"), "\n")
			if got := rows[0] + rows[len(rows)-1] + "\n"; got != tt.want {
				t.Errorf("Render(%v) first and last lines = %q, want %q", tt.r, got, tt.want)
			}
		})
	}
}

// TestRenderFramedMatchesRender: the framed text is the frame's head, the
// very text Render gives and the tail; the view is Render's; the frame sees
// the finished view (Text still empty) — for whole, cut, truncated, binary,
// empty and out-of-range renderings.
func TestRenderFramedMatchesRender(t *testing.T) {
	long := strings.Repeat("a long line of text ", 40)
	cases := []struct {
		name   string
		s      *Snapshot
		r      Range
		budget int
	}{
		{"whole", snap("one\ntwo\r\nthree"), All, 100},
		{"truncated", snap(strings.Repeat("line\n", 50)), Range{Start: 3, End: 40}, 20},
		{"to the end", snap(strings.Repeat("line\n", 50)), Range{Start: 3}, 20},
		{"cut", snap(long + "\nshort\n"), All, 10},
		{"binary", snap("bin\x00ary"), All, 100},
		{"empty", snap(""), All, 100},
		{"past the end", snap("a\nb\n"), Range{Start: 9}, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := Render(c.s, c.r, c.budget)
			var seen View
			got, full := RenderFramed(c.s, c.r, c.budget, func(v View) (string, string) {
				seen = v
				return "HEAD " + v.Shown.String() + "\n", "TAIL " + v.Continuation + "\n"
			})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("view\n got %+v\nwant %+v", got, want)
			}
			if head, tail := "HEAD "+want.Shown.String()+"\n", "TAIL "+want.Continuation+"\n"; full != head+want.Text+tail {
				t.Fatalf("framed text %q, want %q", full, head+want.Text+tail)
			}
			want.Text, want.Tokens = "", seen.Tokens
			if !reflect.DeepEqual(seen, want) {
				t.Fatalf("frame saw %+v, want %+v", seen, want)
			}
		})
	}
}
