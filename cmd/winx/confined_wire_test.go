package main

import (
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/guardian/wire"
	"winx/pty/sandbox"
	"winx/pty/testenv"
)

// The attack of the review, with the wire secret in hand: an architect
// session ran an allowed git status, whose repository named a clean
// filter; the filter program read the wire secret, said hello to winxd
// with it, asked daemon.ensure for an unconfined session and wrote through
// it. These tests give the program the secret on purpose (a copy in the
// workspace, as if the sandbox failed to hide it): winxd and every
// guardian must still refuse it, because of where it runs. The same
// program in an unconfined wcgw session keeps today's behaviour.

// needLandlock skips without Landlock, except under CI, where it fails.
func needLandlock(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Probe(); err != nil {
		testenv.Missing(t, "Landlock unavailable: %v", err)
	}
}

// buildWireConfined builds the attack program in dir, where a confined
// shell can run it ("" for a temporary directory: the sandbox hides those).
func buildWireConfined(t *testing.T, dir string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	bin := filepath.Join(dir, "wireconfined")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/wireconfined").CombinedOutput(); err != nil {
		t.Fatalf("go build wireconfined: %v\n%s", err, out)
	}
	return bin
}

// reportSocket listens where the attack program reports (a pathname
// socket, which a confined program can connect to) in a new directory
// under parent ("" for the temporary directory, which the sandbox hides)
// and returns the path and a function that waits for one whole report.
func reportSocket(t *testing.T, parent string) (string, func() string) {
	t.Helper()
	dir, err := os.MkdirTemp(parent, "wxr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "r.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return path, func() string {
		t.Helper()
		ln.SetDeadline(time.Now().Add(90 * time.Second))
		c, err := ln.Accept()
		if err != nil {
			t.Fatalf("the attack program never reported: %v", err)
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(90 * time.Second))
		b, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("reading the report: %v (so far %q)", err, b)
		}
		return string(b)
	}
}

// checkRefused fails unless every step of report was refused as a
// confined caller (CodeConfinedPeer), winxd and each of guardians among
// them, and no escape marker exists in out.
func checkRefused(t *testing.T, report string, guardians []string, out string) {
	t.Helper()
	t.Logf("the attack program reported:\n%s", report)
	if !strings.Contains(report, "DONE") || strings.Contains(report, "NOSECRET") {
		t.Fatalf("the attack did not run to its end with the secret:\n%s", report)
	}
	if strings.Contains(report, "ACCEPTED") {
		t.Errorf("a confined program with the secret was served:\n%s", report)
	}
	confined := "code=-32004 wire: refused: the caller runs inside a confined session"
	want := []string{"REFUSED hello winxd " + confined}
	for _, g := range guardians {
		want = append(want, "REFUSED hello "+filepath.Base(g)+" "+confined)
	}
	for _, w := range want {
		if !strings.Contains(report, w) {
			t.Errorf("report lacks %q", w)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(out, "escaped-*")); len(m) > 0 {
		t.Errorf("commands ran for the confined program: %v", m)
	}
}

// attackArgs is the attack program's command line.
func attackArgs(bin, report, secret, winxdSock, out string, detach, filter bool, guardians []string) string {
	args := []string{bin, "-report", report, "-secret", secret, "-winxd", winxdSock, "-out", out}
	if detach {
		args = append(args, "-detach")
	}
	if filter {
		args = append(args, "-filter")
	}
	return strings.Join(append(args, guardians...), " ")
}

// copySecret copies the runtime's wire secret to dst, where the session
// can read it.
func copySecret(t *testing.T, state, dst string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, "winx", wire.SecretFileName))
	if err != nil {
		t.Fatalf("the wire secret: %v", err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// git runs git in dir and fails the test if it fails.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// armFilter makes the next git status in ws run filter as the clean
// filter of victim.txt: the file keeps its size and its index entry but
// changes its content and time, so git must hash it through the filter.
func armFilter(t *testing.T, ws, filter string, round int) {
	t.Helper()
	gitIn(t, ws, "config", "filter.probe.clean", filter)
	content := []byte{byte('a' + round), '\n'}
	if err := os.WriteFile(filepath.Join(ws, "victim.txt"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	when := time.Unix(1_000_000_000+int64(round)*1000, 0)
	if err := os.Chtimes(filepath.Join(ws, "victim.txt"), when, when); err != nil {
		t.Fatal(err)
	}
}

// filterRepo makes ws a git repository whose victim.txt goes through the
// clean filter "probe" (armFilter names its program).
func filterRepo(t *testing.T, ws string) {
	t.Helper()
	gitIn(t, ws, "init", "-q")
	if err := os.WriteFile(filepath.Join(ws, "victim.txt"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, ws, "add", "victim.txt")
	gitIn(t, ws, "commit", "-q", "-m", "victim")
	// The filter's attribute only now: the test's own git add ran none.
	if err := os.WriteFile(filepath.Join(ws, ".gitattributes"), []byte("victim.txt filter=probe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestArchitectWireRefused: a git clean filter run by git status in an
// architect session has the wire secret and attacks winxd (daemon.ensure
// of an unconfined session), its own guardian and another session's
// (unconfined) guardian, first from git's process tree and then detached
// (double fork and setsid). Everything is refused; the adapter keeps
// working, and the same program in the unconfined wcgw session is served.
func TestArchitectWireRefused(t *testing.T) {
	needLandlock(t)
	d := newDaemonEnv(t)
	bin := buildWireConfined(t, "")
	ws, other, out := t.TempDir(), t.TempDir(), t.TempDir()
	filterRepo(t, ws)

	cmd := exec.Command(filepath.Join(d.bins, "winx"))
	cmd.Env = append(d.env, "LC_ALL=C")
	c, stderr := startSandboxClient(t, cmd)
	const thread, otherThread = "architect_wire", "wcgw_wire"
	if status, text := c.call("Initialize", map[string]any{"any_workspace_path": ws, "thread_id": thread}); status == "error" {
		t.Fatalf("Initialize = %s %s\nstderr: %s", status, text, stderr.String())
	}
	if status, text := c.call("Initialize", map[string]any{"any_workspace_path": other, "thread_id": otherThread}); status == "error" {
		t.Fatalf("Initialize (wcgw) = %s %s", status, text)
	}
	if status, text := c.call("Initialize", map[string]any{"type": "user_asked_mode_change", "mode_name": "architect",
		"thread_id": thread, "any_workspace_path": ws}); status == "error" {
		t.Fatalf("mode change to architect = %s %s", status, text)
	}
	guardians, _ := filepath.Glob(filepath.Join(d.sock, "g-*.sock"))
	if len(guardians) != 2 {
		t.Fatalf("guardian sockets %v, want the two sessions'", guardians)
	}
	secret := filepath.Join(ws, "secret-copy")
	copySecret(t, d.state, secret)
	winxdSock := filepath.Join(d.sock, wire.DaemonSocketName)

	for round, detach := range []bool{false, true} {
		name := map[bool]string{false: "in git's process tree", true: "detached"}[detach]
		report, wait := reportSocket(t, "")
		armFilter(t, ws, attackArgs(bin, report, secret, winxdSock, out, detach, true, guardians), round+1)
		status, text := c.call("BashCommand", map[string]any{"command": "git status --short", "thread_id": thread, "workspace_root": ws})
		if status == "denied" || status == "error" {
			t.Fatalf("%s: git status in architect = %s %s", name, status, text)
		}
		got := wait()
		if detach && strings.Contains(got, "PPID 1 ") {
			t.Logf("%s: the orphan was reparented to init, not to its guardian", name)
		}
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) { checkRefused(t, got, guardians, out) })
	}

	// The adapter, and the operator CLI, keep working.
	if status, text := c.call("BashCommand", map[string]any{"command": "echo still-$((40+2))", "thread_id": otherThread, "workspace_root": other}); !strings.Contains(text, "still-42") {
		t.Errorf("the adapter after the attacks: %s %q", status, text)
	}
	if l := d.list(); len(l) != 2 {
		t.Errorf("winx list after the attacks = %v, want the two sessions", l)
	}
	// Today's behaviour: the unconfined wcgw session's program with the
	// secret drives winxd.
	report, wait := reportSocket(t, "")
	c.call("BashCommand", map[string]any{"command": attackArgs(bin, report, secret, winxdSock, out, false, false, nil), "thread_id": otherThread, "workspace_root": other})
	got := wait()
	t.Logf("the wcgw program reported:\n%s", got)
	if !strings.Contains(got, "ACCEPTED hello winxd") || !strings.Contains(got, "ACCEPTED ensure") || !strings.Contains(got, "ACCEPTED run") {
		t.Errorf("the unconfined wcgw program was refused:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(out, "escaped-ensure")); err != nil {
		t.Errorf("the wcgw program's command did not run: %v", err)
	}
}

// TestSandboxWireRefused: a program in a WINX_SANDBOX=1 session that has
// the wire secret attacks winxd (daemon.ensure of an unconfined session)
// and its own guardian, from its shell and detached (double fork and
// setsid). Everything is refused and the adapter keeps working.
func TestSandboxWireRefused(t *testing.T) {
	needLandlock(t)
	d, home, ws := newSandboxHome(t)
	// Everything the confined program uses lies in its workspace: the
	// sandbox hides the temporary directories.
	bin := buildWireConfined(t, ws)
	out := filepath.Join(ws, "out")
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(filepath.Join(d.bins, "winx"))
	cmd.Env = append(d.env, "WINX_SANDBOX=1", "HOME="+home, "XDG_STATE_HOME="+d.state, "LC_ALL=C",
		"XDG_RUNTIME_DIR="+d.sock, "WINX_SOCKET="+filepath.Join(d.sock, wire.DaemonSocketName))
	c, stderr := startSandboxClient(t, cmd)
	const thread = "sandbox_wire"
	if status, text := c.call("Initialize", map[string]any{"any_workspace_path": ws, "thread_id": thread}); status == "error" {
		t.Fatalf("Initialize = %s %s\nstderr: %s", status, text, stderr.String())
	}
	guardians, _ := filepath.Glob(filepath.Join(d.sock, "g-*.sock"))
	if len(guardians) != 1 {
		t.Fatalf("guardian sockets %v, want the session's", guardians)
	}
	secret := filepath.Join(ws, "secret-copy")
	copySecret(t, d.state, secret)
	winxdSock := filepath.Join(d.sock, wire.DaemonSocketName)

	for _, detach := range []bool{false, true} {
		name := map[bool]string{false: "from the shell", true: "detached"}[detach]
		report, wait := reportSocket(t, ws)
		c.call("BashCommand", map[string]any{"command": attackArgs(bin, report, secret, winxdSock, out, detach, false, guardians), "thread_id": thread, "workspace_root": ws})
		got := wait()
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) { checkRefused(t, got, guardians, out) })
	}
	if status, text := c.call("BashCommand", map[string]any{"command": "echo still-$((40+2))", "thread_id": thread, "workspace_root": ws}); !strings.Contains(text, "still-42") {
		t.Errorf("the adapter after the attacks: %s %q", status, text)
	}
}
