package session

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/evidence"
)

func TestAddWorkRange(t *testing.T) {
	tests := []struct {
		name string
		have [][2]int
		add  [2]int
		want [][2]int
	}{
		{"first", nil, [2]int{3, 5}, [][2]int{{3, 5}}},
		{"disjoint before", [][2]int{{10, 12}}, [2]int{1, 2}, [][2]int{{1, 2}, {10, 12}}},
		{"adjacent merge", [][2]int{{1, 4}}, [2]int{5, 7}, [][2]int{{1, 7}}},
		{"overlap", [][2]int{{1, 4}, {8, 9}}, [2]int{3, 8}, [][2]int{{1, 9}}},
		{"to the end absorbs", [][2]int{{5, 6}, {9, 20}}, [2]int{4, 0}, [][2]int{{4, 0}}},
		{"inside the end", [][2]int{{4, 0}}, [2]int{7, 9}, [][2]int{{4, 0}}},
		{"invalid start", [][2]int{{1, 2}}, [2]int{0, 3}, [][2]int{{1, 2}}},
		{"reversed", [][2]int{{1, 2}}, [2]int{9, 3}, [][2]int{{1, 2}}},
	}
	for _, tc := range tests {
		if got := addWorkRange(tc.have, tc.add); !slices.Equal(got, tc.want) {
			t.Errorf("%s: addWorkRange(%v, %v) = %v, want %v", tc.name, tc.have, tc.add, got, tc.want)
		}
	}
	// Past the bound the last ranges merge: wider, never lost.
	var rs [][2]int
	for i := range 3 * maxWorkRanges {
		rs = addWorkRange(rs, [2]int{10 * (i + 1), 10*(i+1) + 1})
	}
	if len(rs) != maxWorkRanges || rs[0] != [2]int{10, 11} || rs[len(rs)-1][1] != 30*maxWorkRanges+1 {
		t.Errorf("after %d disjoint ranges: %d kept, %v ... %v", 3*maxWorkRanges, len(rs), rs[0], rs[len(rs)-1])
	}
}

// Two adapters' records of one session merge: one entry per path with the
// union of its lines, the most recently touched first.
func TestMergeWork(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := []FileWork{{Path: "/w/a", Read: [][2]int{{1, 5}}, At: t0.Add(2 * time.Second)}, {Path: "/w/b", Read: [][2]int{{1, 1}}, At: t0}}
	b := []FileWork{{Path: "/w/c", Edited: true, At: t0.Add(3 * time.Second)}, {Path: "/w/a", Read: [][2]int{{9, 9}}, Edited: true, Wrote: [][2]int{{2, 2}}, At: t0.Add(time.Second)}}
	got := mergeWork(a, b)
	var paths []string
	for _, f := range got {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(paths, []string{"/w/c", "/w/a", "/w/b"}) {
		t.Fatalf("merged order %v, want /w/c /w/a /w/b", paths)
	}
	if m := got[1]; !slices.Equal(m.Read, [][2]int{{1, 5}, {9, 9}}) || !m.Edited || !slices.Equal(m.Wrote, [][2]int{{2, 2}}) || !m.At.Equal(t0.Add(2*time.Second)) {
		t.Errorf("merged /w/a = %+v", m)
	}
}

// What is read back from disk is checked like a stranger's input, and a
// record of long paths is cut to fit its byte bound, newest kept.
func TestWorkRecordOnDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "work", "s.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, body string }{
		{"not json", "{"},
		{"other version", `{"version":2,"files":[{"path":"/w/a","at":"2026-01-01T00:00:00Z"}]}`},
		{"relative path", `{"version":1,"files":[{"path":"w/a","at":"2026-01-01T00:00:00Z"}]}`},
		{"line 0", `{"version":1,"files":[{"path":"/w/a","read":[[0,3]],"at":"2026-01-01T00:00:00Z"}]}`},
		{"reversed", `{"version":1,"files":[{"path":"/w/a","wrote":[[5,3]],"at":"2026-01-01T00:00:00Z"}]}`},
		{"too many files", fmt.Sprintf(`{"version":1,"files":[%s]}`, strings.Repeat(`{"path":"/w/a","at":"2026-01-01T00:00:00Z"},`, MaxWorkFiles)+`{"path":"/w/z","at":"2026-01-01T00:00:00Z"}`)},
		{"oversized", `{"version":1,"files":[],"pad":"` + strings.Repeat("x", MaxWorkFileBytes) + `"}`},
	} {
		if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := loadWork(path); got != nil {
			t.Errorf("%s: loadWork = %+v, want nothing", tc.name, got)
		}
	}

	s := &Session{}
	s.work.path = path
	long := strings.Repeat("\x01", 3000) // six bytes each in JSON
	for i := range MaxWorkFiles + 8 {
		s.NoteRead(fmt.Sprintf("/w/%03d/%s", i, long), evidence.Range{Start: 1, End: 2})
		s.SaveWork()
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > MaxWorkFileBytes || fi.Mode().Perm() != 0o600 {
		t.Fatalf("work record %v, %v; want 0600 and at most %d bytes", fi, err, MaxWorkFileBytes)
	}
	b, _ := os.ReadFile(path)
	var f workFile
	if err := json.Unmarshal(b, &f); err != nil || len(f.Files) == 0 || !strings.HasPrefix(f.Files[0].Path, fmt.Sprintf("/w/%03d/", MaxWorkFiles+7)) {
		t.Fatalf("work record on disk: %d files (%v), want the newest first", len(f.Files), err)
	}
	// A new process of the session reads the same record.
	s2 := &Session{}
	s2.work.path = path
	if w := s2.Work(); len(w) != len(f.Files) || w[0].Path != f.Files[0].Path || !slices.Equal(w[0].Read, [][2]int{{1, 2}}) {
		t.Errorf("Work from a new process = %d files, first %+v", len(w), w[0])
	}
}

// Reading the same lines of the most recent file again writes nothing; a
// record another adapter wrote meanwhile is merged, not overwritten.
func TestSaveWorkSkipsUnchangedMergesOthers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "work", "s.json")
	a, b := &Session{}, &Session{}
	a.work.path, b.work.path = path, path
	inode := func() uint64 {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	a.NoteRead("/w/a", evidence.Range{Start: 1, End: 4})
	a.SaveWork()
	first := inode()
	a.NoteRead("/w/a", evidence.Range{Start: 2, End: 3})
	a.SaveWork()
	if got := inode(); got != first {
		t.Errorf("a read of lines already recorded rewrote the record (inode %d, then %d)", first, got)
	}
	b.NoteEdit("/w/b", []evidence.Range{{Start: 7, End: 7}})
	b.SaveWork()
	a.NoteRead("/w/c", evidence.Range{Start: 1, End: 1})
	a.SaveWork()
	var paths []string
	for _, f := range loadWork(path) {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(paths, []string{"/w/c", "/w/b", "/w/a"}) {
		t.Errorf("record after two adapters saved: %v, want /w/c /w/b /w/a", paths)
	}
}

// The commands a session's adapters noted are kept on disk, at most
// MaxCommandHistory of them, newest kept; a new process of the session
// reports them when the shell keeps no record of its own, and a file an
// older adapter wrote (the last command alone) still loads.
func TestCommandsSavedForTheNextAdapter(t *testing.T) {
	dir := t.TempDir()
	key := Key{Principal: "p", Root: "/w"}
	a := &Session{Key: key}
	a.UseHistoryDir(dir)
	for i := range MaxCommandHistory + 5 {
		a.NoteCommand(CommandRecord{Generation: uint64(i + 1), Command: fmt.Sprintf("echo %d", i), Running: true, Cwd: "/w"})
		a.NoteCommand(CommandRecord{Generation: uint64(i + 1), ExitCode: i % 3, Cwd: "/w/sub"})
	}
	b := &Session{Key: key}
	b.UseHistoryDir(dir)
	got := b.Commands(t.Context())
	if len(got) != MaxCommandHistory {
		t.Fatalf("a new process reports %d commands, want %d", len(got), MaxCommandHistory)
	}
	newest := MaxCommandHistory + 4
	if got[0].Command != fmt.Sprintf("echo %d", newest) || got[0].Running || got[0].ExitCode != newest%3 || got[0].Cwd != "/w/sub" ||
		got[len(got)-1].Command != "echo 5" {
		t.Errorf("reported %+v ... %+v, want echo %d (ended, exit %d, cwd /w/sub) down to echo 5", got[0], got[len(got)-1], newest, newest%3)
	}

	old := `{"generation":3,"command":"make test","running":true,"at":"2026-01-01T00:00:00Z"}`
	if err := os.WriteFile(a.historyFile.path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &Session{Key: key}
	c.UseHistoryDir(dir)
	if got := c.Commands(t.Context()); len(got) != 1 || got[0].Command != "make test" || !got[0].Running {
		t.Errorf("from an older adapter's file: %+v, want the running make test", got)
	}
}
