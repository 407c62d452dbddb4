package runtime_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/auth/policy"
	"winx/guardian"
	"winx/guardian/runtime"
	"winx/mcp"
	"winx/mcp/mcptest"
	"winx/mcp/session"
	"winx/mcp/tools"
	"winx/pty/sandbox"
	"winx/pty/testenv"
)

// toolEnv drives the tools of one registry over an in-memory client.
type toolEnv struct {
	t        *testing.T
	sessions *session.Sessions
	client   *mcptest.Client
	thread   string
	root     string
}

type toolAnswer struct {
	Status    string
	ErrorCode string
	Output    string
	Text      string
	Data      json.RawMessage
}

func (e *toolEnv) call(tool string, args map[string]any) toolAnswer {
	e.t.Helper()
	if e.thread != "" {
		args["thread_id"] = e.thread
		if tool == tools.InitializeTool {
			args["any_workspace_path"] = e.root
		} else {
			args["workspace_root"] = e.root
		}
	}
	resp, err := e.client.Call(context.Background(), "tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		e.t.Fatalf("%s: %v", tool, err)
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Structured struct {
			Status    string          `json:"status"`
			ErrorCode string          `json:"errorCode"`
			Output    string          `json:"output"`
			Data      json.RawMessage `json:"data"`
		} `json:"structuredContent"`
	}
	if err := resp.Decode(&r); err != nil {
		e.t.Fatalf("%s: decode: %v", tool, err)
	}
	a := toolAnswer{Status: r.Structured.Status, ErrorCode: r.Structured.ErrorCode, Output: r.Structured.Output, Data: r.Structured.Data}
	for _, c := range r.Content {
		a.Text += c.Text
	}
	return a
}

func (e *toolEnv) bash(command string) toolAnswer {
	e.t.Helper()
	return e.call(tools.BashCommandTool, map[string]any{
		"action_json": map[string]any{"type": "command", "command": command}, "wait_for_seconds": 15,
	})
}

// mode changes the session's mode and returns the command-policy line.
func (e *toolEnv) mode(name string, extra map[string]any) string {
	e.t.Helper()
	args := map[string]any{"type": "user_asked_mode_change", "mode_name": name}
	for k, v := range extra {
		args[k] = v
	}
	a := e.call(tools.InitializeTool, args)
	var data struct {
		Mode          string `json:"mode"`
		CommandPolicy string `json:"command_policy"`
	}
	if err := json.Unmarshal(a.Data, &data); err != nil || data.Mode != name {
		e.t.Fatalf("mode change to %s = %s %s: %s (%v)", name, a.Status, a.ErrorCode, a.Text, err)
	}
	if !strings.Contains(a.Text, "Command policy: "+data.CommandPolicy) {
		e.t.Errorf("mode change answer does not state the command policy %q: %s", data.CommandPolicy, a.Text)
	}
	return data.CommandPolicy
}

// shell is the session's terminal, for commands the parser never sees.
func (e *toolEnv) shell() guardian.Terminal {
	e.t.Helper()
	sess, err := e.sessions.ByThread("p", e.thread)
	if err != nil {
		e.t.Fatal(err)
	}
	return sess.Shell()
}

func newToolEnv(t *testing.T, sessions *session.Sessions) *toolEnv {
	reg := tools.NewRegistry(tools.Options{Build: "test", Transport: "http", Sessions: sessions, ScratchRoot: t.TempDir(), StateDir: t.TempDir()})
	srv := mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, reg, nil)
	e := &toolEnv{t: t, sessions: sessions, client: &mcptest.Client{Handler: mcp.NewHTTPHandler(srv, &mcp.HTTPOptions{Auth: principalAuth("p")})}}
	a := e.call(tools.InitializeTool, map[string]any{"any_workspace_path": t.TempDir()})
	var data struct {
		ThreadID      string `json:"thread_id"`
		WorkspaceRoot string `json:"workspace_root"`
		CommandPolicy string `json:"command_policy"`
	}
	if err := json.Unmarshal(a.Data, &data); err != nil || data.ThreadID == "" {
		t.Fatalf("Initialize = %s %s (%v)", a.Status, a.Text, err)
	}
	if data.CommandPolicy != "none (wcgw)" {
		t.Errorf("wcgw command policy = %q", data.CommandPolicy)
	}
	e.thread, e.root = data.ThreadID, data.WorkspaceRoot
	return e
}

// TestModeChangeShells runs, in both runtimes, a session through wcgw,
// code_writer, architect and back: definitions made in wcgw never apply in
// a stricter mode, architect's shell cannot write even with commands the
// parser never checked, and wcgw gets a writable shell back.
func TestModeChangeShells(t *testing.T) {
	if _, err := sandbox.Probe(); err != nil {
		testenv.Missing(t, "Landlock unavailable: %v", err)
	}
	rt := newDaemonRuntime(t)
	bins := t.TempDir()
	guardianBin := filepath.Join(bins, "winx-guardian")
	if out, err := exec.Command("go", "build", "-o", guardianBin, "winx/cmd/winx-guardian").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	embedded := func(t *testing.T) *session.Sessions {
		// winx-guardian dispatches the launcher as winx does.
		env := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
		s := session.NewSessions(runtime.Embedded(runtime.Options{BaseEnv: env, Launcher: guardianBin}), time.Now)
		t.Cleanup(func() { s.Close() })
		return s
	}
	for _, r := range []struct {
		name     string
		sessions func(t *testing.T) *session.Sessions
	}{
		{"embedded", embedded},
		{"daemon", func(t *testing.T) *session.Sessions { return rt.sessions(t) }},
	} {
		t.Run(r.name, func(t *testing.T) {
			e := newToolEnv(t, r.sessions(t))
			f, g := filepath.Join(e.root, "F"), filepath.Join(e.root, "G")
			for _, def := range []string{
				`shopt -s expand_aliases; alias cat='touch ` + f + `'`,
				`ls() { touch ` + f + `; }`,
				`PROMPT_COMMAND='touch ` + f + `' 2>/dev/null; true`,
				`export PS0='$(touch ` + f + `)'`,
				`trap '[ -e ` + e.root + `/armed ] && touch ` + g + `' DEBUG`,
				`echo hi > README && touch armed`,
			} {
				if a := e.bash(def); a.Status != string(mcp.StatusCompleted) {
					t.Fatalf("wcgw %q = %s %s: %s", def, a.Status, a.ErrorCode, a.Text)
				}
			}
			os.Remove(f)
			os.Remove(g)

			// code_writer: no kernel layer, so a surviving definition
			// would create the marker.
			if got := e.mode("code_writer", map[string]any{"code_writer_config": map[string]any{"allowed_globs": "all", "allowed_commands": []string{"ls", "cat"}}}); got != "parser allowlist" {
				t.Errorf("code_writer command policy = %q", got)
			}
			os.Remove(f)
			os.Remove(g)
			e.bash("ls")
			e.bash("cat README")
			for _, m := range []string{f, g} {
				if _, err := os.Stat(m); err == nil {
					t.Errorf("%s: a definition from wcgw ran in code_writer", m)
				}
			}
			out, err := e.shell().Run(t.Context(), "git config --get core.fsmonitor; git config --get safe.bareRepository", 10*time.Second)
			if err != nil || !strings.Contains(out.Output.Text, "false") || !strings.Contains(out.Output.Text, "explicit") {
				t.Errorf("code_writer git configuration = %+v, %v; want fsmonitor false and bare repositories explicit", out, err)
			}

			// architect: the read-only shell.
			if got := e.mode("architect", nil); got != "parser allowlist + Landlock read-only shell" {
				t.Errorf("architect command policy = %q", got)
			}
			for _, cmd := range []string{
				"touch H", "echo x > I", "mkdir J", "cp README K", "mv README L", "ln -s README M",
				"truncate -s 0 README", "echo y >> README", "rm -f armed",
			} {
				if o, err := e.shell().Run(t.Context(), cmd, 10*time.Second); err != nil || o.Running || o.ExitCode == 0 {
					t.Errorf("architect shell: %q = %+v, %v; want it to fail", cmd, o, err)
				}
			}
			o, err := e.shell().Run(t.Context(), "type ls cat 2>&1; echo \"ps0=[$PS0] trap=[$(trap -p DEBUG)]\"; cat README; echo x >/dev/null && echo null-ok", 10*time.Second)
			if err != nil || strings.Contains(o.Output.Text, "touch") || !strings.Contains(o.Output.Text, "ps0=[] trap=[]") ||
				!strings.Contains(o.Output.Text, "hi") || !strings.Contains(o.Output.Text, "null-ok") {
				t.Errorf("architect shell state = %+v, %v; want no alias, function, PS0 or trap from wcgw, README readable, /dev/null writable", o, err)
			}
			for _, name := range []string{"H", "I", "J", "K", "L", "M"} {
				if _, err := os.Stat(filepath.Join(e.root, name)); err == nil {
					t.Errorf("architect shell created %s", name)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(e.root, "README")); string(b) != "hi\n" {
				t.Errorf("README after the architect shell = %q", b)
			}
			// A running command blocks the mode change: the mode stays.
			if _, err := e.shell().Run(t.Context(), "sleep 30", 100*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if a := e.call(tools.InitializeTool, map[string]any{"type": "user_asked_mode_change", "mode_name": "wcgw"}); a.ErrorCode != "command_already_running" {
				t.Errorf("mode change while a command runs = %s %s: %s", a.Status, a.ErrorCode, a.Text)
			}
			e.call(tools.BashCommandTool, map[string]any{"action_json": map[string]any{"type": "send_specials", "send_specials": []string{"Ctrl-c"}}, "wait_for_seconds": 5})

			// Back to wcgw: writable again.
			if got := e.mode("wcgw", nil); got != "none (wcgw)" {
				t.Errorf("wcgw command policy = %q", got)
			}
			if a := e.bash("touch N && echo made"); !strings.Contains(a.Output, "made") {
				t.Errorf("wcgw after architect: %s %s: %s", a.Status, a.ErrorCode, a.Output)
			}
			if _, err := os.Stat(filepath.Join(e.root, "N")); err != nil {
				t.Errorf("wcgw after architect could not write: %v", err)
			}
		})
	}
}

// TestDaemonKeepsShellProfile: a guardian's architect shell stays read-only
// for a later adapter (no respawn, its state kept), in place after a reset,
// and in the new guardian a reset spawns after the old one was killed.
func TestDaemonKeepsShellProfile(t *testing.T) {
	if _, err := sandbox.Probe(); err != nil {
		testenv.Missing(t, "Landlock unavailable: %v", err)
	}
	rt := newDaemonRuntime(t)
	root := t.TempDir()
	architect := policy.Mode{Name: policy.ModeArchitect}
	cannotWrite := func(t *testing.T, sess *session.Session, name string) {
		t.Helper()
		o, err := sess.Shell().Run(t.Context(), "touch "+name, 10*time.Second)
		if err != nil || o.ExitCode == 0 {
			t.Errorf("touch %s in the architect shell = %+v, %v; want it denied", name, o, err)
		}
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			t.Errorf("the architect shell created %s", name)
		}
		if st := sess.ShellState(); !st.Confinement.ReadOnly || st.Profile.Level != guardian.LevelReadOnly {
			t.Errorf("ShellState = %+v, want the read-only profile", st)
		}
	}

	first := rt.sessions(t)
	sess, _, err := first.Attach(t.Context(), "p", root, architect, "", false)
	if err != nil {
		t.Fatal(err)
	}
	cannotWrite(t, sess, "A")
	run(t, sess.Shell(), "cd "+root+" && KEPT=yes")
	pid := sess.Shell().PID(t.Context())
	first.Close()

	second := rt.sessions(t)
	again, _, err := second.Attach(t.Context(), "p", root, policy.Mode{}, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if again.Mode().Name != policy.ModeArchitect || again.Shell().PID(t.Context()) != pid {
		t.Errorf("reattach: mode %q shell %d; want architect and the same shell %d", again.Mode().Name, again.Shell().PID(t.Context()), pid)
	}
	if got := run(t, again.Shell(), "echo $KEPT"); got != "yes" {
		t.Errorf("reattached architect shell lost its state: %q", got)
	}
	cannotWrite(t, again, "B")

	if reset, err := second.ResetShell(t.Context(), again); err != nil || !reset {
		t.Fatalf("ResetShell = %v, %v", reset, err)
	}
	cannotWrite(t, again, "C")

	syscall.Kill(guardianPID(t, again.Shell()), syscall.SIGKILL)
	for range 100 {
		if !again.Shell().Healthy(t.Context()) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if reset, err := second.ResetShell(t.Context(), again); err != nil || !reset {
		t.Fatalf("ResetShell after the guardian was killed = %v, %v", reset, err)
	}
	cannotWrite(t, again, "D")
}
