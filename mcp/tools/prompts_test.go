package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"winx/guardian/runtime"
	"winx/mcp"
	"winx/mcp/session"
)

// TestBashCommandPromptIsInput: a command that stops at a prompt answers at
// once with the prompt and a send_text next action instead of "running"
// after the whole wait, and the answer to send_text shows what followed
// the prompt without repeating it. Every prompt a process reads from its
// terminal is awaiting_input, a yes/no question too.
func TestBashCommandPromptIsInput(t *testing.T) {
	e := newBashEnv(t, "")
	for _, tc := range []struct {
		name, command, prompt, answer, want string
		status                              mcp.Status
	}{
		{"yes/no", `read -p 'Overwrite? [y/N] ' a; echo got=$a`, "Overwrite? [y/N]", "n", "got=n", mcp.StatusAwaitingInput},
		{"plain", `read -p 'Name: ' v; echo hello-$v`, "Name:", "bob", "hello-bob", mcp.StatusAwaitingInput},
		// The reader is not the group's leader (which has exited).
		{"pipeline", `sleep 0 | (exec 0<&2; read -p 'Second? ' v; echo v=$v)`, "Second?", "w", "v=w", mcp.StatusAwaitingInput},
		{"program", `python3 -c 'print("py-" + input("Value? "))'`, "Value?", "7", "py-7", mcp.StatusAwaitingInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasPrefix(tc.command, "python3") {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("no python3")
				}
			}
			start := time.Now()
			r, _ := e.bash(cmd(tc.command), 15)
			took := time.Since(start)
			t.Logf("%s: answered %s after %v", tc.name, r.Structured.Status, took)
			if r.Structured.Status != string(tc.status) {
				t.Fatalf("status %q after %v, want %s; text %q", r.Structured.Status, took, tc.status, r.Content[0].Text)
			}
			// A generous bound: the answer must not wait out the 15 s.
			if took > 10*time.Second {
				t.Errorf("the prompt was answered after %v", took)
			}
			first := r.Content[0].Text
			if !strings.Contains(first, tc.prompt) {
				t.Errorf("the answer lacks the prompt %q: %q", tc.prompt, first)
			}
			na := r.Structured.NextAction
			if na == nil || na.Tool != BashCommandTool || !strings.Contains(string(mustJSON(na.Arguments)), `"send_text"`) {
				t.Errorf("next action %+v, want a send_text", na)
			}
			r2, _ := e.bash(map[string]any{"type": "send_text", "send_text": tc.answer, "submit": true}, 15)
			second := r2.Content[0].Text
			if r2.Structured.Status != string(mcp.StatusCompleted) || !strings.Contains(second, tc.want) {
				t.Errorf("after send_text: status %q, text %q; want completed with %q", r2.Structured.Status, second, tc.want)
			}
			if n := strings.Count(first+second, tc.prompt); n != 1 {
				t.Errorf("the prompt %q appears %d times in %q + %q, want once", tc.prompt, n, first, second)
			}
		})
	}
	// A command that sleeps is running, not waiting for input.
	r, _ := e.bash(cmd("sleep 2; echo slept"), 1)
	if r.Structured.Status != string(mcp.StatusRunning) {
		t.Errorf("sleep: status %q, want running", r.Structured.Status)
	}
	r, _ = e.bash(map[string]any{"type": "status_check"}, 15)
	if !strings.Contains(r.Content[0].Text, "slept") {
		t.Errorf("sleep: %q", r.Content[0].Text)
	}
}

// TestBashCommandBackgroundPrompt: a background command at a prompt is
// reported as waiting for input too, with a send_text for it.
func TestBashCommandBackgroundPrompt(t *testing.T) {
	e := newBashEnv(t, "")
	r, d := e.bash(map[string]any{"type": "command", "command": `read -p 'Token name: ' v; echo bg-$v`, "is_background": true}, 0)
	if d.BgCommandID == "" {
		t.Fatalf("no bg id: %+v", r.Structured)
	}
	r, _ = e.bash(map[string]any{"type": "status_check", "bg_command_id": d.BgCommandID}, 15)
	if r.Structured.Status != string(mcp.StatusAwaitingInput) {
		t.Fatalf("status %q, want awaiting_input; %q", r.Structured.Status, r.Content[0].Text)
	}
	if na := r.Structured.NextAction; na == nil || !strings.Contains(string(mustJSON(na.Arguments)), d.BgCommandID) {
		t.Errorf("next action %+v does not target %s", na, d.BgCommandID)
	}
	r, _ = e.bash(map[string]any{"type": "send_text", "send_text": "x", "submit": true, "bg_command_id": d.BgCommandID}, 15)
	if !strings.Contains(r.Content[0].Text, "bg-x") {
		t.Errorf("after send_text: %q", r.Content[0].Text)
	}
}

// TestSendSpecialsBackground: Ctrl-c with a bg_command_id ends that
// background command; the main shell is untouched.
func TestSendSpecialsBackground(t *testing.T) {
	e := newBashEnv(t, "")
	e.bash(cmd("MARK=kept"), 15)
	_, d := e.bash(map[string]any{"type": "command", "command": "sleep 100", "is_background": true}, 0)
	if d.BgCommandID == "" {
		t.Fatal("no bg id")
	}
	r, _ := e.bash(map[string]any{"type": "send_specials", "send_specials": []string{"Ctrl-c"}, "bg_command_id": d.BgCommandID}, 10)
	var bd bashData
	if r.Structured.Status == string(mcp.StatusCompleted) {
		json.Unmarshal(r.Structured.Data, &bd)
	}
	if bd.BgCommandID != d.BgCommandID || bd.ExitCode == nil {
		r, bd = e.bash(map[string]any{"type": "status_check", "bg_command_id": d.BgCommandID}, 10)
	}
	if r.Structured.Status != string(mcp.StatusCompleted) || bd.ExitCode == nil || *bd.ExitCode != 130 {
		t.Fatalf("the background sleep after Ctrl-c: %q %q, want it ended by SIGINT (130)", r.Structured.Status, r.Content[0].Text)
	}
	r, _ = e.bash(cmd("echo $MARK"), 15)
	if output(r) != "kept" {
		t.Errorf("main shell after the background Ctrl-c: %q", r.Content[0].Text)
	}
}

// TestCompactBashOutput: a client that advertises the compact extension
// gets the output alone; others keep the status trailer exactly.
func TestCompactBashOutput(t *testing.T) {
	e := newBashEnv(t, "")
	r, _ := e.bash(cmd("echo hi"), 15)
	if got, want := r.Content[0].Text, "hi\n---\nexit code: 0\ncwd: "+e.root; got != want {
		t.Errorf("plain client text %q, want %q", got, want)
	}
	e.client.Capabilities = map[string]any{"extensions": map[string]any{"io.winx/compact-bash-output": map[string]any{}}}
	r, d := e.bash(cmd("echo hi; false"), 15)
	if got := r.Content[0].Text; got != "hi" {
		t.Errorf("compact client text %q, want %q", got, "hi")
	}
	if r.Structured.Status != string(mcp.StatusCompleted) || d.ExitCode == nil || *d.ExitCode != 1 {
		t.Errorf("compact client lost the exit code: %+v %+v", r.Structured, d)
	}
	r, _ = e.bash(cmd("sleep 3"), 0.2)
	if got := r.Content[0].Text; strings.Contains(got, "---") || r.Structured.Status != string(mcp.StatusRunning) {
		t.Errorf("compact running: %q %q", r.Structured.Status, got)
	}
}

// TestCompactBashOutputLegacy: the extension declared in a legacy
// initialize (2025-11-25 capabilities.extensions) is honoured over stdio;
// a legacy client without it keeps the trailer.
func TestCompactBashOutputLegacy(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps map[string]any
		want func(root string) string
	}{
		{"with", map[string]any{"extensions": map[string]any{"io.winx/compact-bash-output": map[string]any{}}}, func(string) string { return "hi" }},
		{"without", map[string]any{}, func(root string) string { return "hi\n---\nexit code: 0\ncwd: " + root }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
			sessions := session.NewSessions(runtime.Embedded(runtime.Options{BaseEnv: env}), time.Now)
			t.Cleanup(func() { sessions.Close() })
			reg := NewRegistry(Options{Build: "test", Transport: "stdio", Sessions: sessions, ScratchRoot: t.TempDir()})
			srv := mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, reg, nil)
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() { done <- srv.ServeStdio(context.Background(), inR, outW, nil); outW.Close() }()
			defer func() {
				inW.Close()
				io.Copy(io.Discard, outR)
				<-done
			}()
			lines := bufio.NewScanner(outR)
			lines.Buffer(make([]byte, 1<<20), 8<<20)
			id := 0
			rpc := func(method string, params any) json.RawMessage {
				t.Helper()
				id++
				p, _ := json.Marshal(params)
				fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, p)
				for lines.Scan() {
					var msg struct {
						ID     json.RawMessage `json:"id"`
						Result json.RawMessage `json:"result"`
					}
					json.Unmarshal(lines.Bytes(), &msg)
					if string(msg.ID) == fmt.Sprint(id) {
						return msg.Result
					}
				}
				t.Fatalf("%s: no answer", method)
				return nil
			}
			rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": tc.caps, "clientInfo": map[string]string{"name": "t", "version": "1"}})
			fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			var init toolResult
			json.Unmarshal(rpc("tools/call", map[string]any{"name": InitializeTool, "arguments": map[string]any{"any_workspace_path": t.TempDir()}}), &init)
			var bound struct {
				ThreadID      string `json:"thread_id"`
				WorkspaceRoot string `json:"workspace_root"`
			}
			if err := json.Unmarshal(init.Structured.Data, &bound); err != nil || bound.ThreadID == "" {
				t.Fatalf("Initialize: %+v", init.Structured)
			}
			var r toolResult
			json.Unmarshal(rpc("tools/call", map[string]any{"name": BashCommandTool, "arguments": map[string]any{
				"action_json": cmd("echo hi"), "thread_id": bound.ThreadID, "workspace_root": bound.WorkspaceRoot}}), &r)
			if len(r.Content) == 0 || r.Content[0].Text != tc.want(bound.WorkspaceRoot) {
				t.Errorf("text %+v, want %q", r.Content, tc.want(bound.WorkspaceRoot))
			}
		})
	}
}
