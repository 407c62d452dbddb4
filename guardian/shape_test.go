package guardian

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"winx/evidence/redact"
)

func TestShapeCollapse(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      string
		collapsed int
	}{
		{"empty", "", "", 0},
		{"newline only", "\n", "\n", 0},
		{"single line", "a", "a", 0},
		{"distinct", "a\nb\nc\n", "a\nb\nc\n", 0},
		{"run of two kept", "a\na\nb", "a\na\nb", 0},
		{"run of three", "a\na\na", "a  [winx: x3]", 1},
		{"run of three with final newline", "a\na\na\n", "a  [winx: x3]\n", 1},
		{"500 identical lines", strings.Repeat("same line\n", 500), "same line  [winx: x500]\n", 1},
		{"runs between lines", "x\na\na\na\na\ny\nb\nb\nb\nz", "x\na  [winx: x4]\ny\nb  [winx: x3]\nz", 2},
		{"adjacent runs", "a\na\na\nb\nb\nb\n", "a  [winx: x3]\nb  [winx: x3]\n", 2},
		{"blank run", "a\n\n\n\n\nb\n", "a\n  [winx: x4]\nb\n", 1},
		{"blank lines only", "\n\n\n", "  [winx: x3]\n", 1},
		{"two blank lines kept", "a\n\n\nb", "a\n\n\nb", 0},
		{"unicode", "héllo wörld ✓\nhéllo wörld ✓\nhéllo wörld ✓\n日本語\n", "héllo wörld ✓  [winx: x3]\n日本語\n", 1},
		{"whitespace differs", "a \na\na\n", "a \na\na\n", 0},
		{"already collapsed", "a  [winx: x7]\nb\n", "a  [winx: x7]\nb\n", 0},
		{"mark merges with repeats", "a  [winx: x3]\na\na\n", "a  [winx: x5]\n", 1},
		{"repeats merge with mark", "a\na  [winx: x3]\n", "a  [winx: x4]\n", 1},
		{"identical marks", "a  [winx: x3]\na  [winx: x3]\na  [winx: x3]", "a  [winx: x9]", 1},
		{"blank mark", "  [winx: x3]\n\n", "  [winx: x4]\n", 1},
		{"mark below minimum is text", "a  [winx: x2]\na\na", "a  [winx: x2]\na\na", 0},
		{"mark with leading zero is text", "a  [winx: x03]\na", "a  [winx: x03]\na", 0},
		{"mark of ten digits is text", "a  [winx: x1000000000]\na", "a  [winx: x1000000000]\na", 0},
		{"marked text repeated", "a  [winx: x2]\na  [winx: x2]\na  [winx: x2]", "a  [winx: x2]  [winx: x3]", 1},
		{"count saturates", "a  [winx: x999999999]\na  [winx: x999999999]", "a  [winx: x999999999]", 1},
		{"bare mark", "[winx: x3]\n", "[winx: x3]\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Shape(tt.in, ShapeOptions{BudgetBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if s.Text != tt.want || s.Collapsed != tt.collapsed {
				t.Errorf("Shape(%q) = %q, collapsed %d, want %q, collapsed %d", tt.in, s.Text, s.Collapsed, tt.want, tt.collapsed)
			}
			if again, n := collapseRuns(s.Text); again != s.Text || n != 0 {
				t.Errorf("collapseRuns(%q) = %q, %d, want it unchanged, 0", s.Text, again, n)
			}
			off, _ := Shape(tt.in, ShapeOptions{BudgetBytes: 1 << 20, NoCompress: true})
			if off.Text != tt.in || off.Collapsed != 0 {
				t.Errorf("Shape(%q, NoCompress) = %q, collapsed %d, want the input", tt.in, off.Text, off.Collapsed)
			}
		})
	}
}

func TestShapeTruncate(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name         string
		in           string
		budget       int
		kept         string // text after the note line, or all of Text when nothing is dropped
		droppedBytes int
		droppedLines int
	}{
		{"fits exactly", "aaa\nbbb\nccc\n", 12, "aaa\nbbb\nccc\n", 0, 0},
		{"one byte over drops a line", "aaa\nbbb\nccc\n", 11, "bbb\nccc\n", 4, 1},
		{"cut exactly at a boundary", "aaa\nbbb\nccc\n", 8, "bbb\nccc\n", 4, 1},
		{"cut inside a line moves forward", "aaa\nbbb\nccc\n", 7, "ccc\n", 8, 2},
		{"last line exactly", "aaa\nbbb\nccc\n", 4, "ccc\n", 8, 2},
		{"no final newline", "a\nb\nc", 3, "b\nc", 2, 1},
		{"no final newline, last line only", "aaa\nbbb\nccc", 3, "ccc", 8, 2},
		{"long last line keeps its tail", "short\n" + long + "\n", 10, strings.Repeat("x", 9) + "\n", 97, 1},
		{"long single line", long, 10, strings.Repeat("x", 10), 90, 0},
		{"tail cut at a rune boundary", "ééééé", 5, "éé", 6, 0},
		{"tail cut of four-byte runes", "a\n😀😀😀", 5, "😀", 10, 1},
		{"unicode lines", "α\nβ\nγ\n", 6, "β\nγ\n", 3, 1},
		{"default budget fits", strings.Repeat("y", DefaultOutputBudget), 0, strings.Repeat("y", DefaultOutputBudget), 0, 0},
		{"default budget over", "z\n" + strings.Repeat("y", DefaultOutputBudget-1) + "\n", 0, strings.Repeat("y", DefaultOutputBudget-1) + "\n", 2, 1},
		{"collapse happens first", "a\n" + strings.Repeat("b\n", 1000), 17, "b  [winx: x1000]\n", 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Shape(tt.in, ShapeOptions{BudgetBytes: tt.budget})
			if err != nil {
				t.Fatal(err)
			}
			kept := s.Text
			if s.DroppedBytes > 0 {
				note, rest, ok := strings.Cut(s.Text, "\n")
				wantNote := "[winx: " + strconv.Itoa(tt.droppedBytes) + " bytes (" + strconv.Itoa(tt.droppedLines) + " line"
				if !ok || !strings.HasPrefix(note, wantNote) || !strings.HasSuffix(note, " dropped from the head]") {
					t.Errorf("note line = %q, want %q... dropped from the head]", note, wantNote)
				}
				kept = rest
			}
			if kept != tt.kept || s.DroppedBytes != tt.droppedBytes || s.DroppedLines != tt.droppedLines {
				t.Errorf("Shape(%.40q, %d) kept %q, dropped %d bytes %d lines, want %q, %d, %d",
					tt.in, tt.budget, kept, s.DroppedBytes, s.DroppedLines, tt.kept, tt.droppedBytes, tt.droppedLines)
			}
			if s.DroppedFile != "" {
				t.Errorf("DroppedFile = %q without a ScratchDir", s.DroppedFile)
			}
			if utf8.ValidString(tt.in) && !utf8.ValidString(s.Text) {
				t.Errorf("Shape(%q) = %q, not valid UTF-8", tt.in, s.Text)
			}
		})
	}
}

var spillNameRE = regexp.MustCompile(`^output-\d{8}T\d{6}Z-[0-9a-f]{8}\.txt$`)

func TestShapeSpill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws", ".winx", "scratch")
	in := "one\ntwo\ntwo\ntwo\nthree\nfour\n"
	s, err := Shape(in, ShapeOptions{BudgetBytes: 11, ScratchDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	head := "one\ntwo  [winx: x3]\n"
	want := "[winx: 20 bytes (2 lines) dropped from the head and saved in " + s.DroppedFile + "]\nthree\nfour\n"
	if s.Text != want || s.DroppedBytes != len(head) || s.DroppedLines != 2 {
		t.Errorf("Shape = %q, dropped %d bytes %d lines, want %q, %d, 2", s.Text, s.DroppedBytes, s.DroppedLines, want, len(head))
	}
	if !filepath.IsAbs(s.DroppedFile) || filepath.Dir(s.DroppedFile) != dir || !spillNameRE.MatchString(filepath.Base(s.DroppedFile)) {
		t.Errorf("DroppedFile = %q, want %s/output-<UTC time>-<8 hex>.txt", s.DroppedFile, dir)
	}
	got, err := os.ReadFile(s.DroppedFile)
	if err != nil || string(got) != head {
		t.Errorf("dropped file holds %q, %v, want %q", got, err, head)
	}
	for path, perm := range map[string]fs.FileMode{dir: 0o700, s.DroppedFile: 0o600} {
		if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != perm {
			t.Errorf("Lstat(%s) = %v, %v, want mode %v", path, fi.Mode(), err, perm)
		}
	}

	// A second shaping gets a new file; an existing directory keeps its mode.
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	s2, err := Shape(in, ShapeOptions{BudgetBytes: 11, ScratchDir: dir})
	if err != nil || s2.DroppedFile == s.DroppedFile || s2.DroppedFile == "" {
		t.Errorf("second Shape: file %q, %v, want a new file", s2.DroppedFile, err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o750 {
		t.Errorf("existing ScratchDir mode changed to %v", fi.Mode().Perm())
	}

	// Nothing is written when nothing is dropped.
	empty := filepath.Join(t.TempDir(), "unused")
	if s, err := Shape(in, ShapeOptions{ScratchDir: empty}); err != nil || s.DroppedFile != "" {
		t.Errorf("Shape under budget: file %q, %v", s.DroppedFile, err)
	}
	if _, err := os.Stat(empty); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ScratchDir created without a spill: %v", err)
	}
}

func TestShapeSpillRelativeDir(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	s, err := Shape("a\nb\nc\n", ShapeOptions{BudgetBytes: 2, ScratchDir: "scratch"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "scratch"); filepath.Dir(s.DroppedFile) != want {
		t.Errorf("DroppedFile = %q, want it in %s", s.DroppedFile, want)
	}
}

func TestShapeSpillRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "output-link.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := writeNewFile(link, strings.NewReader("attacker wants this written")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("writeNewFile(symlink) = %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "precious" {
		t.Errorf("symlink target now holds %q", got)
	}

	dangling := filepath.Join(dir, "output-dangling.txt")
	absent := filepath.Join(dir, "absent")
	if err := os.Symlink(absent, dangling); err != nil {
		t.Fatal(err)
	}
	if err := writeNewFile(dangling, strings.NewReader("x")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("writeNewFile(dangling symlink) = %v, want fs.ErrExist", err)
	}
	if _, err := os.Lstat(absent); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dangling symlink target was created: %v", err)
	}
}

func TestShapeSpillFailure(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Shape("a\nb\nc\n", ShapeOptions{BudgetBytes: 2, ScratchDir: notDir})
	if err == nil {
		t.Fatal("Shape with a file as ScratchDir succeeded")
	}
	want := "[winx: 4 bytes (2 lines) dropped from the head; they could not be saved]\nc\n"
	if s.Text != want || s.DroppedFile != "" {
		t.Errorf("Shape = %q, file %q, want %q and no file", s.Text, s.DroppedFile, want)
	}
}

func TestShapeRedaction(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	var b strings.Builder
	b.WriteString("export AWS_ACCESS_KEY_ID=" + key + "\n")
	for i := range 200 {
		b.WriteString("filler line " + strconv.Itoa(i) + "\n")
	}
	for range 4 {
		b.WriteString("aws_access_key_id = " + key + "\n")
	}
	in := b.String()
	s, err := Shape(in, ShapeOptions{BudgetBytes: 200, ScratchDir: t.TempDir(), Redactor: redact.New(false)})
	if err != nil {
		t.Fatal(err)
	}
	spilled, err := os.ReadFile(s.DroppedFile)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"delivered": s.Text, "spilled": string(spilled)} {
		if strings.Contains(text, key) || !strings.Contains(text, "[REDACTED") {
			t.Errorf("%s text is not redacted: %.300q", name, text)
		}
	}
	if !strings.Contains(s.Text, "  [winx: x4]") || s.Redactions < 2 {
		t.Errorf("Shape = %q with %d redactions, want the key line collapsed and >= 2 redactions", s.Text, s.Redactions)
	}

	// A disabled Redactor and a nil one leave the text alone.
	for _, r := range []*redact.Redactor{redact.New(true), nil} {
		s, err := Shape(in, ShapeOptions{BudgetBytes: 1 << 20, Redactor: r})
		if err != nil || !strings.Contains(s.Text, key) || s.Redactions != 0 {
			t.Errorf("Shape without redaction: %d redactions, key kept %v, %v", s.Redactions, strings.Contains(s.Text, key), err)
		}
	}
}

func FuzzShape(f *testing.F) {
	f.Add("", uint16(0), false)
	f.Add("a\na\na\n", uint16(3), false)
	f.Add(strings.Repeat("x\n", 500), uint16(10), false)
	f.Add("a  [winx: x3]\na  [winx: x3]\na\na\na", uint16(5), false)
	f.Add("  [winx: x3]\n\n\n", uint16(1), false)
	f.Add("ééééé\n😀😀😀", uint16(5), true)
	f.Add("aaa\nbbb\nccc\n", uint16(8), false)
	f.Add("a  [winx: x999999999]\na  [winx: x999999999]\na", uint16(4), false)
	f.Add("\xff\xfe\n\xff\xfe\n\xff\xfe", uint16(2), false)
	f.Add("id AKIAIOSFODNN7EXAMPLE\nid AKIAIOSFODNN7EXAMPLE\nid AKIAIOSFODNN7EXAMPLE\nnext\n", uint16(24), false)
	// One scratch directory per worker, each file removed once checked:
	// directory churn per input is slow enough on some disks to trip the
	// fuzzer's 10 s hang detector.
	scratch := f.TempDir()
	f.Fuzz(func(t *testing.T, in string, budget uint16, noCompress bool) {
		opts := ShapeOptions{BudgetBytes: int(budget), NoCompress: noCompress}
		if budget%8 == 0 {
			opts.ScratchDir = scratch
		}
		if budget%3 == 0 {
			opts.Redactor = redact.New(false)
		}
		s, err := Shape(in, opts)
		if err != nil {
			t.Fatalf("Shape(%q, %d): %v", in, budget, err)
		}
		collapsed := in
		if !noCompress {
			var n int
			collapsed, n = collapseRuns(in)
			if again, m := collapseRuns(collapsed); again != collapsed || m != 0 {
				t.Fatalf("collapseRuns not idempotent: %q -> %q -> %q (%d)", in, collapsed, again, m)
			}
			if n != s.Collapsed {
				t.Errorf("Shape collapsed %d, collapseRuns %d", s.Collapsed, n)
			}
		}
		// expected is what truncation works on: collapsed, then redacted.
		expected := collapsed
		if opts.Redactor != nil {
			var n int
			expected, n = opts.Redactor.String(collapsed)
			if n != s.Redactions {
				t.Errorf("Shape redacted %d, Redactor %d", s.Redactions, n)
			}
		}
		limit := opts.BudgetBytes
		if limit <= 0 {
			limit = DefaultOutputBudget
		}
		kept := s.Text
		if s.DroppedBytes > 0 {
			note, rest, ok := strings.Cut(s.Text, "\n")
			if !ok || !strings.HasPrefix(note, "[winx: ") {
				t.Fatalf("Shape(%q, %d) = %q, want a note line", in, budget, s.Text)
			}
			kept = rest
			head := expected[:s.DroppedBytes]
			if s.DroppedLines != strings.Count(head, "\n") {
				t.Errorf("DroppedLines = %d, want %d", s.DroppedLines, strings.Count(head, "\n"))
			}
			if opts.ScratchDir != "" {
				got, err := os.ReadFile(s.DroppedFile)
				if err != nil || string(got) != head {
					t.Errorf("dropped file %q holds %q, %v, want %q", s.DroppedFile, got, err, head)
				}
				os.Remove(s.DroppedFile)
			}
		}
		if len(kept) > limit {
			t.Errorf("Shape(%q, %d) kept %d bytes, over the budget %d", in, budget, len(kept), limit)
		}
		if expected[s.DroppedBytes:] != kept {
			t.Errorf("Shape(%q, %d) kept %q, want the tail %q", in, budget, kept, expected[s.DroppedBytes:])
		}
		if len(expected) > limit && limit >= utf8.UTFMax && kept == "" {
			t.Errorf("Shape(%q, %d) kept nothing", in, budget)
		}
		if utf8.ValidString(in) && !utf8.ValidString(s.Text) {
			t.Errorf("Shape(%q, %d) = %q, not valid UTF-8", in, budget, s.Text)
		}
	})
}

// seqOutput is the output of `seq 1 n`.
func seqOutput(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func BenchmarkShapeLarge(b *testing.B) {
	seq := seqOutput(2_000_000)                                             // ≈ 14.9 MB
	same := strings.Repeat("warning: deprecated call in foo.go\n", 500_000) // ≈ 17.5 MB
	mixed := strings.Repeat("ok  \tpkg/a\t0.01s\nok  \tpkg/a\t0.01s\nok  \tpkg/a\t0.01s\nFAIL pkg/b AKIAIOSFODNN7EXAMPLE\n", 200_000)
	cases := []struct {
		name string
		text string
		opts ShapeOptions
	}{
		{"seq/drop", seq, ShapeOptions{}},
		{"seq/spill", seq, ShapeOptions{ScratchDir: b.TempDir()}},
		{"seq/redact", seq, ShapeOptions{Redactor: redact.New(false)}},
		{"seq/nocompress", seq, ShapeOptions{NoCompress: true}},
		{"repeated/drop", same, ShapeOptions{}},
		{"mixed/redact+spill", mixed, ShapeOptions{ScratchDir: b.TempDir(), Redactor: redact.New(false)}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for b.Loop() {
				s, err := Shape(c.text, c.opts)
				if err != nil {
					b.Fatal(err)
				}
				if s.DroppedFile != "" {
					os.Remove(s.DroppedFile)
				}
			}
		})
	}
}
