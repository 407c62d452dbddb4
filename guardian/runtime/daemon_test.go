package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/auth/policy"
	"winx/guardian"
	"winx/guardian/daemon"
	"winx/guardian/remote"
	"winx/guardian/runtime"
	"winx/guardian/wire"
	"winx/guardian/wire/hermetic"
	"winx/mcp"
	"winx/mcp/mcptest"
	"winx/mcp/session"
	"winx/mcp/tools"
)

// daemonRuntime is a private winxd runtime for one test: real winxd and
// winx-guardian binaries, a private socket and state directory, and a
// cleanup that kills every process started in it.
type daemonRuntime struct {
	opts runtime.DaemonOptions
	sock string
}

// testSecret is the wire secret of the runtimes the tests start.
var testSecret = wire.NewSecret()

func newDaemonRuntime(t testing.TB) *daemonRuntime {
	t.Helper()
	bins := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", bins+"/", "winx/cmd/winxd", "winx/cmd/winx-guardian").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sock, err := os.MkdirTemp("", "wxd") // short: sockaddr_un
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	state := t.TempDir()
	if err := os.MkdirAll(filepath.Join(state, "winx"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "winx", wire.SecretFileName), []byte(testSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	daemonEnv := append(env, "XDG_STATE_HOME="+state, "WINX_GUARDIAN_BIN="+filepath.Join(bins, "winx-guardian"))
	rt := &daemonRuntime{sock: sock, opts: runtime.DaemonOptions{
		Options: runtime.Options{BaseEnv: env},
		Socket:  filepath.Join(sock, wire.DaemonSocketName),
		Start:   &daemon.StartOptions{Bin: filepath.Join(bins, "winxd"), Env: daemonEnv},
		Secret:  testSecret,
	}}
	t.Cleanup(func() {
		rt.teardown()
		os.RemoveAll(sock)
	})
	return rt
}

func (rt *daemonRuntime) teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hello := wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)
	f := &daemon.Fleet{Dir: rt.sock, Hello: hello}
	live, _, _ := f.Discover(ctx)
	for _, g := range live {
		f.Close(ctx, g)
		hermetic.Kill(g.PID, false)
		hermetic.Kill(g.Status.ShellPID, true)
	}
	c := &daemon.Client{Socket: rt.opts.Socket, Hello: hello}
	if peer, err := c.Ping(ctx); err == nil && peer.PID > 0 {
		hermetic.Kill(peer.PID, false)
	}
}

func (rt *daemonRuntime) sessions(t testing.TB) *session.Sessions {
	t.Helper()
	f, err := runtime.Daemon(rt.opts)
	if err != nil {
		t.Fatal(err)
	}
	s := session.NewSessions(f, nil)
	t.Cleanup(func() { s.Close() })
	return s
}

func run(t *testing.T, sh guardian.Terminal, cmd string) string {
	t.Helper()
	o, err := sh.Run(t.Context(), cmd, 5*time.Second)
	if err != nil {
		t.Fatalf("Run(%q): %v", cmd, err)
	}
	if o.Running || o.ExitCode != 0 {
		t.Fatalf("Run(%q) = running %v, exit %d", cmd, o.Running, o.ExitCode)
	}
	return strings.TrimSpace(o.Output.Text)
}

func guardianPID(t *testing.T, sh guardian.Terminal) int {
	t.Helper()
	d, ok := sh.(*remote.RemoteShell)
	if !ok {
		t.Fatalf("shell is %T, want a guardian client", sh)
	}
	return d.Peer().PID
}

func TestDaemonShells(t *testing.T) {
	rt := newDaemonRuntime(t)
	root := t.TempDir()

	t.Run("a new registry reaches the same guardian", func(t *testing.T) {
		first := rt.sessions(t)
		sess, created, err := first.Attach(t.Context(), "p", root, policy.Mode{}, "", false)
		if err != nil || !created {
			t.Fatalf("Attach = %v, %v", created, err)
		}
		pid := sess.Shell().PID(t.Context())
		run(t, sess.Shell(), "export KEPT=yes; cd /")
		gpid := guardianPID(t, sess.Shell())
		// An adapter that exits closes its registry: the guardian stays.
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		second := rt.sessions(t)
		again, _, err := second.Attach(t.Context(), "p", root, policy.Mode{}, "", false)
		if err != nil {
			t.Fatal(err)
		}
		if again.Shell().PID(t.Context()) != pid || guardianPID(t, again.Shell()) != gpid {
			t.Errorf("second registry: shell %d guardian %d, want shell %d guardian %d",
				again.Shell().PID(t.Context()), guardianPID(t, again.Shell()), pid, gpid)
		}
		if got := run(t, again.Shell(), "echo $KEPT $PWD"); got != "yes /" {
			t.Errorf("state in the reattached shell = %q, want \"yes /\"", got)
		}
		other, _, err := second.Attach(t.Context(), "q", root, policy.Mode{}, "", false)
		if err != nil {
			t.Fatal(err)
		}
		if guardianPID(t, other.Shell()) == gpid {
			t.Errorf("another principal reached the same guardian")
		}
	})

	t.Run("reset of a live guardian replaces its shell in place", func(t *testing.T) {
		s := rt.sessions(t)
		sess, _, err := s.Attach(t.Context(), "reset", root, policy.Mode{}, "", false)
		if err != nil {
			t.Fatal(err)
		}
		oldShell, gpid := sess.Shell().PID(t.Context()), guardianPID(t, sess.Shell())
		reset, err := s.ResetShell(t.Context(), sess)
		if err != nil || !reset {
			t.Fatalf("ResetShell = %v, %v", reset, err)
		}
		if sess.Shell().PID(t.Context()) == oldShell || guardianPID(t, sess.Shell()) != gpid {
			t.Errorf("after reset: shell %d guardian %d; want a new shell (was %d) in guardian %d",
				sess.Shell().PID(t.Context()), guardianPID(t, sess.Shell()), oldShell, gpid)
		}
		run(t, sess.Shell(), "true")
	})

	t.Run("a killed guardian fails typed and reset replaces it", func(t *testing.T) {
		s := rt.sessions(t)
		sess, _, err := s.Attach(t.Context(), "killed", root, policy.Mode{}, "", false)
		if err != nil {
			t.Fatal(err)
		}
		gpid := guardianPID(t, sess.Shell())
		if err := syscall.Kill(gpid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		var err2 error
		for range 100 { // until the kernel has closed its socket
			if _, err2 = sess.Shell().Run(t.Context(), "true", time.Second); err2 != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		var lost *guardian.ShellLostError
		if !errors.As(err2, &lost) || !errors.Is(err2, guardian.ErrShellLost) || !errors.Is(err2, remote.ErrGuardianGone) {
			t.Fatalf("Run after the guardian was killed = %v, want a *ShellLostError", err2)
		}
		if sess.Shell().Healthy(t.Context()) {
			t.Errorf("a killed guardian reports healthy")
		}
		reset, err := s.ResetShell(t.Context(), sess)
		if err != nil || !reset {
			t.Fatalf("ResetShell = %v, %v", reset, err)
		}
		if guardianPID(t, sess.Shell()) == gpid {
			t.Errorf("reset kept the dead guardian %d", gpid)
		}
		if got := run(t, sess.Shell(), "echo back"); got != "back" {
			t.Errorf("after reset: %q", got)
		}
	})
}

func TestDaemonShellsStartFailure(t *testing.T) {
	sock, err := os.MkdirTemp("", "wxd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	f, err := runtime.Daemon(runtime.DaemonOptions{
		Socket: filepath.Join(sock, wire.DaemonSocketName),
		Start:  &daemon.StartOptions{Bin: filepath.Join(t.TempDir(), "missing-winxd")},
		Secret: testSecret,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := session.NewSessions(f, nil)
	defer s.Close()
	_, _, err = s.Attach(t.Context(), "p", t.TempDir(), policy.Mode{}, "", false)
	var se *daemon.StartError
	if !errors.As(err, &se) || !errors.Is(err, daemon.ErrDaemonStart) {
		t.Errorf("Attach with no winxd = %v, want a *daemon.StartError", err)
	}
}

// BenchmarkBashEchoViaDaemon measures `echo hi` through the MCP tool layer
// in process (as tools' BenchmarkBashCommandEcho does for the embedded
// runtime) with the session's shell in a guardian process: every action is
// a connection to the guardian's socket. It reports the median and the 99th
// percentile.
func BenchmarkBashEchoViaDaemon(b *testing.B) {
	rt := newDaemonRuntime(b)
	benchBashEcho(b, rt.sessions(b))
}

// BenchmarkBashEchoEmbedded is BenchmarkBashEchoViaDaemon with the shell in
// this process: the daemon hop's cost is the difference of the two, run in
// one `go test -bench` invocation.
func BenchmarkBashEchoEmbedded(b *testing.B) {
	home := b.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	s := session.NewSessions(runtime.Embedded(runtime.Options{BaseEnv: env}), nil)
	b.Cleanup(func() { s.Close() })
	benchBashEcho(b, s)
}

// benchBashEcho runs `echo hi` through the MCP tool layer on sessions and
// reports the median and the 99th percentile.
func benchBashEcho(b *testing.B, sessions *session.Sessions) {
	reg := tools.NewRegistry(tools.Options{Build: "test", Transport: "http", Sessions: sessions, ScratchRoot: b.TempDir(), StateDir: b.TempDir()})
	srv := mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, reg, nil)
	client := &mcptest.Client{Handler: mcp.NewHTTPHandler(srv, &mcp.HTTPOptions{Auth: principalAuth("p")})}
	call := func(tool string, args map[string]any) (out string, data json.RawMessage) {
		b.Helper()
		resp, err := client.Call(context.Background(), "tools/call", map[string]any{"name": tool, "arguments": args})
		if err != nil {
			b.Fatalf("%s: %v", tool, err)
		}
		var r struct {
			Structured struct {
				Output string          `json:"output"`
				Data   json.RawMessage `json:"data"`
			} `json:"structuredContent"`
		}
		if err := resp.Decode(&r); err != nil {
			b.Fatalf("%s: decode: %v", tool, err)
		}
		// The command's own output is the text before the status footer.
		out = r.Structured.Output
		if i := strings.LastIndex(out, "---\n"); i >= 0 {
			out = out[:i]
		}
		return strings.TrimRight(out, "\n"), r.Structured.Data
	}
	_, raw := call(tools.InitializeTool, map[string]any{"any_workspace_path": b.TempDir()})
	var data struct {
		ThreadID      string `json:"thread_id"`
		WorkspaceRoot string `json:"workspace_root"`
	}
	if err := json.Unmarshal(raw, &data); err != nil || data.ThreadID == "" {
		b.Fatalf("Initialize = %s (%v)", raw, err)
	}
	echo := func(c string) string {
		out, _ := call(tools.BashCommandTool, map[string]any{
			"action_json":      map[string]any{"type": "command", "command": c},
			"wait_for_seconds": 10, "thread_id": data.ThreadID, "workspace_root": data.WorkspaceRoot,
		})
		return out
	}
	echo("echo warm")
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		out := echo("echo hi")
		durations = append(durations, time.Since(start))
		if out != "hi" {
			b.Fatalf("echo hi = %q", out)
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
}

// principalAuth lets every request in as one principal.
type principalAuth string

func (p principalAuth) Authenticate(*http.Request) (mcp.Caller, error) {
	return mcp.Caller{Principal: string(p), Profile: mcp.FullProfile()}, nil
}
