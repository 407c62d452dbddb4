package runtime_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/auth/policy"
	"winx/guardian/daemon"
	"winx/guardian/runtime"
	"winx/guardian/wire"
	"winx/mcp/session"

	"winx/mcp"
	"winx/mcp/mcptest"
	"winx/mcp/tools"
)

// TestDaemonNamesSlowShellStartup: the guardian measures its shell's
// start-up (spawn to first ready prompt) and reports it over the wire, so
// a new session of the daemon runtime names a slow rc file in its
// Initialize answer as the embedded runtime does. Of time only "the note
// is there when the rc sleeps 0.4 s" is asserted.
func TestDaemonNamesSlowShellStartup(t *testing.T) {
	rt := newDaemonRuntime(t)
	home := ""
	for _, kv := range rt.opts.BaseEnv {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("sleep 0.4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry(tools.Options{Build: "test", Transport: "http", Sessions: rt.sessions(t), ScratchRoot: t.TempDir(), StateDir: t.TempDir()})
	srv := mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, reg, nil)
	client := &mcptest.Client{Handler: mcp.NewHTTPHandler(srv, &mcp.HTTPOptions{Auth: principalAuth("p")})}
	resp, err := client.Call(context.Background(), "tools/call", map[string]any{"name": tools.InitializeTool, "arguments": map[string]any{"any_workspace_path": t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Structured struct {
			Data struct {
				Reattached     bool   `json:"reattached"`
				ShellStartupMS *int64 `json:"shell_startup_ms"`
			} `json:"data"`
		} `json:"structuredContent"`
	}
	if err := resp.Decode(&r); err != nil || len(r.Content) == 0 {
		t.Fatalf("decode: %v", err)
	}
	d := r.Structured.Data
	if d.Reattached || d.ShellStartupMS == nil || *d.ShellStartupMS < 300 {
		t.Errorf("data: reattached %v, shell_startup_ms %v; want a new session with shell_startup_ms >= 300", d.Reattached, d.ShellStartupMS)
	}
	if text := r.Content[0].Text; !strings.Contains(text, "Your shell start-up (~/.bashrc) took ") || !strings.Contains(text, "every new session pays it.") {
		t.Errorf("answer = %q, want the slow start-up named", text)
	}
}

// TestDaemonReattachSkipsWinxd: a session whose guardian runs is attached
// on the guardian's own socket (it follows from the key), so a restarted
// adapter reaches it even while winxd is down and may not be started,
// with no winxd round trip; a new session still goes through winxd.
func TestDaemonReattachSkipsWinxd(t *testing.T) {
	rt := newDaemonRuntime(t)
	root := t.TempDir()
	first := rt.sessions(t)
	sess, created, err := first.Attach(t.Context(), "p", root, policy.Mode{}, "", false)
	if err != nil || !created {
		t.Fatalf("Attach = %v, %v", created, err)
	}
	pid, gpid := sess.Shell().PID(t.Context()), guardianPID(t, sess.Shell())
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	// winxd leaves (its guardians keep running), and the next adapter
	// may not start it: only the guardian can answer.
	c := &daemon.Client{Socket: rt.opts.Socket, Hello: wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)}
	peer, err := c.Shutdown(t.Context(), "test")
	if err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if !eventuallyGone(peer.PID) {
		t.Fatalf("winxd %d still runs", peer.PID)
	}
	opts := rt.opts
	opts.Start = nil
	f, err := runtime.Daemon(opts)
	if err != nil {
		t.Fatal(err)
	}
	second := session.NewSessions(f, nil)
	t.Cleanup(func() { second.Close() })
	again, created, err := second.Attach(t.Context(), "p", root, policy.Mode{}, "", false)
	if err != nil {
		t.Fatalf("reattach with winxd down: %v", err)
	}
	if !created || !again.Resumed() || again.Shell().PID(t.Context()) != pid || guardianPID(t, again.Shell()) != gpid {
		t.Errorf("reattach: created %v resumed %v shell %d guardian %d, want the running shell %d of guardian %d",
			created, again.Resumed(), again.Shell().PID(t.Context()), guardianPID(t, again.Shell()), pid, gpid)
	}
	// A new session needs winxd, which is down and not to be started.
	if _, _, err := second.Attach(t.Context(), "p", t.TempDir(), policy.Mode{}, "", false); !errors.Is(err, wire.ErrNoServer) {
		t.Errorf("new session with winxd down: %v, want wire.ErrNoServer", err)
	}
}

// eventuallyGone waits up to 20 s for process pid to end.
func eventuallyGone(pid int) bool {
	for range 200 {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}
