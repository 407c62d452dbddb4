package guardian

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A journal's file is created on first use, whichever comes first: the
// launch's open, a line of output, or the command's end.
func TestJournalOpensOnFirstUse(t *testing.T) {
	dir := t.TempDir()

	early := filepath.Join(dir, "early.txt")
	j := newJournal(early, nil, 1<<10, false)
	if _, err := os.Stat(early); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the file exists before its first use: %v", err)
	}
	j.add("output before the launch's open", false, 0)
	j.open() // the launch's, after the line: changes nothing
	j.add("and after", false, 0)
	j.close()
	if b, err := os.ReadFile(early); err != nil || string(b) != "output before the launch's open\nand after\n" {
		t.Errorf("journal = %q, %v", b, err)
	}
	if j.fileLines != 2 || j.lines != 2 {
		t.Errorf("fileLines %d of %d lines, want 2 of 2", j.fileLines, j.lines)
	}

	silent := filepath.Join(dir, "silent.txt")
	j = newJournal(silent, nil, 1<<10, false)
	j.close()
	if fi, err := os.Stat(silent); err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("a command without output: %v, %v; want an empty 0600 file", fi, err)
	}

	// A file that cannot be created is reported, and the output still flows.
	j = newJournal(filepath.Join(dir, "missing", "x.txt"), nil, 1<<10, false)
	j.add("kept in memory", false, 0)
	j.close()
	text, _, _ := j.take()
	if j.path != "" || j.err == nil || text != "kept in memory\n" {
		t.Errorf("uncreatable journal: path %q err %v text %q", j.path, j.err, text)
	}
	if note := j.finalNote(); !strings.Contains(note, "could not be saved") {
		t.Errorf("final note = %q", note)
	}
}
