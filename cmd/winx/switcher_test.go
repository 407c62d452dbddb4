package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The tests here take a setup written for the Rust Winx (its README's
// variables, its client contract) to the built winx unchanged.

// muxSession starts a session on ws over c and returns the thread_id and
// workspace_root Initialize answered with.
func muxSession(t *testing.T, c *muxClient, ws string) (thread, root string) {
	t.Helper()
	a := c.call("Initialize", map[string]any{"type": "first_call", "any_workspace_path": ws})
	thread, root = a.str("thread_id"), a.str("workspace_root")
	if thread == "" || root == "" {
		t.Fatalf("Initialize %s: %s %s %s\n%s", ws, a.Status, a.ErrorCode, a.Message, a.raw)
	}
	return thread, root
}

// TestInitializeWorkspaceRootCopiedBack: an agent that copies thread_id and
// workspace_root into every later stateful call, Initialize's reset_shell
// and mode changes included, is served; a workspace_root that is not the
// thread's is the typed mismatch every other tool answers.
func TestInitializeWorkspaceRootCopiedBack(t *testing.T) {
	c := startMux(t)
	ws, other := canonDir(t, t.TempDir()), canonDir(t, t.TempDir())
	thread, root := muxSession(t, c, ws)
	for _, args := range []map[string]any{
		{"type": "first_call", "any_workspace_path": ws},
		{"type": "reset_shell"},
		{"type": "user_asked_mode_change", "mode_name": "architect"},
		{"type": "user_asked_mode_change", "mode_name": "wcgw"},
	} {
		args["thread_id"], args["workspace_root"] = thread, root
		if a := c.call("Initialize", args); a.ErrorCode != "" || a.str("workspace_root") != root {
			t.Errorf("Initialize %v: status %s errorCode %s: %s", args, a.Status, a.ErrorCode, a.Message)
		}
	}
	for _, args := range []map[string]any{
		{"type": "reset_shell", "workspace_root": other},
		{"type": "user_asked_mode_change", "mode_name": "architect", "workspace_root": other},
		{"type": "first_call", "any_workspace_path": ws, "workspace_root": other},
	} {
		args["thread_id"] = thread
		a := c.call("Initialize", args)
		if a.ErrorCode != "workspace_thread_mismatch" || a.Status != "conflict" {
			t.Errorf("Initialize %v: status %s errorCode %s (%s); want conflict workspace_thread_mismatch", args, a.Status, a.ErrorCode, a.Message)
		}
	}
	// Every listed tool that takes a thread_id takes its workspace_root.
	sc := startStdio(t)
	sc.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`)
	res, _ := sc.recv()["result"].(map[string]any)
	listed, _ := res["tools"].([]any)
	for _, tl := range listed {
		tool, _ := tl.(map[string]any)
		schema, _ := tool["inputSchema"].(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		if _, thread := props["thread_id"]; thread && props["workspace_root"] == nil {
			t.Errorf("%v takes thread_id but not workspace_root", tool["name"])
		}
	}
	if len(listed) == 0 {
		t.Errorf("tools/list = %v", res)
	}
	// The other tools answer the same code for the same mismatch.
	a := c.call("BashCommand", map[string]any{"action_json": map[string]any{"command": "true"}, "thread_id": thread, "workspace_root": other})
	if a.ErrorCode != "workspace_thread_mismatch" {
		t.Errorf("BashCommand with another workspace_root: errorCode %q, want workspace_thread_mismatch", a.ErrorCode)
	}
}

// TestShellArgsFromWinxReadme: the WINX_SHELL_ARGS values of the Winx
// README start a working session (a login session reads the login
// start-up files), and a value that cannot work stops start-up naming the
// variable.
func TestShellArgsFromWinxReadme(t *testing.T) {
	for _, v := range []string{"-i --login", "--login", "-l", "-il"} {
		t.Run(v, func(t *testing.T) {
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, ".bash_profile"), []byte("export WINX_TEST_LOGIN=profile-read\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			c := startMux(t, "WINX_SHELL_ARGS="+v, "HOME="+home)
			ws := canonDir(t, t.TempDir())
			thread, root := muxSession(t, c, ws)
			a := c.call("BashCommand", map[string]any{"action_json": map[string]any{"command": "echo login=$WINX_TEST_LOGIN"}, "thread_id": thread, "workspace_root": root})
			if !strings.Contains(a.Output, "login=profile-read") {
				t.Errorf("WINX_SHELL_ARGS=%q: command output %q (%s %s), want the login profile's variable", v, a.Output, a.Status, a.Message)
			}
		})
	}
	t.Run("daemon -i --login", func(t *testing.T) {
		// The guardian process builds the shell's command line the same way.
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, ".profile"), []byte("export WINX_TEST_LOGIN=profile-read\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		d := newDaemonEnv(t, "WINX_SHELL_ARGS=-i --login", "HOME="+home)
		a := d.adapter()
		s := a.mustInit(t.TempDir())
		if r := a.bash(s, command("echo login=$WINX_TEST_LOGIN"), 15); !strings.Contains(r.Output, "login=profile-read") {
			t.Errorf("daemon runtime, WINX_SHELL_ARGS=-i --login: %q %q, want the login profile's variable", r.Status, r.Output)
		}
	})
	t.Run("zsh --login", func(t *testing.T) {
		zsh, err := exec.LookPath("zsh")
		if err != nil {
			t.Skip("no zsh")
		}
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, ".zprofile"), []byte("export WINX_TEST_LOGIN=zprofile-read\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c := startMux(t, "WINX_SHELL="+zsh, "WINX_SHELL_ARGS=-i --login", "HOME="+home)
		thread, root := muxSession(t, c, canonDir(t, t.TempDir()))
		a := c.call("BashCommand", map[string]any{"action_json": map[string]any{"command": "echo login=$WINX_TEST_LOGIN"}, "thread_id": thread, "workspace_root": root})
		if !strings.Contains(a.Output, "login=zprofile-read") {
			t.Errorf("zsh --login: command output %q (%s %s), want the login profile's variable", a.Output, a.Status, a.Message)
		}
	})
	for _, v := range []string{"--norc", "--posix", "-c", "-e", "script.sh", "-o posix"} {
		_, stderr, code := runBuilt(t, []string{"WINX_SHELL_ARGS=" + v}, "")
		if code != 2 || !strings.HasPrefix(stderr, "winx: WINX_SHELL_ARGS=") {
			t.Errorf("WINX_SHELL_ARGS=%q: exit %d, stderr %q; want exit 2 naming the variable", v, code, stderr)
		}
	}
}

// TestRustLogSetsLevel: with WINX_LOG unset, RUST_LOG (set by every client
// recipe of the Winx README) decides the level of the operational log: a
// bare level, else a winx target's, else the most verbose given; WINX_LOG
// wins over it, and a directive with an unknown level stops start-up
// naming RUST_LOG.
func TestRustLogSetsLevel(t *testing.T) {
	ws := canonDir(t, t.TempDir())
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modernMeta + `,"name":"Initialize","arguments":{"any_workspace_path":"` + ws + `"}}}` + "\n"
	for _, tc := range []struct {
		env    []string
		logged bool // the info-level tool_call line is written
	}{
		{[]string{"RUST_LOG=info"}, true},
		{[]string{"RUST_LOG=warn"}, false},
		{[]string{"RUST_LOG=error"}, false},
		{[]string{"RUST_LOG=debug"}, true},
		{[]string{"RUST_LOG=trace"}, true},
		{[]string{"RUST_LOG=winx=debug"}, true},
		{[]string{"RUST_LOG=winx_code_agent=warn,tower=debug"}, false},
		{[]string{"RUST_LOG=hyper=debug,tokio=error"}, true},
		{[]string{"RUST_LOG=warn,winx=debug"}, false},
		{[]string{"RUST_LOG=warn", "WINX_LOG=info"}, true},
	} {
		_, stderr, code := runBuilt(t, tc.env, call)
		if got := strings.Contains(stderr, "msg=tool_call"); code != 0 || got != tc.logged {
			t.Errorf("%v: exit %d, tool_call logged %v, want %v; stderr:\n%s", tc.env, code, got, tc.logged, stderr)
		}
	}
	_, stderr, code := runBuilt(t, []string{"RUST_LOG=winx=loud"}, "")
	if code != 2 || !strings.HasPrefix(stderr, "winx: RUST_LOG=") {
		t.Errorf("RUST_LOG=winx=loud: exit %d, stderr %q; want exit 2 naming RUST_LOG", code, stderr)
	}
}

// TestTurnRecognizerWinxConfig: a Winx WINX_TURN_RECOGNIZER_CONFIG, whose
// markers are regular expressions without a prefix, works unchanged: the
// escaped question mark matches the program's prompt. A marker that is
// not a regular expression stops start-up naming the variable and the
// marker.
func TestTurnRecognizerWinxConfig(t *testing.T) {
	c := startMux(t, `WINX_TURN_RECOGNIZER_CONFIG={"busy":["^WORK(ING)?\\.\\.\\."],"awaiting_approval":["APPROVE\\?\\s*$"]}`)
	thread, root := muxSession(t, c, canonDir(t, t.TempDir()))
	script := filepath.Join(t.TempDir(), "tui.sh")
	if err := os.WriteFile(script, []byte("#!/bin/bash\nprintf 'APPROVE? '; read a; echo \"approved $a\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	bash := func(action map[string]any, wait float64) *toolAnswer {
		return c.call("BashCommand", map[string]any{"action_json": action, "wait_for_seconds": wait, "thread_id": thread, "workspace_root": root})
	}
	bash(map[string]any{"type": "command", "command": script}, 0)
	a := bash(map[string]any{"type": "wait_for_turn", "recognizer": "configurable", "quiet_ms": 300, "timeout_seconds": 5}, 10)
	if a.Status != "awaiting_approval" {
		t.Errorf("wait_for_turn on %q: %s %s %q, want awaiting_approval", "APPROVE? ", a.Status, a.ErrorCode, a.Output)
	}
	bash(map[string]any{"type": "send_text", "send_text": "y", "submit": true}, 10)

	_, stderr, code := runBuilt(t, []string{`WINX_TURN_RECOGNIZER_CONFIG={"awaiting_approval":["APPROVE("]}`}, "")
	if code != 2 || !strings.HasPrefix(stderr, "winx: WINX_TURN_RECOGNIZER_CONFIG=") || !strings.Contains(stderr, `"APPROVE("`) {
		t.Errorf("a marker that is no regular expression: exit %d, stderr %q; want exit 2 naming the variable and the marker", code, stderr)
	}
}

// TestServerInfoIcons: the handshake names an embedded icon (a data: URI
// with its MIME type and sizes, the MCP Icon) in both eras, as Winx
// advertises one; a revision older than the icons' (2025-11-25) gets none.
func TestServerInfoIcons(t *testing.T) {
	check := func(what string, info map[string]any) {
		t.Helper()
		icons, _ := info["icons"].([]any)
		if len(icons) == 0 {
			t.Errorf("%s: serverInfo %v has no icons", what, info)
			return
		}
		icon, _ := icons[0].(map[string]any)
		src, _ := icon["src"].(string)
		b64, ok := strings.CutPrefix(src, "data:image/svg+xml;base64,")
		svg, err := base64.StdEncoding.DecodeString(b64)
		if !ok || err != nil || !bytes.HasPrefix(svg, []byte("<svg")) || icon["mimeType"] != "image/svg+xml" {
			t.Errorf("%s: icon %.120v, want an embedded SVG data: URI with its mimeType", what, icon)
		}
		if sizes, _ := icon["sizes"].([]any); len(sizes) == 0 {
			t.Errorf("%s: icon without sizes", what)
		}
	}
	c := startStdio(t)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`)
	res, _ := c.recv()["result"].(map[string]any)
	meta, _ := res["_meta"].(map[string]any)
	info, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any)
	check("server/discover", info)

	c = startStdio(t)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	res, _ = c.recv()["result"].(map[string]any)
	info, _ = res["serverInfo"].(map[string]any)
	check("initialize 2025-11-25", info)

	c = startStdio(t)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	res, _ = c.recv()["result"].(map[string]any)
	if info, _ = res["serverInfo"].(map[string]any); info["icons"] != nil || info["name"] != "winx" {
		t.Errorf("initialize 2025-06-18: serverInfo %v, want winx without icons", info)
	}
}

// TestUsageLogWinxJQRecipe: the usage log the built winx writes has the
// Rust Winx's shape, so its guide's jq latency recipe prints a row per
// tool call, with the fields Winx writes (client, protocol, batch and
// worker limit, Initialize's transition and context size); the log's
// missing directories are made 0700; no command text or file contents
// reach it; winx report reads it.
func TestUsageLogWinxJQRecipe(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("jq is missing (.ci/run installs it)")
		}
		t.Skip("no jq")
	}
	base := t.TempDir()
	path := filepath.Join(base, "fresh", "state", "usage.jsonl")
	c := startMux(t, "WINX_USAGE_LOG="+path)
	ws := canonDir(t, t.TempDir())
	for _, f := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("contents-not-for-the-log\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	thread, root := muxSession(t, c, ws)
	if a := c.call("BashCommand", map[string]any{"action_json": map[string]any{"command": "echo command-not-for-the-log"}, "thread_id": thread, "workspace_root": root}); a.Status != "completed" {
		t.Fatalf("BashCommand: %s %s", a.Status, a.Message)
	}
	if a := c.call("ReadFiles", map[string]any{"file_paths": []string{filepath.Join(ws, "a.txt"), filepath.Join(ws, "b.txt")}, "thread_id": thread, "workspace_root": root}); a.Status != "completed" {
		t.Fatalf("ReadFiles: %s %s", a.Status, a.Message)
	}
	c.stop()

	for _, d := range []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("usage log directory %s: %v, %v; want made 0700", d, fi.Mode(), err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"command-not-for-the-log", "contents-not-for-the-log", ws} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the usage log holds %q:\n%s", secret, raw)
		}
	}

	out, err := exec.Command(jq, "-c", `select(.fields.event == "tool_call") | .fields | {tool, duration_ms}`, path).Output()
	if err != nil {
		t.Fatalf("jq: %v\n%s", err, raw)
	}
	var tools []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var row struct {
			Tool       string   `json:"tool"`
			DurationMs *float64 `json:"duration_ms"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil || row.DurationMs == nil {
			t.Errorf("jq row %q: %v, want a tool and its duration_ms", line, err)
		}
		tools = append(tools, row.Tool)
	}
	if got := strings.Join(tools, ","); got != "Initialize,BashCommand,ReadFiles" {
		t.Errorf("jq recipe tools = %s, want a row per call: Initialize,BashCommand,ReadFiles\n%s", got, raw)
	}

	// The other fields a Winx recipe reads, by tool.
	out, err = exec.Command(jq, "-c", `select(.fields.event == "tool_call") | [.level, .target, .fields.tool, .fields.client_name, .fields.protocol, .fields.batch_items, (.fields.worker_limit > 0), .fields.initialize_transition, .fields.initialize_reused, (.fields.context_bytes > 0), (.fields.response_bytes > 0), .fields.outcome]`, path).Output()
	if err != nil {
		t.Fatalf("jq: %v", err)
	}
	want := `["INFO","winx::usage","Initialize","test","2026-07-28",0,false,"created",false,true,true,"ok"]
["INFO","winx::usage","BashCommand","test","2026-07-28",0,false,null,null,false,true,"ok"]
["INFO","winx::usage","ReadFiles","test","2026-07-28",2,true,null,null,false,true,"ok"]`
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("usage fields:\n%s\nwant\n%s", got, want)
	}

	stdout, stderr, code := runBuilt(t, nil, "", "report", "--log", path)
	for _, tool := range []string{"Initialize", "BashCommand", "ReadFiles"} {
		if code != 0 || !strings.Contains(stdout, "\n"+tool+" ") {
			t.Errorf("winx report: exit %d, %s%s; want a row for %s", code, stdout, stderr, tool)
		}
	}
}
