package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"winx/guardian"
	"winx/guardian/wire"
	"winx/pty/sandbox"
	"winx/pty/testenv"
)

func TestSandboxArgv(t *testing.T) {
	// HOME lies outside /tmp, so that its hole is not the temporary
	// directory's.
	home, err := os.MkdirTemp("/var/tmp", "winx-argv-home-")
	if err != nil {
		testenv.Missing(t, "no /var/tmp for a home directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	ws := t.TempDir()
	self := func() (string, error) { return "/opt/winx", nil }
	probeOK := func() (int, error) { return 7, nil }
	// The runtime directory lies outside every writable grant unless a
	// case says otherwise.
	run := filepath.Join(home, "run")
	env := func(m map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := m[k]; ok || k != "XDG_RUNTIME_DIR" {
				return v
			}
			return run
		}
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))

	// Off: no wrapping, no probe, nothing logged.
	probed := false
	wrap, err := sandboxArgv(false, env(map[string]string{"HOME": home}), func() (int, error) { probed = true; return 7, nil }, self, logger)
	if wrap != nil || err != nil || probed || logs.Len() != 0 {
		t.Errorf("sandbox off: wrap set %v, err %v, probed %v, logs %q; want nothing", wrap != nil, err, probed, logs.String())
	}

	// On, but the kernel cannot: a warning with the exact reason, shells unconfined.
	reason := "Landlock is built into the kernel but disabled at boot (test)"
	unavailable := func() (int, error) {
		return 0, &sandbox.UnavailableError{Reason: reason, Err: errors.ErrUnsupported}
	}
	wrap, err = sandboxArgv(true, env(map[string]string{"HOME": home}), unavailable, self, logger)
	if wrap != nil || err != nil {
		t.Errorf("sandbox unavailable: wrap set %v, err %v; want no wrapping and no error", wrap != nil, err)
	}
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, reason) {
		t.Errorf("sandbox unavailable logged %q, want a warning with %q", got, reason)
	}

	// On, with a malformed path list: start-up stops.
	_, err = sandboxArgv(true, env(map[string]string{"HOME": home, sandbox.EnvRWPaths: "relative/path"}), probeOK, self, logger)
	if !errors.Is(err, sandbox.ErrInvalidPolicy) {
		t.Errorf("sandbox with a relative RW path = %v, want ErrInvalidPolicy", err)
	}

	// On, with HOME under a writable path (in /tmp): the home directory
	// could not be hidden, so start-up stops.
	tmpHome := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(tmpHome, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = sandboxArgv(true, env(map[string]string{"HOME": tmpHome, sandbox.EnvRWPaths: filepath.Dir(tmpHome)}), probeOK, self, logger)
	if !errors.Is(err, sandbox.ErrInvalidPolicy) {
		t.Errorf("sandbox with HOME under a writable path = %v, want ErrInvalidPolicy", err)
	}

	// On: every argv goes through the launcher with the shell's workspace.
	wrap, err = sandboxArgv(true, env(map[string]string{"HOME": home}), probeOK, self, logger)
	if err != nil || wrap == nil {
		t.Fatalf("sandbox on: wrap set %v, err %v", wrap != nil, err)
	}
	argv, err := wrap(ws, guardian.OwnDirs{}, []string{"/bin/bash", "-i"})
	realWS, _ := filepath.EvalSymlinks(ws)
	if err != nil || len(argv) < 4 || argv[0] != "/opt/winx" || argv[1] != sandbox.LauncherArg ||
		!slices.Contains(argv, realWS) || !slices.Equal(argv[len(argv)-3:], []string{"--", "/bin/bash", "-i"}) {
		t.Errorf("wrap(%s) = %q, %v; want the launcher with the workspace, then -- and the shell", ws, argv, err)
	}
	if _, err := wrap(filepath.Join(ws, "missing"), guardian.OwnDirs{}, []string{"/bin/bash"}); err == nil {
		t.Errorf("wrap(missing workspace) succeeded, want an error")
	}
	// A shell whose workspace is the home directory itself is not started:
	// the workspace grant would expose all of it.
	if _, err := wrap(home, guardian.OwnDirs{}, []string{"/bin/bash"}); !errors.Is(err, sandbox.ErrInvalidPolicy) {
		t.Errorf("wrap(HOME as workspace) = %v, want ErrInvalidPolicy", err)
	}
	// A shell whose workspace holds the state directory (and so the wire
	// secret) is not started either.
	local := filepath.Join(home, ".local")
	if err := os.MkdirAll(filepath.Join(local, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := wrap(local, guardian.OwnDirs{}, []string{"/bin/bash"}); !errors.Is(err, sandbox.ErrInvalidPolicy) {
		t.Errorf("wrap(~/.local as workspace) = %v, want ErrInvalidPolicy", err)
	}

	// On, with the state directory outside the hidden home directory (the
	// wire secret would be readable) or inside a granted path: start-up
	// stops.
	_, err = sandboxArgv(true, env(map[string]string{"HOME": home, "XDG_STATE_HOME": t.TempDir()}), probeOK, self, logger)
	if !errors.Is(err, sandbox.ErrInvalidPolicy) {
		t.Errorf("sandbox with XDG_STATE_HOME under /tmp = %v, want ErrInvalidPolicy", err)
	}
	_, err = sandboxArgv(true, env(map[string]string{"HOME": home, sandbox.EnvROPaths: local}), probeOK, self, logger)
	if !errors.Is(err, sandbox.ErrInvalidPolicy) {
		t.Errorf("sandbox with the state directory in %s = %v, want ErrInvalidPolicy", sandbox.EnvROPaths, err)
	}
	// On, with the socket directory where a confined shell could replace
	// winxd's socket (a writable path): start-up stops.
	sockDir := t.TempDir()
	_, err = sandboxArgv(true, env(map[string]string{"HOME": home, sandbox.EnvRWPaths: sockDir, "WINX_SOCKET": filepath.Join(sockDir, "winxd.sock")}), probeOK, self, logger)
	if !errors.Is(err, sandbox.ErrInvalidPolicy) {
		t.Errorf("sandbox with the socket directory in a writable path = %v, want ErrInvalidPolicy", err)
	}
}

// sandboxClient drives the built winx over stdio, one request at a time.
type sandboxClient struct {
	t    *testing.T
	in   io.Writer
	out  *bufio.Reader
	next int
}

func (c *sandboxClient) call(tool string, args map[string]any) (status, output string) {
	c.t.Helper()
	c.next++
	params := map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}}
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": "tools/call", "params": params})
	if _, err := c.in.Write(append(line, '\n')); err != nil {
		c.t.Fatalf("write: %v", err)
	}
	type answer struct {
		line string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		l, err := c.out.ReadString('\n')
		got <- answer{l, err}
	}()
	var a answer
	select {
	case a = <-got:
	case <-time.After(30 * time.Second):
		c.t.Fatalf("%s: no answer within 30s", tool)
	}
	if a.err != nil {
		c.t.Fatalf("%s: read: %v", tool, a.err)
	}
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			Structured struct {
				Status  string `json:"status"`
				Message string `json:"message"`
				Output  string `json:"output"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(a.line), &resp); err != nil || resp.ID != c.next {
		c.t.Fatalf("%s: answer %q (%v), want id %d", tool, a.line, err, c.next)
	}
	s := resp.Result.Structured
	return s.Status, s.Output + s.Message
}

// TestSandboxEndToEnd runs the built winx with WINX_SANDBOX=1 (and =true,
// the same boolean) and a home
// directory outside /tmp: BashCommand may write in the workspace (which is
// inside the home directory) but not elsewhere in the home directory, and
// cannot read ~/.ssh/config; a background command is confined as well.
//
// It runs with both runtimes: in the adapter (embedded) and in a guardian
// spawned by winxd (daemon), whose binary is then the launcher.
func TestSandboxEndToEnd(t *testing.T) {
	if _, err := sandbox.Probe(); err != nil {
		testenv.Missing(t, "Landlock unavailable: %v", err)
	}
	t.Run("embedded", func(t *testing.T) {
		sandboxEndToEnd(t, buildWinx(t), append(os.Environ(), "WINX_RUNTIME=embedded"), "1", nil)
	})
	t.Run("embedded-true", func(t *testing.T) {
		sandboxEndToEnd(t, buildWinx(t), append(os.Environ(), "WINX_RUNTIME=embedded"), "true", nil)
	})
	t.Run("daemon", func(t *testing.T) {
		d := newDaemonEnv(t)
		sandboxEndToEnd(t, filepath.Join(d.bins, "winx"), d.env, "1", d)
	})
}

// TestSandboxInvalidStopsStartUp: a WINX_SANDBOX that is not a boolean stops
// the stdio adapter before it serves, with exit status 2 and a message
// naming the variable, instead of running shells unconfined.
func TestSandboxInvalidStopsStartUp(t *testing.T) {
	cmd := exec.Command(buildWinx(t))
	cmd.Env = append(os.Environ(), "WINX_SANDBOX=maybe", "HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("winx with WINX_SANDBOX=maybe = %v, want exit status 2", err)
	}
	if !strings.Contains(stderr.String(), "WINX_SANDBOX") || stdout.Len() != 0 {
		t.Errorf("winx with WINX_SANDBOX=maybe: stdout %q, stderr %q; want no answer and a message naming WINX_SANDBOX", stdout.String(), stderr.String())
	}

	t.Setenv("WINX_SANDBOX", "maybe")
	stderr.Reset()
	err = run(t.Context(), nil, strings.NewReader(""), io.Discard, &stderr)
	if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), "WINX_SANDBOX") {
		t.Errorf("run with WINX_SANDBOX=maybe = %v, stderr %q; want a usage error naming WINX_SANDBOX", err, stderr.String())
	}
}

// d is the daemon runtime's environment, nil for the embedded runtime.
func sandboxEndToEnd(t *testing.T, bin string, env []string, enable string, d *daemonEnv) {
	home, err := os.MkdirTemp("/var/tmp", "winx-e2e-home-")
	if err != nil {
		testenv.Missing(t, "no /var/tmp for a home directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	// The state directory holds the wire secret: the sandbox refuses to
	// start shells that could read it, so it lies in the hidden home.
	state := filepath.Join(home, ".local", "state")
	// Nor may the sockets lie where a confined shell could replace them.
	run := filepath.Join(home, "run")
	if err := os.Mkdir(run, 0o700); err != nil {
		t.Fatal(err)
	}
	env = append(env, "XDG_RUNTIME_DIR="+run)
	if d != nil {
		// The runtime is ended before the home directory is removed.
		d.state, d.sock = state, run
		env = append(env, "WINX_SOCKET="+filepath.Join(run, wire.DaemonSocketName))
		t.Cleanup(d.teardown)
	}
	ws := filepath.Join(home, "project")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte("Host e2e-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The user's rc file is in the hidden home directory: the shell must
	// still start, without it.
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("export FROM_BASHRC=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin)
	cmd.Env = append(env, "WINX_SANDBOX="+enable, "HOME="+home, "XDG_STATE_HOME="+state, "LC_ALL=C")
	c, stderr := startSandboxClient(t, cmd)
	thread := "sandbox_e2e"
	if status, text := c.call("Initialize", map[string]any{"any_workspace_path": ws, "thread_id": thread}); status == "error" {
		t.Fatalf("Initialize = %s %s\nstderr: %s", status, text, stderr.String())
	}
	bash := func(command string) string {
		_, text := c.call("BashCommand", map[string]any{"command": command, "thread_id": thread, "workspace_root": ws})
		return text
	}
	tests := []struct {
		command string
		want    []string
	}{
		{`echo x > ~/f; echo "rc=$?"`, []string{"Permission denied", "rc=1"}},
		{`echo x > f && cat f; echo "rc=$?"`, []string{"x", "rc=0"}},
		{`cat ~/.ssh/config; echo "rc=$?"`, []string{"Permission denied", "rc=1"}},
		{`cat /etc/passwd >/dev/null; echo "rc=$?"`, []string{"rc=0"}},
		{`echo "bashrc=${FROM_BASHRC:-unread}"`, []string{"bashrc=unread"}},
	}
	for _, tc := range tests {
		text := bash(tc.command)
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("BashCommand %q = %q, want it to contain %q", tc.command, text, w)
			}
		}
		if strings.Contains(text, "e2e-secret") {
			t.Errorf("BashCommand %q leaked the secret: %q", tc.command, text)
		}
	}
	// A background command runs in its own PTY, started by the session, not
	// by the shell: it goes through the launcher too.
	_, text := c.call("BashCommand", map[string]any{
		"action_json":    map[string]any{"type": "command", "command": `echo x > ~/bg; echo "bg-rc=$?"`, "is_background": true},
		"thread_id":      thread,
		"workspace_root": ws,
	})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(text, "bg-rc=") && time.Now().Before(deadline) {
		_, text = c.call("BashCommand", map[string]any{
			"action_json":      map[string]any{"type": "status_check", "bg_command_id": "bg-1"},
			"wait_for_seconds": 2,
			"thread_id":        thread,
			"workspace_root":   ws,
		})
	}
	if !strings.Contains(text, "bg-rc=1") {
		t.Errorf("background write in home = %q, want bg-rc=1", text)
	}

	if b, err := os.ReadFile(filepath.Join(ws, "f")); err != nil || string(b) != "x\n" {
		t.Errorf("workspace file = %q, %v; want x", b, err)
	}
	for _, name := range []string{"f", "bg"} {
		if _, err := os.Stat(filepath.Join(home, name)); err == nil {
			t.Errorf("~/%s was written from inside the sandbox", name)
		}
	}
	if !strings.Contains(stderr.String(), "sandbox on") {
		t.Errorf("winx stderr = %q, want the sandbox-on line", stderr.String())
	}
}

// startSandboxClient starts cmd, a winx serving stdio, and returns a client
// of it and its stderr (written by the process while the test reads it).
// The process is stopped when the test ends: stdin closed, then killed
// after 10 s.
func startSandboxClient(t *testing.T, cmd *exec.Cmd) (*sandboxClient, *syncBuffer) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return &sandboxClient{t: t, in: in, out: bufio.NewReader(out)}, stderr
}
