package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"winx/guardian/wire"
	"winx/pty/testenv"
)

// confinedUIDs are the users the confinement attacks run as: root (as CI
// runs, and as self-hosters in a container do) and an unprivileged uid. A
// boundary must hold for both; running as another uid needs root.
func confinedUIDs(t *testing.T) []int {
	t.Helper()
	if os.Geteuid() != 0 {
		return []int{os.Geteuid()}
	}
	return []int{0, nobody}
}

// uidName names a subtest by its uid.
func uidName(uid int) string {
	if uid == 0 {
		return "root"
	}
	return "uid" + strconv.Itoa(uid)
}

// confinedInstall is one installation of the built binaries run by uid with
// WINX_SANDBOX=1 and the daemon runtime: copies of the binaries it can
// execute, a home directory outside /tmp (which holds the state directory,
// hidden by the sandbox) and a socket directory in it.
type confinedInstall struct {
	uid              int
	base, bin        string
	home, state, run string
	tmp              string // TMPDIR of winx and its guardians
	env              []string
	stderr           *syncBuffer
	client           *sandboxClient
}

// newConfinedInstall prepares the directories for uid and starts winx
// serving stdio with extraEnv added.
func newConfinedInstall(t *testing.T, uid int, extraEnv ...string) *confinedInstall {
	t.Helper()
	bins := daemonBins(t)
	base, err := os.MkdirTemp("/var/tmp", "wxc")
	if err != nil {
		testenv.Missing(t, "no /var/tmp for a home directory outside /tmp: %v", err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	ci := &confinedInstall{uid: uid, base: base, bin: filepath.Join(base, "bin"),
		home: filepath.Join(base, "home"), tmp: filepath.Join(base, "tmp")}
	ci.state = filepath.Join(ci.home, ".local", "state")
	ci.run = filepath.Join(ci.home, "run")
	t.Cleanup(func() {
		// Every process started from these copies, whatever happened.
		killByExe(ci.bin)
		os.RemoveAll(base)
	})
	if err := os.Mkdir(ci.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"winx", "winxd", "winx-guardian"} {
		copyExecutable(t, filepath.Join(bins, name), filepath.Join(ci.bin, name))
	}
	for _, dir := range []string{ci.home, ci.tmp, ci.run, filepath.Join(ci.home, ".local"), ci.state} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	ci.env = []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + ci.home, "XDG_STATE_HOME=" + ci.state, "XDG_RUNTIME_DIR=" + ci.run,
		"WINX_SOCKET=" + filepath.Join(ci.run, wire.DaemonSocketName), "TMPDIR=" + ci.tmp,
		"WINX_RUNTIME=daemon", "WINX_SANDBOX=1", "LANG=C.UTF-8", "LC_ALL=C",
	}
	ci.env = append(ci.env, extraEnv...)
	ci.client, ci.stderr = ci.startClient(t)
	return ci
}

// startClient starts another winx of the installation, as its uid, with
// extraEnv added, and returns a client of it.
func (ci *confinedInstall) startClient(t *testing.T, extraEnv ...string) (*sandboxClient, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(filepath.Join(ci.bin, "winx"))
	cmd.Env = append(append([]string(nil), ci.env...), extraEnv...)
	cmd.Dir = ci.home
	if ci.uid != os.Geteuid() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(ci.uid), Gid: uint32(ci.uid)}}
	}
	return startSandboxClient(t, cmd)
}

// workspace makes a workspace directory of uid inside the home directory.
func (ci *confinedInstall) workspace(t *testing.T, name string) string {
	t.Helper()
	ws := filepath.Join(ci.home, name)
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ws, ci.uid, ci.uid); err != nil {
		t.Fatal(err)
	}
	return ws
}

// initialize starts a session for thread in ws and fails the test unless
// it started.
func (ci *confinedInstall) initialize(t *testing.T, thread, ws string) {
	t.Helper()
	if status, text := ci.client.call("Initialize", map[string]any{"any_workspace_path": ws, "thread_id": thread}); status == "error" {
		t.Fatalf("Initialize %s = %s %s\nstderr: %s", thread, status, text, ci.stderr)
	}
}

// bash runs command in thread's session and returns the answer's text.
func (ci *confinedInstall) bash(thread, ws, command string) string {
	_, text := ci.client.call("BashCommand", map[string]any{"command": command, "thread_id": thread, "workspace_root": ws, "wait_for_seconds": 20})
	return text
}

// shellPID is the pid of thread's shell, as the shell itself says.
func (ci *confinedInstall) shellPID(t *testing.T, thread, ws string) int {
	t.Helper()
	return ci.shellPIDOf(t, ci.client, thread, ws)
}

// shellPIDOf is shellPID through client c.
func (ci *confinedInstall) shellPIDOf(t *testing.T, c *sandboxClient, thread, ws string) int {
	t.Helper()
	_, text := c.call("BashCommand", map[string]any{"command": `echo "PID=$$"`, "thread_id": thread, "workspace_root": ws})
	i := strings.Index(text, "PID=")
	if i < 0 {
		t.Fatalf("no shell pid in %q", text)
	}
	f := strings.Fields(text[i+4:])
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatalf("shell pid in %q: %v", text, err)
	}
	return pid
}

// privateDirOf is the directory of the rc file the shell pid was started
// with (bash's --rcfile), wherever the runtime put it: the session's
// private directory.
func privateDirOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	args := bytes.Split(b, []byte{0})
	for i, a := range args {
		if string(a) == "--rcfile" && i+1 < len(args) {
			return filepath.Dir(string(args[i+1]))
		}
	}
	t.Fatalf("no --rcfile in the command line of %d: %q", pid, b)
	return ""
}

// TestSandboxNeighbourUnreachable is the critical finding of the review:
// a confined shell reached another session's private files (rc file with
// its nonce, journals, command scripts) because they lived in the shared
// temporary directory, which the sandbox granted; it made FIFOs named like
// the neighbour's next long-command script and fed it its own code, which
// ran in the neighbour's shell. Two confined sessions of one installation,
// as root and as an unprivileged uid: the first may not list, read or
// create anything in the second's private directory or its parent, nor in
// any shared temporary directory, and the second's long command (sourced
// from a script in its private directory) runs as sent.
func TestSandboxNeighbourUnreachable(t *testing.T) {
	needLandlock(t)
	for _, uid := range confinedUIDs(t) {
		t.Run(uidName(uid), func(t *testing.T) {
			ci := newConfinedInstall(t, uid)
			wsA, wsB := ci.workspace(t, "wsa"), ci.workspace(t, "wsb")
			ci.initialize(t, "attacker", wsA)
			ci.initialize(t, "victim", wsB)
			victim := privateDirOf(t, ci.shellPID(t, "victim", wsB))
			// A command of the victim's, so a journal exists to steal.
			if text := ci.bash("victim", wsB, "echo victim-journal-line"); !strings.Contains(text, "victim-journal-line") {
				t.Fatalf("victim's echo = %q", text)
			}
			q := shellQuote
			attack := strings.Join([]string{
				`ls -a ` + q(victim) + ` >/dev/null 2>&1; echo "ls=$?"`,
				`cat ` + q(victim) + `/bashrc 2>/dev/null | head -c 64 | grep -c . ; echo "rc=${PIPESTATUS[0]}"`,
				`cat ` + q(victim) + `/output-*.txt 2>/dev/null | grep -c victim-journal-line`,
				`mkfifo ` + q(victim) + `/cmd-3.sh 2>/dev/null; echo "fifo=$?"`,
				`ln -s /etc/passwd ` + q(victim) + `/cmd-4.sh 2>/dev/null; echo "link=$?"`,
				`ls -a ` + q(filepath.Dir(victim)) + ` >/dev/null 2>&1; echo "root=$?"`,
				// Shared temporary directories: the system's and the one
				// winx itself was given.
				`touch /tmp/wx-neighbour-$$ 2>/dev/null; echo "tmp=$?"`,
				`touch ` + q(ci.tmp) + `/wx-neighbour-$$ 2>/dev/null; echo "winxtmp=$?"`,
				// The session's own temporary directory works.
				`f=$(mktemp) && echo ok > "$f" && cat "$f" && echo "own=$?"`,
			}, "\n")
			text := ci.bash("attacker", wsA, attack)
			t.Logf("the confined attacker saw:\n%s", text)
			for _, want := range []string{"ls=2", "rc=1", "fifo=1", "link=1", "root=2", "tmp=1", "winxtmp=1", "ok\nown=0"} {
				if !strings.Contains(text, want) {
					t.Errorf("attacker's probe: want %q in\n%s", want, text)
				}
			}
			if strings.Contains(text, "\n1\n") {
				t.Errorf("the attacker read the victim's journal:\n%s", text)
			}
			// The victim's long command goes through a script in its
			// private directory and runs exactly as sent.
			long := "echo long-start; : " + strings.Repeat("x", 3000) + "; echo long-end $((6*7))"
			if text := ci.bash("victim", wsB, long); !strings.Contains(text, "long-start") || !strings.Contains(text, "long-end 42") {
				t.Errorf("victim's long command = %q, want its own output", text)
			}
			for _, name := range []string{"cmd-3.sh", "cmd-4.sh"} {
				if _, err := os.Lstat(filepath.Join(victim, name)); err == nil {
					t.Errorf("%s was planted in the victim's private directory", name)
				}
			}
		})
	}
}

// TestSandboxTerminalUnreachable is the review's terminal finding: the
// Landlock rulesets left all of /dev/pts open, so a confined shell opened
// every other session's terminal for writing, and as root typed a command
// into an unconfined session's with TIOCSTI, which ran it. A confined
// program now opens no terminal but its own, and TIOCSTI fails even there;
// the unconfined victim runs nothing it did not send. As root (with
// dev.tty.legacy_tiocsti on, where the kernel itself would allow it) and
// as an unprivileged uid.
func TestSandboxTerminalUnreachable(t *testing.T) {
	needLandlock(t)
	for _, uid := range confinedUIDs(t) {
		t.Run(uidName(uid), func(t *testing.T) {
			ci := newConfinedInstall(t, uid)
			wsA, wsV := ci.workspace(t, "wsa"), ci.workspace(t, "wsv")
			bin := filepath.Join(wsA, "ptsattack")
			if out, err := exec.Command("go", "build", "-o", bin, "./testdata/ptsattack").CombinedOutput(); err != nil {
				t.Fatalf("go build ptsattack: %v\n%s", err, out)
			}
			if err := os.Chmod(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			// The victim: an unconfined session of the same installation,
			// idle at its prompt.
			victim, vstderr := ci.startClient(t, "WINX_SANDBOX=0")
			if status, text := victim.call("Initialize", map[string]any{"any_workspace_path": wsV, "thread_id": "victim"}); status == "error" {
				t.Fatalf("victim Initialize = %s %s\nstderr: %s", status, text, vstderr)
			}
			if _, text := victim.call("BashCommand", map[string]any{"command": "echo victim-ready", "thread_id": "victim", "workspace_root": wsV}); !strings.Contains(text, "victim-ready") {
				t.Fatalf("victim's echo = %q", text)
			}
			victimTTY, err := os.Readlink("/proc/" + strconv.Itoa(ci.shellPIDOf(t, victim, "victim", wsV)) + "/fd/0")
			if err != nil || !strings.HasPrefix(victimTTY, "/dev/pts/") {
				t.Fatalf("the victim's terminal: %q, %v", victimTTY, err)
			}
			ci.initialize(t, "attacker", wsA)
			pwned := filepath.Join(wsV, "pwned")
			text := ci.bash("attacker", wsA, bin+" "+victimTTY+" "+shellQuote("touch "+pwned))
			t.Logf("the confined attacker saw:\n%s", text)
			if !strings.Contains(text, "SUMMARY") {
				t.Fatalf("the attack program did not run: %q", text)
			}
			if !strings.Contains(text, "OPEN "+victimTTY+" denied") {
				t.Errorf("the attack did not try (or was not denied) the victim's terminal %s:\n%s", victimTTY, text)
			}
			if !strings.Contains(text, "opened=0") {
				t.Errorf("a confined program opened another terminal:\n%s", text)
			}
			if strings.Contains(text, "TIOCSTI own ok") || strings.Contains(text, "TIOCSTI /dev/pts") {
				t.Errorf("a confined program could type with TIOCSTI:\n%s", text)
			}
			// The confined shell holds no capability, even as root, and
			// runs with no_new_privs under the launcher's seccomp filter.
			status := ci.bash("attacker", wsA, `grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status`)
			want := []string{"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
				"CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"}
			if uid == 0 {
				// Dropping the bounding set needs CAP_SETPCAP, which
				// only root has; under no_new_privs it grants nothing.
				want = append(want, "CapBnd:\t0000000000000000")
			}
			for _, w := range want {
				if !strings.Contains(status, w) {
					t.Errorf("confined shell's status lacks %q:\n%s", w, status)
				}
			}
			// Whatever was typed would run with the victim's next line.
			if _, text := victim.call("BashCommand", map[string]any{"command": "echo victim-alive", "thread_id": "victim", "workspace_root": wsV}); !strings.Contains(text, "victim-alive") {
				t.Errorf("victim after the attack = %q", text)
			}
			if _, err := os.Stat(pwned); err == nil {
				t.Errorf("the victim session ran a command typed by the confined one")
			}
		})
	}
}

// TestSandboxNetworkDeny: with WINX_SANDBOX_NETWORK=deny a confined session
// cannot reach a TCP listener on 127.0.0.1 (nor open a UDP socket), while
// its terminal and Unix sockets keep working; a confined session of an
// adapter that allows networking, in the same workspace, gets a guardian
// of its own and connects. As root and as an unprivileged uid.
func TestSandboxNetworkDeny(t *testing.T) {
	needLandlock(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello-from-listener\n"))
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	probe := `exec 3<>/dev/tcp/127.0.0.1/` + port + ` && head -n1 <&3; echo "tcp=$?"; ` +
		`exec 4<>/dev/udp/127.0.0.1/9 2>/dev/null; echo "udp=$?"; echo terminal-works`
	for _, uid := range confinedUIDs(t) {
		t.Run(uidName(uid), func(t *testing.T) {
			ci := newConfinedInstall(t, uid, "WINX_SANDBOX_NETWORK=deny")
			ws := ci.workspace(t, "ws")
			ci.initialize(t, "nonet", ws)
			text := ci.bash("nonet", ws, probe)
			if strings.Contains(text, "hello-from-listener") || !strings.Contains(text, "udp=1") || !strings.Contains(text, "terminal-works") {
				t.Errorf("deny: the confined shell's probe = %q; want no TCP, no UDP, a working terminal", text)
			}
			allow, astderr := ci.startClient(t, "WINX_SANDBOX_NETWORK=allow")
			if status, text := allow.call("Initialize", map[string]any{"any_workspace_path": ws, "thread_id": "net"}); status == "error" {
				t.Fatalf("allow Initialize = %s %s\nstderr: %s", status, text, astderr)
			}
			if _, text := allow.call("BashCommand", map[string]any{"command": probe, "thread_id": "net", "workspace_root": ws, "wait_for_seconds": 20}); !strings.Contains(text, "hello-from-listener") {
				t.Errorf("allow: the confined shell's probe = %q; want the listener's line", text)
			}
			// The deny session still has no network after the allow
			// session started: they do not share a guardian.
			if text := ci.bash("nonet", ws, probe); strings.Contains(text, "hello-from-listener") {
				t.Errorf("deny after an allow session started: %q", text)
			}
		})
	}
}

// TestSandboxNetworkValueChecked: WINX_SANDBOX_NETWORK outside allow and
// deny, or deny without the sandbox, stops start-up naming the variable.
func TestSandboxNetworkValueChecked(t *testing.T) {
	for _, env := range [][]string{{"WINX_SANDBOX=1", "WINX_SANDBOX_NETWORK=off"}, {"WINX_SANDBOX=0", "WINX_SANDBOX_NETWORK=deny"}} {
		cmd := exec.Command(buildWinx(t))
		cmd.Env = append(append(os.Environ(), "HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir()), env...)
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "WINX_SANDBOX_NETWORK") || strings.Contains(string(out), `"result"`) {
			t.Errorf("winx with %v = %v, %q; want start-up stopped naming WINX_SANDBOX_NETWORK", env, err, out)
		}
	}
}
