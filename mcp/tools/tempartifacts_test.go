package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/guardian/artifacts"
	"winx/mcp/session"
)

// tempDir is the session's WINX_TEMP_DIR, computed rather than asked for so
// no command runs (and no scan is cached) before a test sets the stage.
func (e *bashEnv) tempDir() string {
	return session.TempArtifactDir(session.Key{Principal: "p", Root: e.root})
}

func sparseFile(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestTempArtifactBudgetBlocksUntilCleanup(t *testing.T) {
	e := newBashEnv(t, "")
	tmp := e.tempDir()
	sparseFile(t, filepath.Join(tmp, "big"), artifacts.MaxSessionBytes+(6<<20))
	marker := filepath.Join(e.root, "marker")

	for _, bg := range []bool{false, true} {
		r, _ := e.bash(map[string]any{"type": "command", "command": "touch marker", "is_background": bg}, 10)
		if r.Structured.Status != "denied" || r.Structured.ErrorCode != codeTemporaryArtifactPolicy || !r.IsError {
			t.Fatalf("background %v: over budget = %s/%s (%s), want denied/%s", bg, r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output, codeTemporaryArtifactPolicy)
		}
		for _, want := range []string{"70.0 MiB", "64.0 MiB", "128 files", "32.0 MiB", "256.0 MiB", tmp} {
			if !strings.Contains(r.Structured.Output, want) {
				t.Errorf("message lacks %q: %s", want, r.Structured.Output)
			}
		}
		if fileExists(marker) {
			t.Fatalf("the refused command ran")
		}
	}
	r, _ := e.bash(cmd("touch marker"), 10)
	na := r.Structured.NextAction
	if na == nil || na.Tool != BashCommandTool {
		t.Fatalf("nextAction = %+v", na)
	}
	act, _ := na.Arguments["action_json"].(map[string]any)
	cleanup, _ := act["command"].(string)
	if cleanup != `rm -rf -- "$WINX_TEMP_DIR"/'big'` {
		t.Errorf("nextAction command = %q", cleanup)
	}

	// Looking around and cleaning up are allowed while over budget.
	r, _ = e.bash(cmd(`ls -la "$WINX_TEMP_DIR" >/dev/null 2>&1 && du -s "$WINX_TEMP_DIR"`), 10)
	if r.Structured.Status != "completed" {
		t.Errorf("ls/du while over budget = %s (%s)", r.Structured.Status, r.Structured.Output)
	}
	r, _ = e.bash(cmd(cleanup), 10)
	if r.Structured.Status != "completed" || fileExists(filepath.Join(tmp, "big")) {
		t.Fatalf("cleanup %q = %s (%s)", cleanup, r.Structured.Status, r.Structured.Output)
	}
	r, _ = e.bash(cmd("touch marker"), 10)
	if r.Structured.Status != "completed" || !fileExists(marker) {
		t.Errorf("after cleanup = %s (%s), marker exists %v", r.Structured.Status, r.Structured.Output, fileExists(marker))
	}
}

func TestTempArtifactLimitsEnforced(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, root, tmp string)
		blocked bool
		want    string // in the message when blocked
	}{
		{"within budget", func(t *testing.T, root, tmp string) {
			sparseFile(t, filepath.Join(tmp, "f"), 10<<20)
		}, false, ""},
		{"too many files", func(t *testing.T, root, tmp string) {
			for i := range artifacts.MaxSessionFiles + 1 {
				sparseFile(t, filepath.Join(tmp, "h", fmt.Sprint(i)), 1)
			}
		}, true, "129 files"},
		{"helper over its limit", func(t *testing.T, root, tmp string) {
			sparseFile(t, filepath.Join(tmp, "agent", "out"), artifacts.MaxHelperBytes+(1<<20))
		}, true, "helper directory " + "%TMP%/agent holds 33.0 MiB"},
		{"workspace over, session empty", func(t *testing.T, root, tmp string) {
			sparseFile(t, filepath.Join(artifacts.SessionDir(root, "00000000000000aa"), "f"), 300<<20)
		}, false, ""},
		{"workspace over, session holds artifacts", func(t *testing.T, root, tmp string) {
			sparseFile(t, filepath.Join(artifacts.SessionDir(root, "00000000000000aa"), "f"), 300<<20)
			sparseFile(t, filepath.Join(tmp, "mine"), 1)
		}, true, "over the 256.0 MiB workspace limit"},
		{"symlinked .winx/tmp", func(t *testing.T, root, tmp string) {
			os.Mkdir(filepath.Join(root, ".winx"), 0o700)
			// The session made its own .winx/tmp when its shell started.
			os.RemoveAll(filepath.Join(root, ".winx", "tmp"))
			if err := os.Symlink(t.TempDir(), filepath.Join(root, ".winx", "tmp")); err != nil {
				t.Fatal(err)
			}
		}, true, "could not be measured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newBashEnv(t, "")
			tmp := e.tempDir()
			tt.setup(t, e.root, tmp)
			r, _ := e.bash(cmd("touch marker"), 10)
			ran := fileExists(filepath.Join(e.root, "marker"))
			if tt.blocked {
				if r.Structured.ErrorCode != codeTemporaryArtifactPolicy || ran {
					t.Fatalf("= %s/%s (%s), ran %v; want blocked", r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output, ran)
				}
				if want := strings.ReplaceAll(tt.want, "%TMP%", tmp); !strings.Contains(r.Structured.Output, want) {
					t.Errorf("message lacks %q: %s", want, r.Structured.Output)
				}
				return
			}
			if r.Structured.Status != "completed" || !ran {
				t.Errorf("= %s/%s (%s), ran %v; want the command run", r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output, ran)
			}
		})
	}
}

// TestTempArtifactReclaimBeforeBlocking: a stale session of no live thread
// is reclaimed when the workspace is over the mark, so the command runs; a
// recent one would not be.
func TestTempArtifactReclaimBeforeBlocking(t *testing.T) {
	e := newBashEnv(t, "")
	sparseFile(t, filepath.Join(e.tempDir(), "mine"), 1)
	stale := artifacts.SessionDir(e.root, "00000000000000aa")
	sparseFile(t, filepath.Join(stale, "f"), 300<<20)
	old := time.Now().Add(-artifacts.StaleAfter - time.Hour)
	for _, p := range []string{filepath.Join(stale, "f"), stale} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	r, _ := e.bash(cmd("touch marker"), 10)
	if r.Structured.Status != "completed" || fileExists(stale) {
		t.Errorf("= %s (%s); stale session still there: %v", r.Structured.Status, r.Structured.Output, fileExists(stale))
	}
	if !fileExists(e.tempDir()) {
		t.Errorf("the live session's directory was reclaimed")
	}
}

func TestTempArtifactStaticWrites(t *testing.T) {
	e := newBashEnv(t, "")
	other := artifacts.SessionDir(e.root, "0000000000000000")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	sparseFile(t, filepath.Join(other, "keep"), 1)
	own := e.tempDir()
	rel, _ := filepath.Rel(e.root, own)
	tests := []struct {
		cmd     string
		denied  bool
		created string // a path the command creates when it runs
	}{
		{"echo x > .winx/tmp/session-0000000000000000/f", true, filepath.Join(other, "f")},
		{"touch .winx-state", true, filepath.Join(e.root, ".winx-state")},
		{"mkdir -p .winx-cache/x", true, filepath.Join(e.root, ".winx-cache")},
		{"cp /dev/null " + other + "/g", true, filepath.Join(other, "g")},
		{"cd .winx/tmp && touch session-0000000000000000/h", true, filepath.Join(other, "h")},
		{"rm -rf .winx/tmp/*", true, ""},
		{"rm -rf .winx", true, ""},
		{"mkdir -p " + rel + " && echo x > " + rel + "/own", false, filepath.Join(own, "own")},
		{`mkdir -p "$WINX_TEMP_DIR/helper" && echo x > "$WINX_TEMP_DIR/helper/f"`, false, filepath.Join(own, "helper", "f")},
		{"echo x > notes.winx-x", false, filepath.Join(e.root, "notes.winx-x")},
	}
	for _, tt := range tests {
		r, _ := e.bash(cmd(tt.cmd), 10)
		denied := r.Structured.ErrorCode == codeTemporaryArtifactPolicy
		if denied != tt.denied {
			t.Errorf("%q: denied %v (%s %s), want %v", tt.cmd, denied, r.Structured.Status, r.Structured.Output, tt.denied)
		}
		if tt.created != "" && fileExists(tt.created) == tt.denied {
			t.Errorf("%q: %s exists %v after denied=%v", tt.cmd, tt.created, fileExists(tt.created), denied)
		}
	}
	if !fileExists(filepath.Join(other, "keep")) {
		t.Errorf("another session's file was removed")
	}
}

// TestTempArtifactWarnsBeforeLimit: from 80% of a budget, commands still
// run and their result says how much is used; below it, nothing is said.
func TestTempArtifactWarnsBeforeLimit(t *testing.T) {
	e := newBashEnv(t, "")
	tmp := e.tempDir()
	sparseFile(t, filepath.Join(tmp, "big"), artifacts.MaxSessionBytes*9/10)
	r, d := e.bash(cmd("echo near"), 10)
	if r.Structured.Status != "completed" || output(r) == "" {
		t.Fatalf("at 90%%: %s (%s), want the command to run", r.Structured.Status, r.Structured.Output)
	}
	if d.TempArtifactUse != 90 || !strings.Contains(r.Structured.Output, "temporary artifacts use 90% of a budget") || !strings.Contains(r.Structured.Output, tmp) {
		t.Errorf("at 90%%: use %d, output %q; want 90 and a note naming %s", d.TempArtifactUse, r.Structured.Output, tmp)
	}
	// A scan near a limit is never reused, so the cleanup shows at once.
	if r, _ := e.bash(cmd(`rm -f "$WINX_TEMP_DIR/big"`), 10); r.Structured.Status != "completed" {
		t.Fatalf("cleanup: %s (%s)", r.Structured.Status, r.Structured.Output)
	}
	r, d = e.bash(cmd("echo below"), 10)
	if r.Structured.Status != "completed" || d.TempArtifactUse != 0 || strings.Contains(r.Structured.Output, "temporary artifacts use") {
		t.Errorf("after cleanup: %s, use %d, output %q; want no note", r.Structured.Status, d.TempArtifactUse, r.Structured.Output)
	}
}
