package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"winx/guardian/wire"
)

// TestArchitectCannotReadState is the first half of the review's
// architect escape: an allowed `git status` runs a clean filter the
// repository names, and that program read the wire secret from the state
// directory. The read-only layer of an architect shell now hides the state
// directory (the secret, every session's private directory) and the socket
// directory (the guardians' records) from everything it starts; the
// session's own workspace stays readable. (The second half, a program that
// has the secret anyway, is TestArchitectWireRefused.)
func TestArchitectCannotReadState(t *testing.T) {
	needLandlock(t)
	d := newDaemonEnv(t)
	ws := t.TempDir()
	filterRepo(t, ws)
	cmd := exec.Command(filepath.Join(d.bins, "winx"))
	cmd.Env = append(d.env, "LC_ALL=C")
	c, stderr := startSandboxClient(t, cmd)
	const thread = "architect_state"
	if status, text := c.call("Initialize", map[string]any{"any_workspace_path": ws, "thread_id": thread}); status == "error" {
		t.Fatalf("Initialize = %s %s\nstderr: %s", status, text, stderr.String())
	}
	if status, text := c.call("Initialize", map[string]any{"type": "user_asked_mode_change", "mode_name": "architect",
		"thread_id": thread, "any_workspace_path": ws}); status == "error" {
		t.Fatalf("mode change to architect = %s %s", status, text)
	}
	state := filepath.Join(d.state, "winx")
	q := shellQuote
	probe := `sh -c '` + strings.Join([]string{
		`cat ` + q(filepath.Join(state, wire.SecretFileName)) + ` >/dev/null 2>&1; echo "secret=$?" >&2`,
		`ls ` + q(filepath.Join(state, wire.SessionsDirName)) + ` >/dev/null 2>&1; echo "sessions=$?" >&2`,
		`ls ` + q(d.sock) + ` >/dev/null 2>&1; echo "sockets=$?" >&2`,
		`cat ` + q(filepath.Join(ws, "victim.txt")) + ` >/dev/null 2>&1; echo "workspace=$?" >&2`,
		`cat`,
	}, "; ") + `'`
	probe = strings.ReplaceAll(probe, `'\''`, `"`) // the quoted paths hold no quote
	armFilter(t, ws, probe, 1)
	status, text := c.call("BashCommand", map[string]any{"command": "git status --short", "thread_id": thread, "workspace_root": ws})
	t.Logf("git status in architect (%s):\n%s", status, text)
	for _, want := range []string{"secret=1", "sessions=2", "sockets=2", "workspace=0"} {
		if !strings.Contains(text, want) {
			t.Errorf("the filter program's probe: want %q in\n%s", want, text)
		}
	}
	if _, err := os.Stat(filepath.Join(state, wire.SecretFileName)); err != nil {
		t.Fatalf("the test's premise: no wire secret at %s: %v", state, err)
	}
}
