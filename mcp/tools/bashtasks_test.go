package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"winx/guardian/runtime"
	"winx/mcp"
	"winx/mcp/session"
)

var tasksCapabilities = map[string]any{"extensions": map[string]any{mcp.TasksExtension: map[string]any{}}}

// bashCall sends a BashCommand tools/call with extra arguments and returns
// the raw result.
func (e *bashEnv) bashCall(command, policy string, wait float64) json.RawMessage {
	e.t.Helper()
	resp, err := e.client.Call(context.Background(), "tools/call", map[string]any{"name": BashCommandTool, "arguments": map[string]any{
		"action_json": cmd(command), "wait_for_seconds": wait, "wait_policy": policy, "thread_id": e.thread, "workspace_root": e.root,
	}})
	if err != nil || resp.Error != nil {
		e.t.Fatalf("BashCommand: %v %v", err, resp.Error)
	}
	return resp.Result
}

// awaitTask polls tasks/get until the task leaves "working" and returns the
// tool result it carries.
func (e *bashEnv) awaitTask(taskID string) *toolResult {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := e.client.Call(context.Background(), "tasks/get", map[string]any{"taskId": taskID})
		if err != nil || resp.Error != nil {
			e.t.Fatalf("tasks/get: %v %v", err, resp.Error)
		}
		var view struct {
			Status string      `json:"status"`
			Result *toolResult `json:"result"`
		}
		if err := json.Unmarshal(resp.Result, &view); err != nil {
			e.t.Fatalf("tasks/get %s: %v", resp.Result, err)
		}
		if view.Status != mcp.TaskWorking {
			if view.Status != mcp.TaskCompleted || view.Result == nil {
				e.t.Fatalf("task ended %s: %s", view.Status, resp.Result)
			}
			return view.Result
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s still working after 20 s", taskID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func taskIDOf(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var created struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := json.Unmarshal(raw, &created); err != nil || created.ResultType != mcp.ResultTask || created.TaskID == "" {
		t.Fatalf("want a task, got %s (%v)", raw, err)
	}
	return created.TaskID
}

func wantCompletedOK(t *testing.T, r *toolResult) {
	t.Helper()
	var d bashData
	json.Unmarshal(r.Structured.Data, &d)
	if r.Structured.Status != string(mcp.StatusCompleted) || d.ExitCode == nil || *d.ExitCode != 0 || output(r) != "ok" {
		t.Errorf("task result: status %s exit %v output %q, want completed, 0, \"ok\"", r.Structured.Status, d.ExitCode, output(r))
	}
}

func TestBashCommandAdaptiveBecomesTask(t *testing.T) {
	e := newBashEnv(t, "")
	e.client.Capabilities = tasksCapabilities
	id := taskIDOf(t, e.bashCall("sleep 2; echo ok", "adaptive", 0.3))
	r := e.awaitTask(id)
	wantCompletedOK(t, r)
	// The result stays readable.
	wantCompletedOK(t, e.awaitTask(id))
	// The shell is free again for the next command.
	if r, _ := e.bash(cmd("echo next"), 5); output(r) != "next" {
		t.Errorf("next command: %q", output(r))
	}
}

func TestBashCommandUntilCompleteIsTaskAtOnce(t *testing.T) {
	e := newBashEnv(t, "")
	e.client.Capabilities = tasksCapabilities
	// With a 30 s wait, adaptive would answer this 1 s command directly;
	// until_complete makes it a task before it runs.
	raw := e.bashCall("sleep 1; echo ok", "until_complete", 30)
	wantCompletedOK(t, e.awaitTask(taskIDOf(t, raw)))
}

func TestBashCommandWithoutTasksStaysRunning(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caps   map[string]any
		policy string
	}{
		{"no extension", nil, "adaptive"},
		{"return_early", tasksCapabilities, "return_early"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newBashEnv(t, "")
			e.client.Capabilities = tc.caps
			var r toolResult
			if err := json.Unmarshal(e.bashCall("sleep 2; echo ok", tc.policy, 0.3), &r); err != nil {
				t.Fatal(err)
			}
			if r.Structured.Status != string(mcp.StatusRunning) {
				t.Errorf("status %q, want running (no task)", r.Structured.Status)
			}
		})
	}
}

// TestBashCommandLegacyTask runs the same command as a 2025-11-25 task over
// stdio: the client asks for a task, polls tasks/get and reads tasks/result.
func TestBashCommandLegacyTask(t *testing.T) {
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
				Error  json.RawMessage `json:"error"`
			}
			json.Unmarshal(lines.Bytes(), &msg)
			if string(msg.ID) == fmt.Sprint(id) {
				if msg.Error != nil {
					t.Fatalf("%s: %s", method, msg.Error)
				}
				return msg.Result
			}
		}
		t.Fatalf("%s: no answer", method)
		return nil
	}
	rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]string{"name": "t", "version": "1"}})
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	root := t.TempDir()
	var init toolResult
	json.Unmarshal(rpc("tools/call", map[string]any{"name": InitializeTool, "arguments": map[string]any{"any_workspace_path": root}}), &init)
	var bound struct {
		ThreadID      string `json:"thread_id"`
		WorkspaceRoot string `json:"workspace_root"`
	}
	if err := json.Unmarshal(init.Structured.Data, &bound); err != nil || bound.ThreadID == "" {
		t.Fatalf("Initialize: %+v", init.Structured)
	}

	created := rpc("tools/call", map[string]any{"name": BashCommandTool, "task": map[string]any{"ttl": 60000}, "arguments": map[string]any{
		"action_json": cmd("sleep 2; echo ok"), "wait_for_seconds": 0.3, "thread_id": bound.ThreadID, "workspace_root": bound.WorkspaceRoot}})
	var ct struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if err := json.Unmarshal(created, &ct); err != nil || ct.Task.TaskID == "" {
		t.Fatalf("want a CreateTaskResult, got %s", created)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got struct {
			Status string `json:"status"`
		}
		json.Unmarshal(rpc("tasks/get", map[string]any{"taskId": ct.Task.TaskID}), &got)
		if got.Status == mcp.TaskCompleted {
			break
		}
		if got.Status != mcp.TaskWorking || time.Now().After(deadline) {
			t.Fatalf("task status %q", got.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for range 2 { // readable more than once
		var r toolResult
		if err := json.Unmarshal(rpc("tasks/result", map[string]any{"taskId": ct.Task.TaskID}), &r); err != nil {
			t.Fatal(err)
		}
		wantCompletedOK(t, &r)
		if !strings.Contains(r.Structured.Output, "exit code: 0") {
			t.Errorf("task output lacks the exit code: %q", r.Structured.Output)
		}
	}
}

// TestBashCommandTaskCancelInterrupts: tasks/cancel interrupts the task's
// own command, so the shell takes the next one.
func TestBashCommandTaskCancelInterrupts(t *testing.T) {
	e := newBashEnv(t, "")
	e.client.Capabilities = tasksCapabilities
	id := taskIDOf(t, e.bashCall("sleep 30; echo never", "until_complete", 30))
	resp, err := e.client.Call(context.Background(), "tasks/cancel", map[string]any{"taskId": id})
	if err != nil || resp.Error != nil {
		t.Fatalf("tasks/cancel: %v %v", err, resp.Error)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		r, _ := e.bash(cmd("echo next"), 5)
		if r.Structured.ErrorCode != codeCommandAlreadyRunning {
			if output(r) != "next" {
				t.Fatalf("after cancel: %+v %+v", r.Structured, r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancelled task's command still runs after 15 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
