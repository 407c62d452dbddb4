package vt

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the expected sections of testdata/screens/*.txt with what the code does now")

// The screen goldens are files in testdata/screens, each a script of
// sections in the txtar style:
//
//	comment lines (what the case shows)
//	-- size --          rows cols (first; optionally a third field,
//	                    the scrollback lines)
//	-- write --         bytes to write: lines are joined without their
//	                    newlines; escapes \e \a \b \t \n \v \f \r \\ \xHH,
//	                    octal \NNN, \uXXXX and \UXXXXXXXX
//	-- resize --        rows cols
//	-- screen --        one |row| per screen row, as Screen returns it
//	-- cursor --        row col
//	-- transcript --    one |line| per line of Transcript (none if empty)
//	-- title --         the title
//	-- alt --           true or false
//
// Sections run in order, so a script can check the screen after each step.
// go test -run TestGolden -update rewrites the five check sections.

type goldenSection struct {
	name string
	body []string // lines without their newline
}

type goldenFile struct {
	comment  []string
	sections []goldenSection
}

func parseGolden(data []byte) (*goldenFile, error) {
	g := &goldenFile{}
	text := strings.TrimSuffix(string(data), "\n")
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") && len(l) > 6 {
			g.sections = append(g.sections, goldenSection{name: strings.TrimSpace(l[3 : len(l)-3])})
			continue
		}
		if len(g.sections) == 0 {
			g.comment = append(g.comment, l)
			continue
		}
		s := &g.sections[len(g.sections)-1]
		s.body = append(s.body, l)
	}
	if len(g.sections) == 0 || g.sections[0].name != "size" {
		return nil, fmt.Errorf("first section must be size")
	}
	return g, nil
}

func (g *goldenFile) format() []byte {
	var b bytes.Buffer
	for _, l := range g.comment {
		b.WriteString(l + "\n")
	}
	for _, s := range g.sections {
		fmt.Fprintf(&b, "-- %s --\n", s.name)
		for _, l := range s.body {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes()
}

// unescape decodes the escapes of a write section.
func unescape(s string) ([]byte, error) {
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(s) {
			return nil, fmt.Errorf("trailing backslash")
		}
		switch c = s[i]; c {
		case 'e', 'E':
			out = append(out, 0x1b)
		case 'a':
			out = append(out, 0x07)
		case 'b':
			out = append(out, 0x08)
		case 't':
			out = append(out, 0x09)
		case 'n':
			out = append(out, 0x0a)
		case 'v':
			out = append(out, 0x0b)
		case 'f':
			out = append(out, 0x0c)
		case 'r':
			out = append(out, 0x0d)
		case '\\':
			out = append(out, '\\')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			if i+n >= len(s) {
				return nil, fmt.Errorf("short \\%c escape", c)
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil {
				return nil, fmt.Errorf("bad \\%c escape: %v", c, err)
			}
			if c == 'x' {
				out = append(out, byte(v))
			} else {
				out = utf8.AppendRune(out, rune(v))
			}
			i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 8)
			out = append(out, byte(v))
			i = j - 1
		default:
			return nil, fmt.Errorf("unknown escape \\%c", c)
		}
	}
	return out, nil
}

func sizeArgs(body []string) ([]int, error) {
	if len(body) != 1 {
		return nil, fmt.Errorf("want one line of numbers, got %q", body)
	}
	var nums []int
	for _, f := range strings.Fields(body[0]) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		nums = append(nums, n)
	}
	if len(nums) < 2 {
		return nil, fmt.Errorf("want rows and cols, got %q", body[0])
	}
	return nums, nil
}

// barred writes lines as |line|, so leading spaces and empty rows show.
func barred(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "|" + l + "|"
	}
	return out
}

func transcriptLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// goldenInputs returns the bytes of every write section of every golden,
// concatenated per file, for seeding the fuzz targets.
func goldenInputs(tb testing.TB) [][]byte {
	files, err := filepath.Glob(filepath.Join("testdata", "screens", "*.txt"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no goldens in testdata/screens: %v", err)
	}
	var inputs [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		g, err := parseGolden(data)
		if err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		var in []byte
		for _, s := range g.sections {
			if s.name == "write" {
				b, err := unescape(strings.Join(s.body, ""))
				if err != nil {
					tb.Fatalf("%s: %v", f, err)
				}
				in = append(in, b...)
			}
		}
		inputs = append(inputs, in)
	}
	return inputs
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "screens", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no goldens in testdata/screens: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			g, err := parseGolden(data)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var term *Terminal
			var input []byte // everything written so far, for messages
			changed := false
			check := func(s *goldenSection, got []string) {
				if *update {
					if strings.Join(s.body, "\n") != strings.Join(got, "\n") {
						s.body, changed = got, true
					}
					return
				}
				if strings.Join(s.body, "\n") != strings.Join(got, "\n") {
					t.Errorf("%s after writing %q:\n got: %q\nwant: %q", s.name, input, got, s.body)
				}
			}
			for i := range g.sections {
				s := &g.sections[i]
				switch s.name {
				case "size":
					nums, err := sizeArgs(s.body)
					if err != nil {
						t.Fatalf("size: %v", err)
					}
					var opts *Options
					if len(nums) > 2 {
						opts = &Options{ScrollbackLines: nums[2]}
					}
					term = New(nums[0], nums[1], opts)
				case "write":
					b, err := unescape(strings.Join(s.body, ""))
					if err != nil {
						t.Fatalf("write: %v", err)
					}
					input = append(input, b...)
					if n, err := term.Write(b); n != len(b) || err != nil {
						t.Fatalf("Write(%q) = %d, %v, want %d, nil", b, n, err, len(b))
					}
				case "resize":
					nums, err := sizeArgs(s.body)
					if err != nil {
						t.Fatalf("resize: %v", err)
					}
					term.Resize(nums[0], nums[1])
					input = fmt.Appendf(input, "<resize %dx%d>", nums[0], nums[1])
				case "screen":
					check(s, barred(term.Screen()))
				case "cursor":
					row, col := term.Cursor()
					check(s, []string{fmt.Sprintf("%d %d", row, col)})
				case "transcript":
					check(s, barred(transcriptLines(term.Transcript())))
				case "title":
					check(s, []string{term.Title()})
				case "alt":
					check(s, []string{strconv.FormatBool(term.AltScreenActive())})
				default:
					t.Fatalf("unknown section %q", s.name)
				}
			}
			if changed {
				if err := os.WriteFile(file, g.format(), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("updated %s", file)
			}
		})
	}
}
