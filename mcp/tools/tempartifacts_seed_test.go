package tools

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"winx/guardian/artifacts"
)

// ageTree sets the mtime of dir and everything below it, directories last.
func ageTree(t *testing.T, dir string, mtime time.Time) {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		return os.Chtimes(p, mtime, mtime)
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(dirs)
	for _, d := range dirs {
		if err := os.Chtimes(d, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTempArtifactWritesOutsideSessionDirRefused: statically visible writes
// directly into .winx/tmp, outside every session's directory, are refused
// before they run, in any spelling the preflight sees; writes into the
// session's own directory and removing a stray entry still run.
func TestTempArtifactWritesOutsideSessionDirRefused(t *testing.T) {
	e := newBashEnv(t, "")
	dir := artifacts.Dir(e.root)
	sparseFile(t, filepath.Join(dir, "old-stray"), 1)
	for _, c := range []string{
		`echo x > .winx/tmp/stray`,
		`touch "$WINX_TEMP_DIR/../stray"`,
		`cp /etc/hostname .winx/tmp`,
		`mkdir -p .winx/tmp/cache`,
		`cd .winx/tmp && echo x > stray`,
		`echo x | tee "$WINX_WORKSPACE_ROOT/.winx/tmp/stray"`,
		`dd if=/dev/zero of=.winx/tmp/stray count=1`,
	} {
		r, _ := e.bash(cmd(c), 10)
		if r.Structured.Status != "denied" || r.Structured.ErrorCode != codeTemporaryArtifactPolicy {
			t.Errorf("%q = %s/%s (%s), want denied/%s", c, r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output, codeTemporaryArtifactPolicy)
		}
	}
	// The session's own directory exists from the shell's start.
	own := filepath.Base(e.tempDir())
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		if en.Name() != "old-stray" && en.Name() != own {
			t.Errorf("a refused command created %s", en.Name())
		}
	}
	for _, c := range []string{`mkdir -p "$WINX_TEMP_DIR/h" && echo x > "$WINX_TEMP_DIR/h/f"`, `rm -f .winx/tmp/old-stray`} {
		if r, _ := e.bash(cmd(c), 10); r.Structured.Status != "completed" {
			t.Errorf("%q = %s (%s), want completed", c, r.Structured.Status, r.Structured.Output)
		}
	}
	if fileExists(filepath.Join(dir, "old-stray")) || !fileExists(filepath.Join(e.tempDir(), "h", "f")) {
		t.Error("the allowed commands did not run")
	}
}

// TestTempArtifactUsageOnEveryResult: every BashCommand answer carries the
// session's usage as audited after the action, so a running command's
// later writes show on the status check that reports its end.
func TestTempArtifactUsageOnEveryResult(t *testing.T) {
	e := newBashEnv(t, "")
	_, d := e.bash(cmd(`mkdir -p "$WINX_TEMP_DIR/h" && printf 12345 > "$WINX_TEMP_DIR/h/f"`), 10)
	if ta := d.TempArtifacts; ta == nil || ta.Files != 1 || ta.Bytes != 5 || ta.Reclaimed != nil || ta.WorkspaceReclaimed != nil {
		t.Fatalf("temp_artifacts after the write = %+v, want 1 file of 5 bytes, nothing reclaimed", d.TempArtifacts)
	}
	r, d := e.bash(cmd(`sleep 1; printf 1234567 > "$WINX_TEMP_DIR/g"`), 0.1)
	if r.Structured.Status != "running" || d.TempArtifacts == nil || d.TempArtifacts.Files != 1 {
		t.Fatalf("running answer = %s, temp_artifacts %+v", r.Structured.Status, d.TempArtifacts)
	}
	r, d = e.bash(map[string]any{"type": "status_check"}, 20)
	if r.Structured.Status != "completed" || d.TempArtifacts == nil || d.TempArtifacts.Files != 2 || d.TempArtifacts.Bytes != 12 {
		t.Fatalf("status check = %s, temp_artifacts %+v; want 2 files of 12 bytes", r.Structured.Status, d.TempArtifacts)
	}
	if _, d = e.bash(map[string]any{"type": "screen"}, 1); d.TempArtifacts == nil || d.TempArtifacts.Files != 2 {
		t.Errorf("screen answer temp_artifacts = %+v", d.TempArtifacts)
	}
}

// TestTempArtifactDynamicWriteCountsAtOnce: a write no preflight can see (a
// path computed at run time) counts from the very next command: the
// audit after the action replaces the scan taken before it.
func TestTempArtifactDynamicWriteCountsAtOnce(t *testing.T) {
	e := newBashEnv(t, "")
	r, d := e.bash(cmd(`d=$(printf %s "$WINX_TEMP_DIR"); mkdir -p "$d" && truncate -s 70M "$d/big"`), 20)
	if r.Structured.Status != "completed" || d.TempArtifacts == nil || d.TempArtifacts.Bytes != 70<<20 {
		t.Fatalf("dynamic write = %s (%s), temp_artifacts %+v", r.Structured.Status, r.Structured.Output, d.TempArtifacts)
	}
	r, _ = e.bash(cmd("touch marker"), 10)
	if r.Structured.Status != "denied" || r.Structured.ErrorCode != codeTemporaryArtifactPolicy || fileExists(filepath.Join(e.root, "marker")) {
		t.Fatalf("the next command = %s/%s (%s); want denied before it runs", r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output)
	}
}

// TestTempArtifactSessionReclaimsOwnStaleHelpers: an active session at 75%
// of a budget deletes its own helpers idle for the full 24 h, oldest first,
// until it is back at 50%; younger helpers, and every helper of a session
// below 75%, stay.
func TestTempArtifactSessionReclaimsOwnStaleHelpers(t *testing.T) {
	now := time.Now()
	helpers := []struct {
		name string
		size int64
		age  time.Duration
		gone bool
	}{
		{"oldest", 20 << 20, 48 * time.Hour, true},
		{"older", 20 << 20, 30 * time.Hour, true},
		{"old", 1 << 20, 26 * time.Hour, false},    // stale, but 50% is reached before it
		{"almost", 5 << 20, 23 * time.Hour, false}, // not idle for the full 24 h
		{"young", 10 << 20, 0, false},
	}
	setup := func(e *bashEnv, scale int64) {
		for _, h := range helpers {
			dir := filepath.Join(e.tempDir(), h.name)
			sparseFile(t, filepath.Join(dir, "out"), h.size/scale)
			ageTree(t, dir, now.Add(-h.age))
		}
	}

	// 56 MiB of 64: 87.5%, over the 75% mark.
	e := newBashEnv(t, "")
	setup(e, 1)
	r, d := e.bash(cmd("true"), 10)
	if r.Structured.Status != "completed" {
		t.Fatalf("true = %s (%s)", r.Structured.Status, r.Structured.Output)
	}
	for _, h := range helpers {
		if gone := !fileExists(filepath.Join(e.tempDir(), h.name)); gone != h.gone {
			t.Errorf("helper %s (%s idle) removed %v, want %v", h.name, h.age, gone, h.gone)
		}
	}
	ta := d.TempArtifacts
	want := artifacts.Freed{Dirs: 2, Files: 2, Bytes: 40 << 20}
	if ta == nil || ta.Reclaimed == nil || *ta.Reclaimed != want || ta.WorkspaceReclaimed == nil || *ta.WorkspaceReclaimed != want || ta.Bytes != 16<<20 || ta.Files != 3 {
		t.Errorf("temp_artifacts = %+v, want 3 files of 16 MiB left and %+v reclaimed", ta, want)
	}

	// The same helpers at a quarter of the size: 14 MiB, 22%, nothing goes.
	e = newBashEnv(t, "")
	setup(e, 4)
	_, d = e.bash(cmd("true"), 10)
	for _, h := range helpers {
		if !fileExists(filepath.Join(e.tempDir(), h.name)) {
			t.Errorf("helper %s removed below the 75%% mark", h.name)
		}
	}
	if d.TempArtifacts == nil || d.TempArtifacts.Reclaimed != nil {
		t.Errorf("temp_artifacts below the mark = %+v", d.TempArtifacts)
	}
}
