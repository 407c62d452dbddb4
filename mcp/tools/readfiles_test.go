package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"winx/evidence"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	return b.String()
}

func (e *bashEnv) read(paths ...string) (*toolResult, readData) {
	e.t.Helper()
	r := e.call(ReadFilesTool, map[string]any{"file_paths": paths, "thread_id": e.thread, "workspace_root": e.root})
	var d readData
	if len(r.Structured.Data) > 0 {
		if err := json.Unmarshal(r.Structured.Data, &d); err != nil {
			e.t.Fatalf("data: %v", err)
		}
	}
	return r, d
}

func TestReadFilesRangesAndRevision(t *testing.T) {
	e := newBashEnv(t, "")
	content := numbered(50)
	writeFile(t, filepath.Join(e.root, "a.txt"), content)
	r, d := e.read("a.txt:10-12")
	if r.IsError || len(d.Files) != 1 {
		t.Fatalf("read = %+v", r.Structured)
	}
	f := d.Files[0]
	if f.Revision != evidence.RevisionOf([]byte(content)).Short() || f.Shown != "10-12" || f.TotalLines != 50 {
		t.Errorf("file = %+v", f)
	}
	if !strings.Contains(r.Structured.Output, "\n10\tline xxx\n11\tline xxxx\n12\tline xxxxx") || strings.Contains(r.Structured.Output, "13\t") {
		t.Errorf("output = %q, want exactly lines 10-12 numbered", r.Structured.Output)
	}
	if _, d := e.read(filepath.Join(e.root, "a.txt")); d.Files[0].Shown != "1-50" {
		t.Errorf("absolute path read shown %q", d.Files[0].Shown)
	}
}

func TestReadFilesOneMissingKeepsOrder(t *testing.T) {
	e := newBashEnv(t, "")
	for _, n := range []string{"1", "2", "4", "5"} {
		writeFile(t, filepath.Join(e.root, n+".txt"), "file "+n+"\n")
	}
	r, d := e.read("1.txt", "2.txt", "3.txt", "4.txt", "5.txt")
	if !r.IsError || r.Structured.ErrorCode != "file_not_found" {
		t.Errorf("status = %s %s isError %v, want file_not_found error", r.Structured.Status, r.Structured.ErrorCode, r.IsError)
	}
	if len(d.Files) != 5 {
		t.Fatalf("files = %d, want 5", len(d.Files))
	}
	for i, f := range d.Files {
		want := []string{"1.txt", "2.txt", "3.txt", "4.txt", "5.txt"}[i]
		if f.Path != want {
			t.Errorf("file %d = %s, want %s (request order)", i, f.Path, want)
		}
		if (f.Error != "") != (want == "3.txt") {
			t.Errorf("%s error = %q", want, f.Error)
		}
	}
	out := r.Structured.Output
	if strings.Index(out, "file 2") > strings.Index(out, "file 4") || !strings.Contains(out, "file 5") {
		t.Errorf("output out of order: %q", out)
	}
}

func TestReadFilesEscapesDenied(t *testing.T) {
	e := newBashEnv(t, "")
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.txt"), "outside\n")
	os.Symlink(outside, filepath.Join(e.root, "linkdir"))
	os.Symlink("/etc", filepath.Join(e.root, "etc"))
	for _, p := range []string{"../secret.txt", filepath.Join(outside, "secret.txt"), "linkdir/secret.txt", "etc/hostname"} {
		r, d := e.read(p)
		if !r.IsError || d.Files[0].ErrorCode != "file_operation_denied" || strings.Contains(r.Structured.Output, "outside\n") {
			t.Errorf("read %q = %s %+v, want denied", p, r.Structured.Status, d.Files)
		}
	}
}

func TestReadFilesRedactsAndTruncates(t *testing.T) {
	e := newBashEnv(t, "")
	writeFile(t, filepath.Join(e.root, "env.txt"), "key=AKIAIOSFODNN7EXAMPLE\n")
	if r, _ := e.read("env.txt"); strings.Contains(r.Structured.Output, "AKIAIOSFODNN7EXAMPLE") {
		t.Errorf("secret leaked: %q", r.Structured.Output)
	}
	big := strings.Repeat("a fairly long line of prose to fill the budget quickly\n", 2000)
	writeFile(t, filepath.Join(e.root, "big.md"), big)
	_, d := e.read("big.md")
	f := d.Files[0]
	if !f.Truncated || f.Continuation == "" || !strings.HasPrefix(f.Shown, "1-") {
		t.Fatalf("big file = %+v, want truncated with a continuation", f)
	}
	_, d = e.read(f.Continuation)
	if d.Files[0].Error != "" || d.Files[0].Shown == "" {
		t.Errorf("continuation read = %+v", d.Files[0])
	}
}
