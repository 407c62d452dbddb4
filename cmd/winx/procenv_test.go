package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/guardian/wire"
	"winx/guardian/wire/hermetic"
)

// nobody is the unprivileged uid and gid the /proc test runs winx as.
const nobody = 65534

// copyExecutable copies the built binary src to dst, mode 0755.
func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestProcEnvironUnreadable is finding 2(c): a session shell read
// WINX_HTTP_TOKEN from /proc/PID/environ of the server, which runs as the
// same user. winx, winxd and winx-guardian run here as an unprivileged uid
// (the daemon runtime, so all three exist), and the attack is run twice as
// that uid: from the test (cat /proc/PID/environ of winx) and from inside
// a session shell (every /proc/PID/environ it can open).
func TestProcEnvironUnreadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the server as another, unprivileged uid")
	}
	bins := daemonBins(t)
	// Short (socket paths) and reachable by the unprivileged uid, unlike
	// TestMain's private directory.
	dir, err := os.MkdirTemp("/tmp", "wxu")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"winx", "winxd", "winx-guardian"} {
		copyExecutable(t, filepath.Join(bins, name), filepath.Join(dir, name))
	}
	// Whatever happens, end every process started from these copies.
	t.Cleanup(func() { killByExe(dir) })
	for _, sub := range []string{"home", "state", "run", "ws"} {
		p := filepath.Join(dir, sub)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	port := pickPort(t)
	cmd := exec.Command(filepath.Join(dir, "winx"), "serve", "--http", "--bind", "127.0.0.1:"+port, "--requests-per-minute", "0")
	cmd.Dir = filepath.Join(dir, "ws")
	cmd.Env = []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"XDG_RUNTIME_DIR=" + filepath.Join(dir, "run"),
		"WINX_SOCKET=" + filepath.Join(dir, "run", wire.DaemonSocketName),
		"WINX_RUNTIME=daemon",
		"LANG=C.UTF-8",
		"WINX_HTTP_TOKEN=" + serveTestToken,
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}, Setpgid: true}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		hermetic.Kill(cmd.Process.Pid, true)
		cmd.Wait()
	})
	s := &runningServe{base: "http://127.0.0.1:" + port, port: port, client: &http.Client{Timeout: 30 * time.Second},
		cancel: func() {}, done: make(chan error, 1), stderr: stderr}
	up := false
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && !up; time.Sleep(50 * time.Millisecond) {
		if resp, err := s.client.Get(s.base + "/healthz"); err == nil {
			resp.Body.Close()
			up = true
		}
	}
	if !up {
		t.Fatalf("winx not serving; stderr: %s", stderr)
	}

	// The attack from outside a session, as the same uid.
	environ := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ"
	cat := exec.Command("cat", environ)
	cat.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cat.CombinedOutput()
	if err == nil || strings.Contains(string(out), "WINX_HTTP_TOKEN") {
		t.Errorf("uid %d read %s: err %v, %d bytes", nobody, environ, err, len(out))
	} else if !strings.Contains(string(out), "Permission denied") {
		t.Errorf("cat %s: %v %q, want EACCES", environ, err, out)
	}

	// The attack from inside a session shell: every process whose
	// environment it can read, and whether any holds the token.
	ws := filepath.Join(dir, "ws")
	m := callAs(t, s, serveTestToken, "Initialize", map[string]any{"any_workspace_path": ws, "thread_id": "proc"})
	if sc := structured(m); sc["status"] != "completed" && sc["status"] != "completed_with_issues" {
		t.Fatalf("Initialize: %v; stderr: %s", m, stderr)
	}
	script := `for p in /proc/[0-9]*; do if cat $p/environ >/dev/null 2>&1; then echo "READABLE $(cat $p/comm 2>/dev/null)"; fi; done; ` +
		`echo "TOKENHITS $(grep -l WINX_HTTP_TOKEN= /proc/[0-9]*/environ 2>/dev/null | wc -l)"`
	m = callAs(t, s, serveTestToken, "BashCommand", map[string]any{"command": script, "thread_id": "proc", "workspace_root": ws})
	got, _ := structured(m)["output"].(string)
	if !strings.Contains(got, "READABLE bash") {
		t.Fatalf("the probe did not run as expected: %v", m)
	}
	for _, name := range []string{"winx", "winxd", "winx-guardian"} {
		if strings.Contains(got, "READABLE "+name+"\n") {
			t.Errorf("a session shell reads the environment of %s:\n%s", name, got)
		}
	}
	if !strings.Contains(got, "TOKENHITS 0") {
		t.Errorf("a session shell found WINX_HTTP_TOKEN in /proc:\n%s", got)
	}
}

// killByExe kills every process whose executable lies in dir: the winx,
// winxd and guardians this test started from its own copies, and nothing
// else.
func killByExe(dir string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err == nil && strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			hermetic.Kill(pid, false)
		}
	}
}
