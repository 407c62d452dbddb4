package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// shellPID initializes (principal token, thread, conversation header) in
// root and returns the session shell's PID, or the error code.
func shellPID(t *testing.T, s *runningServe, root, thread, conversation string) (pid float64, code string) {
	t.Helper()
	h := callHeader("Initialize")
	if conversation != "" {
		h.Set("X-Winx-Conversation-Id", conversation)
	}
	args := map[string]any{"any_workspace_path": root}
	if thread != "" {
		args["thread_id"] = thread
	}
	resp, body := s.post(t, h, callBody(9, "Initialize", args))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Initialize = %d %s", resp.StatusCode, body)
	}
	var r struct {
		Result struct {
			StructuredContent struct {
				ErrorCode string `json:"errorCode"`
				Data      struct {
					ShellPID float64 `json:"shell_pid"`
				} `json:"data"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	json.Unmarshal(body, &r)
	return r.Result.StructuredContent.Data.ShellPID, r.Result.StructuredContent.ErrorCode
}

func TestSessionAffinity(t *testing.T) {
	t.Run("workspace", func(t *testing.T) {
		s := startServe(t, "--session-affinity", "workspace")
		root := t.TempDir()
		a, _ := shellPID(t, s, root, "one", "")
		b, _ := shellPID(t, s, root, "two", "")
		if a == 0 || a != b {
			t.Errorf("workspace affinity: threads got shells %v and %v, want one shared", a, b)
		}
	})
	t.Run("thread", func(t *testing.T) {
		s := startServe(t, "--session-affinity", "thread")
		root := t.TempDir()
		a, _ := shellPID(t, s, root, "one", "")
		b, _ := shellPID(t, s, root, "two", "")
		again, _ := shellPID(t, s, root, "one", "")
		if a == 0 || a == b || again != a {
			t.Errorf("thread affinity: shells %v, %v, again %v; want two, and the first again", a, b, again)
		}
	})
	t.Run("conversation", func(t *testing.T) {
		s := startServe(t, "--session-affinity", "conversation")
		root := t.TempDir()
		a, _ := shellPID(t, s, root, "", "conv-a")
		b, _ := shellPID(t, s, root, "", "conv-b")
		again, _ := shellPID(t, s, root, "", "conv-a")
		if a == 0 || a == b || again != a {
			t.Errorf("conversation affinity: shells %v, %v, again %v; want two, and the first again", a, b, again)
		}
		// A remote conversation cannot move to another workspace.
		h := callHeader("Initialize")
		h.Set("X-Winx-Conversation-Id", "conv-a")
		_, body := s.post(t, h, callBody(10, "Initialize", map[string]any{"type": "user_asked_change_workspace", "any_workspace_path": t.TempDir()}))
		if !strings.Contains(string(body), "workspace_change_requires_new_session") {
			t.Errorf("change of workspace in a conversation = %s", body)
		}
	})
}
