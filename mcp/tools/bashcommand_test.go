package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/guardian/runtime"
	"winx/mcp"
	"winx/mcp/mcptest"
	"winx/mcp/session"
)

// bashEnv is a real server whose sessions run real bash on real PTYs.
type bashEnv struct {
	t      testing.TB
	client *mcptest.Client
	root   string
	thread string
}

func newBashEnv(t testing.TB, home string) *bashEnv {
	t.Helper()
	return newBashEnvWith(t, home, "PATH="+os.Getenv("PATH"))
}

// newBashEnvWith is newBashEnv with the shell's environment after HOME and
// LANG given (PATH among them).
func newBashEnvWith(t testing.TB, home string, extra ...string) *bashEnv {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	env := append([]string{"HOME=" + home, "LANG=C.UTF-8"}, extra...)
	sessions := session.NewSessions(runtime.Embedded(runtime.Options{BaseEnv: env}), time.Now)
	t.Cleanup(func() { sessions.Close() })
	reg := NewRegistry(Options{Build: "test", Transport: "http", Sessions: sessions, ScratchRoot: t.TempDir(), StateDir: t.TempDir()})
	srv := mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, reg, nil)
	e := &bashEnv{t: t, client: &mcptest.Client{Handler: mcp.NewHTTPHandler(srv, &mcp.HTTPOptions{Auth: principalAuth("p")})}}
	e.root = t.TempDir()
	r := e.call(InitializeTool, map[string]any{"any_workspace_path": e.root})
	var data struct {
		ThreadID      string `json:"thread_id"`
		WorkspaceRoot string `json:"workspace_root"`
		ShellPID      int    `json:"shell_pid"`
	}
	if err := json.Unmarshal(r.Structured.Data, &data); err != nil || data.ThreadID == "" {
		t.Fatalf("Initialize = %+v (%v)", r.Structured, err)
	}
	e.thread, e.root = data.ThreadID, data.WorkspaceRoot
	return e
}

// toolResult is a decoded tool answer with raw data.
type toolResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Structured struct {
		Status     string          `json:"status"`
		ErrorCode  string          `json:"errorCode"`
		Message    string          `json:"message"`
		Output     string          `json:"output"`
		NextAction *mcp.NextAction `json:"nextAction"`
		Data       json.RawMessage `json:"data"`
	} `json:"structuredContent"`
}

func (e *bashEnv) call(tool string, args map[string]any) *toolResult {
	e.t.Helper()
	resp, err := e.client.Call(context.Background(), "tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		e.t.Fatalf("%s: %v", tool, err)
	}
	var r toolResult
	if err := resp.Decode(&r); err != nil {
		e.t.Fatalf("%s: decode: %v", tool, err)
	}
	return &r
}

// bash calls BashCommand with an action and the session binding.
func (e *bashEnv) bash(action any, wait float64) (*toolResult, bashData) {
	e.t.Helper()
	r := e.call(BashCommandTool, map[string]any{
		"action_json": action, "wait_for_seconds": wait, "thread_id": e.thread, "workspace_root": e.root,
	})
	var d bashData
	if len(r.Structured.Data) > 0 {
		if err := json.Unmarshal(r.Structured.Data, &d); err != nil {
			e.t.Fatalf("data: %v", err)
		}
	}
	return r, d
}

func cmd(c string) map[string]any { return map[string]any{"type": "command", "command": c} }

// output is the command's own output: the text before the status footer.
func output(r *toolResult) string {
	text := r.Structured.Output
	if i := strings.LastIndex(text, "---\n"); i >= 0 {
		text = text[:i]
	}
	return strings.TrimRight(text, "\n")
}

func TestBashCommandBasics(t *testing.T) {
	e := newBashEnv(t, "")
	tests := []struct {
		cmd  string
		out  string
		code int
	}{
		{"echo hi", "hi", 0},
		{"false", "", 1},
		{"(exit 3)", "", 3},
	}
	for _, tc := range tests {
		r, d := e.bash(cmd(tc.cmd), 10)
		if r.Structured.Status != "completed" || d.ExitCode == nil || *d.ExitCode != tc.code || output(r) != tc.out {
			t.Errorf("%q = status %s code %v output %q, want completed %d %q", tc.cmd, r.Structured.Status, d.ExitCode, output(r), tc.code, tc.out)
		}
	}
	// The cwd is said once, in the text the model reads in either view.
	r, _ := e.bash(cmd("cd /tmp && export X=1"), 10)
	if !strings.HasSuffix(r.Structured.Output, "\ncwd: /tmp") {
		t.Errorf("answer after cd = %q, want it to end with the cwd /tmp", r.Structured.Output)
	}
	r, _ = e.bash(cmd("pwd; echo $X"), 10)
	if output(r) != "/tmp\n1" {
		t.Errorf("pwd; echo $X = %q", output(r))
	}
	// Input shapes: a plain string, a JSON string, a missing type, a top-level command.
	for name, args := range map[string]map[string]any{
		"plain string":      {"action_json": "echo shape"},
		"json string":       {"action_json": `{"type":"command","command":"echo shape"}`},
		"inferred type":     {"action_json": map[string]any{"command": "echo shape"}},
		"top-level command": {"command": "echo shape"},
	} {
		args["thread_id"], args["workspace_root"] = e.thread, e.root
		if r := e.call(BashCommandTool, args); output(r) != "shape" {
			t.Errorf("%s: output %q (%s)", name, output(r), r.Structured.Output)
		}
	}
}

func TestBashCommandRunningAndInterrupt(t *testing.T) {
	e := newBashEnv(t, "")
	marker := filepath.Join(t.TempDir(), "ran")
	r, d := e.bash(cmd("sleep 30"), 1)
	if r.Structured.Status != "running" || r.Structured.NextAction == nil || d.CommandGeneration == 0 {
		t.Fatalf("sleep 30 = %+v", r.Structured)
	}
	if na := r.Structured.NextAction; na.Tool != BashCommandTool || !strings.Contains(string(mustJSON(na.Arguments)), "status_check") {
		t.Errorf("nextAction = %+v, want a status_check", na)
	}
	r, _ = e.bash(cmd("touch "+marker), 1)
	if r.Structured.ErrorCode != "command_already_running" || !r.IsError {
		t.Errorf("second command = %+v, want command_already_running", r.Structured)
	}
	r, d = e.bash(map[string]any{"type": "send_specials", "send_specials": []string{"Ctrl-c"}}, 5)
	if r.Structured.Status != "completed" {
		t.Errorf("Ctrl-c = %+v", r.Structured)
	}
	if r, _ := e.bash(cmd("echo next"), 10); output(r) != "next" {
		t.Errorf("after Ctrl-c: %q", output(r))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the refused command ran later")
	}
}

func TestBashCommandInput(t *testing.T) {
	e := newBashEnv(t, "")
	r, _ := e.bash(cmd("read x; echo got:$x"), 15)
	// A command blocked reading the terminal waits for input.
	if r.Structured.Status != "awaiting_input" {
		t.Fatalf("read = %+v", r.Structured)
	}
	r, _ = e.bash(map[string]any{"type": "send_text", "send_text": "abc", "submit": true}, 5)
	if !strings.Contains(r.Structured.Output, "got:abc") {
		t.Errorf("send_text = %q", r.Structured.Output)
	}
	e.bash(cmd("cat"), 0.3)
	r, _ = e.bash(map[string]any{"type": "send_specials", "send_specials": []string{"Ctrl-d"}}, 5)
	if r.Structured.Status != "completed" {
		t.Errorf("Ctrl-d to cat = %+v", r.Structured)
	}
}

func TestBashCommandBackground(t *testing.T) {
	e := newBashEnv(t, "")
	start := time.Now()
	r, d := e.bash(map[string]any{"type": "command", "command": "sleep 2; echo done", "is_background": true}, 10)
	if d.BgCommandID == "" || time.Since(start) > 2*time.Second {
		t.Fatalf("background start = %+v after %v", r.Structured, time.Since(start))
	}
	if r, _ := e.bash(cmd("echo main"), 5); output(r) != "main" {
		t.Errorf("main shell = %q", output(r))
	}
	r, _ = e.bash(map[string]any{"type": "status_check", "bg_command_id": d.BgCommandID}, 10)
	if output(r) != "done" || r.Structured.Status != "completed" {
		t.Errorf("status_check = %q %s", output(r), r.Structured.Status)
	}
}

func TestBashCommandRendering(t *testing.T) {
	e := newBashEnv(t, "")
	for c, want := range map[string]string{
		`printf '\033[2J\033[Hx\rY\n'`:                                                                "Y",
		`for i in 10 50 100; do printf '\r%s%%' $i; sleep 0.01; done; echo`:                           "100%",
		`printf '\033[1;32mgreen\033[0m \033[4munder\033[0m\n'`:                                       "green under",
		`printf '\033[?1049h\033[2J\033[Hin alt screen'; sleep 0.1; printf '\033[?1049l'; echo after`: "after",
	} {
		if r, _ := e.bash(cmd(c), 10); output(r) != want {
			t.Errorf("%q = %q, want %q", c, output(r), want)
		}
	}
	// A real full-screen program that quits at once leaves only what the
	// main screen had.
	prog := ""
	for _, p := range []string{"vi -c q", "less -X +q /etc/hostname"} {
		if _, err := exec.LookPath(strings.Fields(p)[0]); err == nil {
			prog = p
			break
		}
	}
	if prog == "" {
		t.Fatal("neither vi nor less is installed")
	}
	if r, _ := e.bash(cmd("echo before; TERM=xterm-256color "+prog+"; echo after"), 10); output(r) != "before\nafter" {
		t.Errorf("%s = %q, want before and after only", prog, output(r))
	}
	e.bash(cmd(`printf '\033[?1049h\033[H  MENU\033[3;1H> item'; sleep 30`), 0.5)
	r, d := e.bash(map[string]any{"type": "screen"}, 1)
	if d.AltScreen == nil || !*d.AltScreen || !strings.Contains(r.Structured.Output, "MENU") || !strings.Contains(r.Structured.Output, "> item") {
		t.Errorf("screen = %q (alt %v)", r.Structured.Output, d.AltScreen)
	}
	e.bash(map[string]any{"type": "send_specials", "send_specials": []string{"Ctrl-c"}}, 5)
}

func TestBashCommandLargeOutput(t *testing.T) {
	e := newBashEnv(t, "")
	// The wait is generous: under the race detector on a loaded machine
	// rendering 2 million lines takes a while; the test checks content.
	r, d := e.bash(cmd("seq 1 2000000"), 300)
	if len(r.Structured.Output) > 40<<10 || d.DroppedOutputFile == "" {
		t.Fatalf("seq: %d bytes, dropped file %q", len(r.Structured.Output), d.DroppedOutputFile)
	}
	if !strings.HasPrefix(d.DroppedOutputFile, filepath.Join(e.root, ".winx", "scratch")) {
		t.Errorf("dropped file %q is not under the workspace's .winx/scratch", d.DroppedOutputFile)
	}
	head, err := os.ReadFile(d.DroppedOutputFile)
	if err != nil || !strings.HasPrefix(string(head), "1\n2\n") {
		t.Errorf("dropped head: %v", err)
	}
	if !strings.Contains(output(r), "\n2000000") {
		t.Errorf("output does not end with the last line")
	}
	r, _ = e.bash(cmd("for i in $(seq 500); do echo same; done"), 10)
	if !strings.Contains(output(r), "same  [winx: x500]") {
		t.Errorf("500 identical lines = %q", output(r))
	}
}

func TestBashCommandRedaction(t *testing.T) {
	e := newBashEnv(t, "")
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	c := "echo AKIAIOSFODNN7EXAMPLE; echo " + jwt + "; printf -- '-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA1234\\n-----END RSA PRIVATE KEY-----\\n'"
	r, _ := e.bash(cmd(c), 10)
	out := r.Structured.Output
	for _, secret := range []string{"AKIAIOSFODNN7EXAMPLE", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "MIIEowIBAAKCAQEA1234"} {
		if strings.Contains(out, secret) || strings.Contains(r.Content[0].Text, secret) {
			t.Errorf("secret %q leaked: %q", secret, out)
		}
	}
	if strings.Count(out, "[REDACTED:") < 3 {
		t.Errorf("output = %q, want three redactions", out)
	}
}

func TestBashCommandRobustCompletion(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("echo noisy bashrc\nPS1='rc> '\n"), 0o644)
	e := newBashEnv(t, home)
	steps := []struct{ cmd, want string }{
		// A marker the shell did not print ends nothing; the model is told.
		{`printf '\033]6973;W;0123456789abcdef;0;/\007'; sleep 0.5; echo finished`,
			"[winx: ignored a completion marker (exit 0, cwd \"/\") the shell did not print]\nfinished"},
		{"PS1='changed> '", ""},
		{"PROMPT_COMMAND='echo hijacked'", ""},
		{"echo alive", "alive"},
		{"set -e; false", ""},
		{"echo after-set-e", "after-set-e"},
	}
	for _, s := range steps {
		r, _ := e.bash(cmd(s.cmd), 10)
		if r.Structured.Status != "completed" {
			t.Fatalf("%q = %+v", s.cmd, r.Structured)
		}
		if s.want != "" && output(r) != s.want {
			t.Errorf("%q = %q, want %q", s.cmd, output(r), s.want)
		}
	}
}

func TestBashCommandReattachKeepsShell(t *testing.T) {
	e := newBashEnv(t, "")
	e.bash(cmd("cd /tmp"), 10)
	pids := map[int]bool{}
	for i := 0; i < 2; i++ {
		r := e.call(InitializeTool, map[string]any{"any_workspace_path": e.root})
		var data struct {
			ShellPID int    `json:"shell_pid"`
			Cwd      string `json:"cwd"`
		}
		json.Unmarshal(r.Structured.Data, &data)
		pids[data.ShellPID] = true
		if data.Cwd != "/tmp" {
			t.Errorf("reattach cwd = %q, want /tmp", data.Cwd)
		}
	}
	if len(pids) != 1 {
		t.Errorf("reattach PIDs = %v, want one", pids)
	}
}

func TestBashCommandGarbageInput(t *testing.T) {
	e := newBashEnv(t, "")
	bad := []any{
		map[string]any{"type": "dance"},
		map[string]any{"type": "send_text", "send_text": ""},
		map[string]any{"type": "command", "command": "echo a\x00b"},
		map[string]any{"type": "command", "command": strings.Repeat("x", 10<<20)},
		map[string]any{"type": "command", "command": "ls", "bogus": 1},
		map[string]any{"type": "send_ascii", "send_ascii": []int{0}},
		42,
	}
	for i, a := range bad {
		r, _ := e.bash(a, 1)
		if r.Structured.Status != "invalid_input" || !r.IsError {
			t.Errorf("bad input %d = %s %s (%s)", i, r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output)
		}
	}
	if r, _ := e.bash(cmd("echo still-works"), 10); output(r) != "still-works" {
		t.Errorf("after garbage: %q", output(r))
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
