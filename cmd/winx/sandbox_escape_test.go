package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"winx/guardian/wire"
	"winx/pty/testenv"
)

// TestSandboxWireEscape is the attack of a confined shell on the daemon
// runtime: a program run by BashCommand inside the sandbox speaks the wire
// by hand to winxd (asking for an unconfined guardian, daemon.ensure with
// sandbox:false) and to every guardian socket it finds (session.run of a
// listing of the hidden home directory). Every attempt must be refused, and
// the home directory must stay unlisted.
func TestSandboxWireEscape(t *testing.T) {
	needLandlock(t)
	d, home, ws := newSandboxHome(t)
	const marker = "escape-hidden-marker"
	if err := os.WriteFile(filepath.Join(home, marker), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// In the workspace: the temporary directories are hidden from the
	// confined shell.
	helper := filepath.Join(ws, "wireescape")
	if out, err := exec.Command("go", "build", "-o", helper, "./testdata/wireescape").CombinedOutput(); err != nil {
		t.Fatalf("go build wireescape: %v\n%s", err, out)
	}

	cmd := exec.Command(filepath.Join(d.bins, "winx"))
	cmd.Env = append(d.env, "WINX_SANDBOX=1", "HOME="+home, "XDG_STATE_HOME="+d.state, "LC_ALL=C",
		"XDG_RUNTIME_DIR="+d.sock, "WINX_SOCKET="+filepath.Join(d.sock, wire.DaemonSocketName))
	c, stderr := startSandboxClient(t, cmd)
	thread := "sandbox_escape"
	if status, text := c.call("Initialize", map[string]any{"any_workspace_path": ws, "thread_id": thread}); status == "error" {
		t.Fatalf("Initialize = %s %s\nstderr: %s", status, text, stderr.String())
	}
	// The confined shell itself cannot list the home directory.
	_, text := c.call("BashCommand", map[string]any{"command": "ls -a " + home + `; echo "rc=$?"`, "thread_id": thread, "workspace_root": ws})
	if strings.Contains(text, marker) || !strings.Contains(text, "rc=2") {
		t.Fatalf("confined ls of the home directory = %q, want it denied", text)
	}
	guardians, _ := filepath.Glob(filepath.Join(d.sock, "g-*.sock"))
	if len(guardians) == 0 {
		t.Fatalf("no guardian socket in %s", d.sock)
	}
	_, text = c.call("BashCommand", map[string]any{"command": helper + " " + d.sock + " " + home + " " + strings.Join(guardians, " "), "thread_id": thread, "workspace_root": ws})
	t.Logf("the confined program reported:\n%s", text)
	if strings.Contains(text, "ESCAPED") || strings.Contains(text, marker) || !strings.Contains(text, "REFUSED") {
		t.Errorf("a confined program drove the daemon runtime:\n%s", text)
	}
	if !strings.Contains(text, "REFUSED winxd") || !strings.Contains(text, "REFUSED run g-") {
		t.Errorf("winxd or a guardian accepted the confined program's hello:\n%s", text)
	}
}

// newSandboxHome prepares a daemon runtime for confined sessions: a home
// directory outside the temporary directories, holding the state directory
// (the wire secret, which the sandbox hides with it) and the sockets (where
// a confined shell cannot replace them), and a workspace inside it. The
// runtime is ended before the home directory is removed.
func newSandboxHome(t *testing.T) (d *daemonEnv, home, ws string) {
	t.Helper()
	home, err := os.MkdirTemp("/var/tmp", "winx-sandbox-home-")
	if err != nil {
		testenv.Missing(t, "no /var/tmp for a home directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	d = newDaemonEnv(t)
	d.state = filepath.Join(home, ".local", "state")
	d.sock = filepath.Join(home, "run")
	if err := os.Mkdir(d.sock, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.teardown)
	ws = filepath.Join(home, "project")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	return d, home, ws
}
