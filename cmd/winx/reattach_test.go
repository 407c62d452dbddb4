package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readRevision is the revision ReadFiles reported for its one file.
func readRevision(t *testing.T, r daemonToolResult) string {
	t.Helper()
	var d struct {
		Files []struct {
			Revision string `json:"revision"`
		} `json:"files"`
	}
	if err := json.Unmarshal(r.Data, &d); err != nil || len(d.Files) != 1 || d.Files[0].Revision == "" {
		t.Fatalf("ReadFiles data = %s (%v)", r.Data, err)
	}
	return d.Files[0].Revision
}

// TestDaemonReattachWithoutInitialize: with the daemon runtime a new adapter
// process answers a call that names a running session by thread_id and
// workspace_root in that session (same shell, same variables, same read
// ledger) without an Initialize; an Initialize with only the thread id
// returns to the thread's workspace; a reset_shell on a session the
// adapter lost recovers it and says so.
func TestDaemonReattachWithoutInitialize(t *testing.T) {
	d := newDaemonEnv(t)
	root := canonDir(t, t.TempDir())
	target := filepath.Join(root, "f.txt")
	if err := os.WriteFile(target, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	a := d.adapter()
	r := a.tool("Initialize", map[string]any{"any_workspace_path": root, "thread_id": "model-made-up-1"})
	var s initData
	if r.Status != "completed" || json.Unmarshal(r.Data, &s) != nil || s.ShellPID == 0 {
		t.Fatalf("Initialize = %+v", r)
	}
	r = a.bash(s, command(`X=1; echo pid=$$; if test -d "$WINX_TEMP_DIR"; then echo tmp=ok; fi`), 10)
	if exitCode(r) != 0 || !strings.Contains(r.Output, "pid="+strconv.Itoa(s.ShellPID)) {
		t.Fatalf("X=1; echo $$ = %+v, want pid=%d", r, s.ShellPID)
	}
	if !strings.Contains(r.Output, "tmp=ok") {
		t.Errorf("$WINX_TEMP_DIR does not exist when the shell starts: %q", r.Output)
	}
	if b, err := os.ReadFile(filepath.Join(root, ".winx", ".gitignore")); err != nil || string(b) != "*\n" {
		t.Errorf(".winx/.gitignore = %q, %v; want *", b, err)
	}
	rev := readRevision(t, a.tool("ReadFiles", map[string]any{"file_paths": []string{target}, "thread_id": s.ThreadID, "workspace_root": root}))
	a.kill()

	// A new adapter, no Initialize: the same shell answers.
	b := d.adapter()
	r = b.bash(s, command("echo x=$X pid=$$"), 10)
	if r.Status != "completed" || !strings.Contains(r.Output, "x=1 pid="+strconv.Itoa(s.ShellPID)) {
		t.Errorf("BashCommand from a new adapter without Initialize = %s/%s %q (%s); want x=1 pid=%d in the same shell",
			r.Status, r.ErrorCode, r.Output, r.Message, s.ShellPID)
	}
	// The read made through the first adapter still counts.
	r = b.tool("EditFiles", map[string]any{"files": []map[string]any{{"file_path": target, "mode": "line_patch", "expected_revision": rev,
		"patches": []map[string]any{{"start_line": 2, "delete_lines": 1, "replacement": "TWO\n"}}}}, "thread_id": s.ThreadID, "workspace_root": root})
	if r.Status != "completed" {
		t.Errorf("line_patch at the unchanged revision from a new adapter = %s/%s %q, want completed without a re-read", r.Status, r.ErrorCode, r.Message)
	}
	if got, _ := os.ReadFile(target); string(got) != "one\nTWO\nthree\n" {
		t.Errorf("file = %q", got)
	}
	// The client's own thread id works from a new adapter too.
	c := d.adapter()
	r = c.bash(initData{ThreadID: "model-made-up-1", WorkspaceRoot: root}, command("echo again=$X"), 10)
	if !strings.Contains(r.Output, "again=1") {
		t.Errorf("BashCommand with the client's thread id from a new adapter = %s/%s %q", r.Status, r.ErrorCode, r.Output)
	}
	b.kill()
	c.kill()

	// Initialize with only the thread id returns to its workspace.
	e := d.adapter()
	r = e.tool("Initialize", map[string]any{"thread_id": s.ThreadID})
	var back initData
	if r.Status != "completed" || json.Unmarshal(r.Data, &back) != nil || back.WorkspaceRoot != root || back.ShellPID != s.ShellPID {
		t.Errorf("Initialize with only the thread id from a new adapter = %+v %+v; want %s, shell %d", r, back, root, s.ShellPID)
	}
	e.kill()

	// reset_shell on a session this adapter lost recovers it.
	f := d.adapter()
	r = f.tool("Initialize", map[string]any{"type": "reset_shell", "thread_id": s.ThreadID})
	if r.ErrorCode != "initialize_recovered_missing_session" || r.Status != "completed_with_issues" {
		t.Errorf("reset_shell on a lost session = %s/%s %q, want completed_with_issues initialize_recovered_missing_session", r.Status, r.ErrorCode, r.Message)
	}
	var reset initData
	json.Unmarshal(r.Data, &reset)
	if reset.WorkspaceRoot != root {
		t.Errorf("recovered session root %q, want %s", reset.WorkspaceRoot, root)
	}
	r = f.tool("Initialize", map[string]any{"type": "user_asked_mode_change", "mode_name": "architect", "thread_id": s.ThreadID, "any_workspace_path": root})
	if r.Status != "completed" {
		t.Errorf("mode change after the recovery = %s/%s %q", r.Status, r.ErrorCode, r.Message)
	}
	f.kill()
	g := d.adapter()
	r = g.tool("Initialize", map[string]any{"type": "user_asked_mode_change", "mode_name": "wcgw", "thread_id": s.ThreadID})
	if r.ErrorCode != "initialize_recovered_missing_session" {
		t.Errorf("mode change on a lost session = %s/%s %q, want initialize_recovered_missing_session", r.Status, r.ErrorCode, r.Message)
	}
	// The answer says what changed: the mode was architect, and it does
	// not call the mode (or a replaced shell) unchanged.
	if strings.Contains(r.Output, "same shell, cwd and mode") || !strings.Contains(r.Output, "Mode set to wcgw as the user asked (it was architect)") {
		t.Errorf("mode change on a lost session says %q, want the mode it had and no claim that nothing changed", r.Output)
	}
}

// TestEmbeddedNoReattach: with the embedded runtime nothing survives the
// adapter, so a new one still asks for Initialize.
func TestEmbeddedNoReattach(t *testing.T) {
	d := newDaemonEnv(t, "WINX_RUNTIME=embedded")
	root := canonDir(t, t.TempDir())
	a := d.adapter()
	s := a.mustInit(root)
	a.kill()
	b := d.adapter()
	if r := b.bash(s, command("echo hi"), 5); r.Status != "needs_initialize" {
		t.Errorf("BashCommand after an embedded adapter restart = %s/%s, want needs_initialize", r.Status, r.ErrorCode)
	}
	// Calls without a workspace share the principal's one playground.
	var one, two initData
	json.Unmarshal(b.tool("Initialize", map[string]any{"thread_id": "p1"}).Data, &one)
	json.Unmarshal(b.tool("Initialize", map[string]any{"thread_id": "p2"}).Data, &two)
	if one.WorkspaceRoot == "" || one.WorkspaceRoot != two.WorkspaceRoot || one.ShellPID != two.ShellPID {
		t.Errorf("two Initialize calls without a path: %+v and %+v, want one playground and shell", one, two)
	}
}

// TestWorkspaceAffinityStableThreadID: under workspace affinity two
// made-up thread ids for one workspace both get the session's stable id.
func TestWorkspaceAffinityStableThreadID(t *testing.T) {
	s := startServe(t, "--session-affinity", "workspace")
	root := canonDir(t, t.TempDir())
	ids := map[string]bool{}
	for i, thread := range []string{"chat-4f2a", "chat-9c1d"} {
		resp, body := s.post(t, callHeader("Initialize"), callBody(20+i, "Initialize", map[string]any{"any_workspace_path": root, "thread_id": thread}))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("Initialize = %d %s", resp.StatusCode, body)
		}
		var r struct {
			Result struct {
				StructuredContent struct {
					Data struct {
						ThreadID  string `json:"thread_id"`
						SessionID string `json:"session_id"`
					} `json:"data"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		json.Unmarshal(body, &r)
		d := r.Result.StructuredContent.Data
		if !strings.HasPrefix(d.ThreadID, "ws_") || d.ThreadID != d.SessionID {
			t.Errorf("thread %s came back as %q (session %q), want the stable ws_ id", thread, d.ThreadID, d.SessionID)
		}
		ids[d.ThreadID] = true
	}
	if len(ids) != 1 {
		t.Errorf("two thread ids on one workspace got %d ids, want one", len(ids))
	}
}
