package vt

import (
	"strings"
	"testing"
)

// TestRowBoundFollowsEveryWrite drives every kind of cell write (runs of
// ASCII, wide runes, combining marks on blank cells, tabs, insert mode,
// ICH, DECALN, REP, writes without autowrap, scroll regions, the alternate
// screen, resizes) and checks after each step that every main row's bound
// covers its text (checkInvariants), then that the rows pushed to the
// scrollback read as a full rescan reads them.
func TestRowBoundFollowsEveryWrite(t *testing.T) {
	cases := map[string][]string{
		"ascii":            {"hello", "\r\nworld"},
		"mark on blank":    {"ab", "\x1b[1;10H\u0301"},
		"mark on wide":     {"日本", "\u0301", "\x1b[1;12H\u0301"},
		"ich shifts right": {"abc", "\x1b[1;1H\x1b[5@"},
		"insert mode":      {"abc", "\x1b[1;1H\x1b[4hXY日", "\x1b[4l"},
		"decaln":           {"\x1b#8"},
		"tabs":             {"a\tb", "\r\n\t\t", "\r\nx\t"},
		"rep":              {"a\x1b[30b"},
		"no autowrap":      {"\x1b[?7l" + strings.Repeat("x", 30) + "y"},
		"autowrap":         {strings.Repeat("w", 45)},
		"region":           {"1\r\n2\r\n3\r\n4\r\n5", "\x1b[2;4r\x1b[4;1H\r\nnew", "\x1b[2;1H\x1bMtop", "\x1b[3L\x1b[2M\x1b[2S\x1b[2T", "\x1b[r"},
		"alternate":        {"main", "\x1b[?1049h", "alt text\x1b[1;15H\u0301", "\x1b[?1049l", "\r\nback"},
		"dch and erase":    {"abcdef", "\x1b[1;2H\x1b[2P", "\x1b[1;3H\x1b[K", "\x1b[2J", "again"},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			for _, resize := range []bool{false, true} {
				term := New(5, 20, nil)
				for i, step := range steps {
					term.Write([]byte(step))
					if msg := checkInvariants(term); msg != "" {
						t.Fatalf("after step %d %q: %s", i, step, msg)
					}
					if resize {
						term.Resize(5+i%2, 20+i%3*7)
						if msg := checkInvariants(term); msg != "" {
							t.Fatalf("after resizing at step %d: %s", i, msg)
						}
					}
				}
				// Every row scrolls into the scrollback through its bound;
				// the text must be what the screen showed.
				before := term.Transcript()
				term.Write([]byte(strings.Repeat("\r\n", 8)))
				if after := strings.TrimRight(term.Transcript(), "\n"); after != strings.TrimRight(before, "\n") {
					t.Fatalf("scrolled off:\n%q\nwant\n%q", after, before)
				}
			}
		})
	}
}
