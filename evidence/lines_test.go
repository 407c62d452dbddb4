package evidence

import (
	"errors"
	"strings"
	"testing"
)

func TestIndexLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // each line with its terminator
	}{
		{"empty", "", nil},
		{"one newline", "\n", []string{"\n"}},
		{"no trailing newline", "a\nb", []string{"a\n", "b"}},
		{"trailing newline", "a\nb\n", []string{"a\n", "b\n"}},
		{"crlf", "a\r\nb\r\n", []string{"a\r\n", "b\r\n"}},
		{"crlf no trailing", "a\r\nb", []string{"a\r\n", "b"}},
		{"mixed", "a\r\nb\nc\r", []string{"a\r\n", "b\n", "c\r"}},
		{"lone cr is not a break", "a\rb\n", []string{"a\rb\n"}},
		{"blank lines", "\n\n\n", []string{"\n", "\n", "\n"}},
		{"unicode", "héllo\n世界\n🙂", []string{"héllo\n", "世界\n", "🙂"}},
		{"huge line", strings.Repeat("x", 1<<20) + "\ny", []string{strings.Repeat("x", 1<<20) + "\n", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := IndexLines([]byte(tt.in))
			if l.Count() != len(tt.want) {
				t.Fatalf("IndexLines(%.20q).Count() = %d, want %d", tt.in, l.Count(), len(tt.want))
			}
			var joined strings.Builder
			for i, w := range tt.want {
				if got := string(l.Line(i + 1)); got != w {
					t.Errorf("Line(%d) = %.20q, want %.20q", i+1, got, w)
				}
				wantText := strings.TrimSuffix(strings.TrimSuffix(w, "\n"), "\r")
				if !strings.HasSuffix(w, "\n") {
					wantText = w
				}
				if got := string(l.Text(i + 1)); got != wantText {
					t.Errorf("Text(%d) = %.20q, want %.20q", i+1, got, wantText)
				}
				joined.WriteString(w)
			}
			if joined.String() != tt.in {
				t.Errorf("lines do not join back to the input")
			}
			if l.Count() > 0 {
				s, e := l.RangeSpan(Range{1, l.Count()})
				if s != 0 || e != len(tt.in) {
					t.Errorf("RangeSpan(all) = %d, %d, want 0, %d", s, e, len(tt.in))
				}
			}
		})
	}
}

func TestSpanPanicsOutOfRange(t *testing.T) {
	for _, n := range []int{0, 3, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Span(%d) on 2 lines did not panic", n)
				}
			}()
			IndexLines([]byte("a\nb")).Span(n)
		}()
	}
}

func TestParsePathSpec(t *testing.T) {
	tests := []struct {
		spec     string
		path     string
		r        Range
		hasRange bool
	}{
		{"a.go", "a.go", All, false},
		{"a.go:7", "a.go", Range{7, 7}, true},
		{"a.go:3-9", "a.go", Range{3, 9}, true},
		{"a.go:3-3", "a.go", Range{3, 3}, true},
		{"a.go:90-", "a.go", Range{90, 0}, true},
		{"a.go:-12", "a.go", Range{1, 12}, true},
		{"a.go:007", "a.go", Range{7, 7}, true},
		{"/x/y:z/a.go", "/x/y:z/a.go", All, false},
		{"/x/y:z/a.go:5-", "/x/y:z/a.go", Range{5, 0}, true},
		{"notes:12:1-", "notes:12", Range{1, 0}, true},
		{"a:b", "a:b", All, false},
		{"x:", "x:", All, false},
		{"x:-", "x:-", All, false},
		{"x:1-2-3", "x:1-2-3", All, false},
		{"x:1a", "x:1a", All, false},
		{"x:+1", "x:+1", All, false},
		{"x: 1", "x: 1", All, false},
		{"x:１", "x:１", All, false}, // fullwidth digit is not a digit here
		{"dir/ünï:2", "dir/ünï", Range{2, 2}, true},
	}
	for _, tt := range tests {
		path, r, has, err := ParsePathSpec(tt.spec)
		if err != nil || path != tt.path || r != tt.r || has != tt.hasRange {
			t.Errorf("ParsePathSpec(%q) = %q, %v, %v, %v, want %q, %v, %v, nil", tt.spec, path, r, has, err, tt.path, tt.r, tt.hasRange)
		}
	}
}

func TestParsePathSpecErrors(t *testing.T) {
	for _, spec := range []string{
		"", ":5", ":1-2", "a:0", "a:0-3", "a:-0", "a:0-", "a:5-3",
		"a:99999999999999999999999", "a:1-1073741825", "a:1073741825",
	} {
		_, _, _, err := ParsePathSpec(spec)
		var re *RangeError
		if !errors.As(err, &re) {
			t.Errorf("ParsePathSpec(%q) error = %v, want *RangeError", spec, err)
		}
	}
	if _, _, _, err := ParsePathSpec("a:1073741824"); err != nil {
		t.Errorf("ParsePathSpec(MaxLineNumber) = %v, want nil", err)
	}
}

func TestRangeClamp(t *testing.T) {
	tests := []struct {
		r     Range
		total int
		want  Range
		ok    bool
	}{
		{All, 10, Range{1, 10}, true},
		{All, 0, Range{}, false},
		{Range{3, 5}, 10, Range{3, 5}, true},
		{Range{3, 50}, 10, Range{3, 10}, true},
		{Range{10, 0}, 10, Range{10, 10}, true},
		{Range{11, 0}, 10, Range{}, false},
		{Range{11, 12}, 10, Range{}, false},
		{Range{}, 10, Range{}, false},
		{Range{5, 4}, 10, Range{}, false},
		{Range{-1, 4}, 10, Range{}, false},
	}
	for _, tt := range tests {
		got, ok := tt.r.Clamp(tt.total)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%v.Clamp(%d) = %v, %v, want %v, %v", tt.r, tt.total, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRangeString(t *testing.T) {
	tests := []struct {
		r    Range
		want string
	}{
		{Range{231, 301}, "231-301"},
		{Range{90, 0}, "90-"},
		{Range{5, 5}, "5"},
		{All, "1-"},
		{Range{}, ""},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.r, got, tt.want)
		}
		if tt.r.IsZero() {
			continue
		}
		_, back, _, err := ParsePathSpec("p:" + tt.want)
		if err != nil || back != tt.r {
			t.Errorf("ParsePathSpec(%q) = %v, %v, want %v", "p:"+tt.want, back, err, tt.r)
		}
	}
}
