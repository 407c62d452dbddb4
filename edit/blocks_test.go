package edit

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseBlocks(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []Block
	}{
		{
			name:    "one block",
			content: "<<<<<<< SEARCH\nfoo\n=======\nbar\n>>>>>>> REPLACE\n",
			want:    []Block{{Search: "foo\n", Replace: "bar\n", Line: 1}},
		},
		{
			name:    "no final newline, empty replace",
			content: "<<<<<<< SEARCH\nfoo\n=======\n>>>>>>> REPLACE",
			want:    []Block{{Search: "foo\n", Replace: "", Line: 1}},
		},
		{
			name:    "one blank replace line differs from none",
			content: "<<<<<<< SEARCH\nfoo\n=======\n\n>>>>>>> REPLACE\n",
			want:    []Block{{Search: "foo\n", Replace: "\n", Line: 1}},
		},
		{
			name:    "anchors, long markers, trailing spaces, blank lines between",
			content: "\n<<<<<<<<<< SEARCH @12  \na\nb\n========= \nc\n>>>>>>>>>REPLACE\t\n\n  \n<<<<<<<SEARCH\t@3-7\nx\n=======\ny\n>>>>>>> REPLACE\n\n",
			want: []Block{
				{Search: "a\nb\n", Replace: "c\n", Anchor: &Anchor{12, 12}, Line: 2},
				{Search: "x\n", Replace: "y\n", Anchor: &Anchor{3, 7}, Line: 10},
			},
		},
		{
			name:    "CRLF content",
			content: "<<<<<<< SEARCH\r\nfoo\r\n=======\r\nbar\r\n>>>>>>> REPLACE\r\n",
			want:    []Block{{Search: "foo\n", Replace: "bar\n", Line: 1}},
		},
		{
			name:    "divider and non-markers inside bodies",
			content: "<<<<<<< SEARCH\n<<<<<<< HEAD\n<<<<<<< SEARCHING\n======= x\n=======\nTitle\n=======\n>>>>>>> other\n>>>>>>> REPLACE\n",
			want:    []Block{{Search: "<<<<<<< HEAD\n<<<<<<< SEARCHING\n======= x\n", Replace: "Title\n=======\n>>>>>>> other\n", Line: 1}},
		},
		{
			name:    "six chevrons is text",
			content: "<<<<<<< SEARCH\n<<<<<< SEARCH\n=======\n>>>>>> REPLACE\n>>>>>>> REPLACE\n",
			want:    []Block{{Search: "<<<<<< SEARCH\n", Replace: ">>>>>> REPLACE\n", Line: 1}},
		},
		{
			name:    "unicode bodies",
			content: "<<<<<<< SEARCH\nnaïve “quote” — 日本\n=======\nnaive \"quote\" - 日本\n>>>>>>> REPLACE\n",
			want:    []Block{{Search: "naïve “quote” — 日本\n", Replace: "naive \"quote\" - 日本\n", Line: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBlocks(tt.content)
			if err != nil {
				t.Fatalf("ParseBlocks(%q) error %v", tt.content, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseBlocks(%q) = %+v, want %+v", tt.content, got, tt.want)
			}
		})
	}
}

func TestParseBlocksErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		line    int
		msg     string // substring of the message
	}{
		{"empty", "", 0, "no <<<<<<< SEARCH blocks"},
		{"only blank", "\n  \n", 0, "no <<<<<<< SEARCH blocks"},
		{"text before", "hello\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", 1, "text outside a block"},
		{"text between", "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\nnote\n", 6, "text outside a block"},
		{"code fence", "```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n", 1, "text outside a block"},
		{"empty search", "<<<<<<< SEARCH\n=======\nb\n>>>>>>> REPLACE\n", 1, "empty SEARCH"},
		{"text only", "x\n", 1, "text outside"},
		{"whitespace search", "<<<<<<< SEARCH\n  \n\t\n=======\nb\n>>>>>>> REPLACE\n", 1, "empty SEARCH"},
		{"unterminated", "<<<<<<< SEARCH\na\n=======\nb\n", 1, "not terminated"},
		{"unterminated search", "<<<<<<< SEARCH\na\n", 1, "not terminated"},
		{"missing replace marker", "<<<<<<< SEARCH\na\n=======\nb\n<<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n", 5, "missing >>>>>>> REPLACE"},
		{"missing divider", "<<<<<<< SEARCH\na\n<<<<<<< SEARCH\n", 3, "missing ======="},
		{"replace before divider", "<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", 3, "before the ======= divider"},
		{"stray divider", "=======\n", 1, "outside a block"},
		{"stray replace", ">>>>>>> REPLACE\n", 1, "without a SEARCH"},
		{"bad anchor text", "<<<<<<< SEARCH foo\na\n=======\n>>>>>>> REPLACE\n", 1, "anchor"},
		{"zero anchor", "<<<<<<< SEARCH @0\na\n=======\n>>>>>>> REPLACE\n", 1, "anchor"},
		{"reversed anchor", "<<<<<<< SEARCH @9-3\na\n=======\n>>>>>>> REPLACE\n", 1, "ends before it starts"},
		{"huge anchor", "<<<<<<< SEARCH @12345678901\na\n=======\n>>>>>>> REPLACE\n", 1, "anchor"},
		{"junk after replace", "<<<<<<< SEARCH\na\n=======\n>>>>>>> REPLACE now\n", 4, "after REPLACE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBlocks(tt.content)
			var se *BlockSyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("ParseBlocks(%q) = %+v, %v, want *BlockSyntaxError", tt.content, got, err)
			}
			if se.Line != tt.line || !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("ParseBlocks(%q) error = line %d %q, want line %d containing %q", tt.content, se.Line, se.Msg, tt.line, tt.msg)
			}
		})
	}
}

func TestParseBlocksLimits(t *testing.T) {
	one := "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"
	if _, err := ParseBlocks(strings.Repeat(one, MaxBlocks)); err != nil {
		t.Errorf("ParseBlocks(%d blocks) error %v, want nil", MaxBlocks, err)
	}
	var se *BlockSyntaxError
	if _, err := ParseBlocks(strings.Repeat(one, MaxBlocks+1)); !errors.As(err, &se) || !strings.Contains(se.Msg, "more than 256 blocks") {
		t.Errorf("ParseBlocks(%d blocks) error %v, want more than %d blocks", MaxBlocks+1, err, MaxBlocks)
	}
	big := "<<<<<<< SEARCH\n" + strings.Repeat("x", MaxBlocksSize) + "\n=======\n>>>>>>> REPLACE\n"
	if _, err := ParseBlocks(big); !errors.As(err, &se) || se.Line != 0 {
		t.Errorf("ParseBlocks(%d bytes) error %v, want a size error", len(big), err)
	}
}

func TestRenderBlocksRoundTrip(t *testing.T) {
	blocks := []Block{
		{Search: "a\n\nb\n", Replace: "", Anchor: &Anchor{4, 4}},
		{Search: "c", Replace: "\n"},
		{Search: "d\n", Replace: "=======\ne", Anchor: &Anchor{1, 9}},
	}
	got, err := ParseBlocks(RenderBlocks(blocks))
	if err != nil {
		t.Fatalf("ParseBlocks(RenderBlocks) error %v", err)
	}
	want := []Block{
		{Search: "a\n\nb\n", Replace: "", Anchor: &Anchor{4, 4}, Line: 1},
		{Search: "c\n", Replace: "\n", Line: 7},
		{Search: "d\n", Replace: "=======\ne\n", Anchor: &Anchor{1, 9}, Line: 12},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseBlocks(RenderBlocks(b)) = %+v, want %+v", got, want)
	}
}

func FuzzSearchBlocks(f *testing.F) {
	for _, s := range []string{
		"<<<<<<< SEARCH\nfoo\n=======\nbar\n>>>>>>> REPLACE\n",
		"<<<<<<< SEARCH @3-4\r\nfoo\r\n=======\r\n>>>>>>> REPLACE",
		"<<<<<<<<< SEARCH\t@7 \n<<<<<<< HEAD\n========\n=======\n>>>>>>>>REPLACE  \n\n",
		"<<<<<<< SEARCH\na\r\r\n=======\n\r\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n",
		"=======\n", ">>>>>>> REPLACE", "<<<<<<< SEARCH @", "\x00\xff\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		blocks, err := ParseBlocks(content)
		if err != nil {
			var se *BlockSyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("ParseBlocks(%q) error %T %v, want *BlockSyntaxError", content, err, err)
			}
			if blocks != nil {
				t.Fatalf("ParseBlocks(%q) returned blocks with an error", content)
			}
			return
		}
		rendered := RenderBlocks(blocks)
		again, err := ParseBlocks(rendered)
		if err != nil {
			t.Fatalf("ParseBlocks(RenderBlocks(ParseBlocks(%q))) error %v; rendered %q", content, err, rendered)
		}
		if len(again) != len(blocks) {
			t.Fatalf("round trip of %q: %d blocks, want %d", content, len(again), len(blocks))
		}
		for i := range blocks {
			a, b := blocks[i], again[i]
			if a.Search != b.Search || a.Replace != b.Replace || !reflect.DeepEqual(a.Anchor, b.Anchor) {
				t.Fatalf("round trip of %q: block %d = %+v, want %+v", content, i, b, a)
			}
		}
		if RenderBlocks(again) != rendered {
			t.Fatalf("RenderBlocks is not stable for %q", content)
		}
	})
}
