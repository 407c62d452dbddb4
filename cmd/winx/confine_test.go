package main

// Principals are confined to what is theirs: saved contexts, the authority
// of their tool profile, the workspace a remote conversation is bound to,
// the conversation a legacy session is, and their allowed_roots. Every test
// drives a real winx serve --http with a principals file.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"winx/auth"
	"winx/mcp"
)

// confinedTokens are the bearer tokens of writeConfinedPrincipals.
var confinedTokens = map[string]string{
	"alice": "alice-token-0123456789abcdefghijklmnopqrstuv",
	"bob":   "bob-token-0123456789abcdefghijklmnopqrstuvwx",
	"carol": "carol-token-0123456789abcdefghijklmnopqrstuv",
	"dave":  "dave-token-0123456789abcdefghijklmnopqrstuvw",
	"erin":  "erin-token-0123456789abcdefghijklmnopqrstuvw",
}

// writeConfinedPrincipals writes a principals file: alice, bob and carol
// with the full profile, dave allowed Initialize, ReadFiles and EditFiles
// only, and erin confined to erinRoots (a TOML array body; "" leaves erin
// unrestricted).
func writeConfinedPrincipals(t *testing.T, erinRoots string) string {
	t.Helper()
	dir := t.TempDir()
	var cfg strings.Builder
	for _, name := range []string{"alice", "bob", "carol", "dave", "erin"} {
		if err := os.WriteFile(filepath.Join(dir, name+".tok"), []byte(confinedTokens[name]+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg.WriteString("[[principals]]\nname = \"" + name + "\"\ntoken_file = \"" + name + ".tok\"\n")
		switch name {
		case "dave":
			cfg.WriteString("allowed_tools = [\"Initialize\", \"ReadFiles\", \"EditFiles\"]\n")
		case "erin":
			if erinRoots != "" {
				cfg.WriteString("allowed_roots = [" + erinRoots + "]\n")
			}
		}
		cfg.WriteString("\n")
	}
	path := filepath.Join(dir, "principals.toml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// toolAnswer is the envelope of a tool call, with the answer's text.
type toolAnswer struct {
	Status    string         `json:"status"`
	ErrorCode string         `json:"errorCode"`
	Message   string         `json:"message"`
	Output    string         `json:"output"`
	Data      map[string]any `json:"data"`
	raw       string
}

func (a *toolAnswer) str(key string) string {
	s, _ := a.Data[key].(string)
	return s
}

// callTool calls tool as the principal who, in the stateless era.
func callTool(t *testing.T, s *runningServe, who, tool string, args map[string]any) *toolAnswer {
	t.Helper()
	h := callHeader(tool)
	h.Set("Authorization", "Bearer "+confinedTokens[who])
	resp, body := s.post(t, h, callBody(11, tool, args))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s as %s = %d %s", tool, who, resp.StatusCode, body)
	}
	return decodeToolAnswer(t, tool, body)
}

// decodeToolAnswer decodes a tools/call response, a JSON body or an SSE
// stream whose last data line is the response.
func decodeToolAnswer(t *testing.T, tool string, body []byte) *toolAnswer {
	t.Helper()
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("event:")) || bytes.HasPrefix(bytes.TrimSpace(body), []byte("data:")) {
		var last []byte
		for _, line := range bytes.Split(body, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				last = bytes.TrimSpace(d)
			}
		}
		body = last
	}
	var r struct {
		Error  *struct{ Message string } `json:"error"`
		Result struct {
			StructuredContent toolAnswer `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%s: undecodable answer %q: %v", tool, body, err)
	}
	a := &r.Result.StructuredContent
	if r.Error != nil {
		a.Status, a.Message = "rpc_error", r.Error.Message
	}
	a.raw = string(body)
	return a
}

// canonDir is dir with its symlinks resolved, as winx names workspaces.
func canonDir(t *testing.T, dir string) string {
	t.Helper()
	c, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Finding 3(a): a saved context belongs to the principal who saved it.
// Bob cannot resume alice's task (nor read her description or files), and
// carol saving under the same id neither overwrites alice's context nor
// moves alice into carol's workspace when alice resumes.
func TestConfineSavedContexts(t *testing.T) {
	s := serveWith(t, "--principal-config", writeConfinedPrincipals(t, ""))
	rootA, rootC := canonDir(t, t.TempDir()), canonDir(t, t.TempDir())
	if err := os.WriteFile(filepath.Join(rootA, "secret.txt"), []byte("alice-file-contents-42\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	if a := callTool(t, s, "alice", "Initialize", map[string]any{"any_workspace_path": rootA, "thread_id": "a1"}); a.Status != "completed" {
		t.Fatalf("alice Initialize = %s", a.raw)
	}
	a := callTool(t, s, "alice", "ContextSave", map[string]any{"id": "shared-task", "description": "alice-plan-description",
		"relevant_file_globs": []string{"secret.txt"}, "thread_id": "a1", "workspace_root": rootA})
	if a.Status != "completed" {
		t.Fatalf("alice ContextSave = %s", a.raw)
	}

	// Bob resumes alice's id: nothing of hers.
	b := callTool(t, s, "bob", "Initialize", map[string]any{"task_id_to_resume": "shared-task", "thread_id": "b1"})
	if b.ErrorCode != "task_not_found" || strings.Contains(b.raw, "alice-plan-description") || strings.Contains(b.raw, "alice-file-contents-42") ||
		b.str("workspace_root") == rootA {
		t.Errorf("bob resuming alice's task = %s, want task_not_found and nothing of alice's", b.raw)
	}

	// Carol saves her own context under the same id.
	if c := callTool(t, s, "carol", "Initialize", map[string]any{"any_workspace_path": rootC, "thread_id": "c1"}); c.Status != "completed" {
		t.Fatalf("carol Initialize = %s", c.raw)
	}
	c := callTool(t, s, "carol", "ContextSave", map[string]any{"id": "shared-task", "description": "carol-plan-description",
		"thread_id": "c1", "workspace_root": rootC})
	if c.Status != "completed" {
		t.Fatalf("carol ContextSave = %s", c.raw)
	}

	// Alice resumes in a new thread: her workspace, her description.
	r := callTool(t, s, "alice", "Initialize", map[string]any{"task_id_to_resume": "shared-task", "thread_id": "a2"})
	if r.Status != "completed" || r.str("workspace_root") != rootA || !strings.Contains(r.Output, "alice-plan-description") ||
		strings.Contains(r.raw, "carol-plan-description") {
		t.Errorf("alice resuming her task after carol saved the same id = %s, want her own context in %s", r.raw, rootA)
	}
	// Carol resumes hers.
	r = callTool(t, s, "carol", "Initialize", map[string]any{"task_id_to_resume": "shared-task", "thread_id": "c2"})
	if r.Status != "completed" || r.str("workspace_root") != rootC || strings.Contains(r.raw, "alice-plan-description") {
		t.Errorf("carol resuming her task = %s, want her own context in %s", r.raw, rootC)
	}
}

// Finding 3(b): verify_command runs a command, so it needs BashCommand
// authority: a principal allowed only Initialize, ReadFiles and EditFiles
// gets a structured refusal and nothing runs (nor is written).
func TestConfineVerifyCommandNeedsBashCommand(t *testing.T) {
	s := serveWith(t, "--principal-config", writeConfinedPrincipals(t, ""))
	root := canonDir(t, t.TempDir())
	marker := filepath.Join(root, "ran-verify")
	if a := callTool(t, s, "dave", "Initialize", map[string]any{"any_workspace_path": root, "thread_id": "d1"}); a.Status != "completed" {
		t.Fatalf("dave Initialize = %s", a.raw)
	}
	for i, cmd := range []string{"touch " + marker, "echo ok; touch " + marker, "true"} {
		a := callTool(t, s, "dave", "EditFiles", map[string]any{
			"files":          []map[string]any{{"file_path": filepath.Join(root, "new.txt"), "mode": "replace", "content": "hello\n"}},
			"verify_command": cmd, "thread_id": "d1", "workspace_root": root})
		if a.Status != "denied" || a.ErrorCode != "tool_not_allowed" {
			t.Errorf("dave EditFiles with verify_command %q = %s, want denied tool_not_allowed", cmd, a.raw)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("verify_command %d ran for a principal without BashCommand", i)
		}
		if _, err := os.Stat(filepath.Join(root, "new.txt")); err == nil {
			t.Fatalf("the refused EditFiles call wrote its file")
		}
	}
	// Without verify_command the edit itself still works.
	a := callTool(t, s, "dave", "EditFiles", map[string]any{
		"files":     []map[string]any{{"file_path": filepath.Join(root, "new.txt"), "mode": "replace", "content": "hello\n"}},
		"thread_id": "d1", "workspace_root": root})
	if a.Status != "completed" {
		t.Errorf("dave EditFiles without verify_command = %s", a.raw)
	}
	// A principal with BashCommand still verifies.
	if a := callTool(t, s, "alice", "Initialize", map[string]any{"any_workspace_path": root, "thread_id": "a1"}); a.Status != "completed" {
		t.Fatalf("alice Initialize = %s", a.raw)
	}
	a = callTool(t, s, "alice", "EditFiles", map[string]any{
		"files":          []map[string]any{{"file_path": filepath.Join(root, "alice.txt"), "mode": "replace", "content": "hi\n"}},
		"verify_command": "touch " + marker, "thread_id": "a1", "workspace_root": root})
	if _, err := os.Stat(marker); a.Status != "completed" || err != nil {
		t.Errorf("alice EditFiles with verify_command = %s (marker: %v)", a.raw, err)
	}
}

// Finding 3(c): over HTTP a bound conversation never moves to another
// workspace, whatever the affinity, and the conflict answer does not
// suggest user_asked_change_workspace.
func TestConfineRemoteWorkspaceRebinding(t *testing.T) {
	for _, affinity := range []string{"workspace", "thread", "conversation"} {
		t.Run(affinity, func(t *testing.T) {
			s := serveWith(t, "--principal-config", writeConfinedPrincipals(t, ""), "--session-affinity", affinity)
			rootA, rootB := canonDir(t, t.TempDir()), canonDir(t, t.TempDir())
			if a := callTool(t, s, "alice", "Initialize", map[string]any{"any_workspace_path": rootA, "thread_id": "t1"}); a.Status != "completed" {
				t.Fatalf("Initialize = %s", a.raw)
			}
			a := callTool(t, s, "alice", "Initialize", map[string]any{"type": "user_asked_change_workspace", "any_workspace_path": rootB, "thread_id": "t1"})
			if a.ErrorCode != "workspace_change_requires_new_session" || a.str("workspace_root") == rootB {
				t.Errorf("user_asked_change_workspace over HTTP = %s, want workspace_change_requires_new_session", a.raw)
			}
			// The thread is still bound to rootA.
			a = callTool(t, s, "alice", "BashCommand", map[string]any{"action_json": map[string]any{"type": "command", "command": "pwd"},
				"thread_id": "t1", "workspace_root": rootB})
			if a.Status == "completed" {
				t.Errorf("BashCommand in rootB after a refused move = %s", a.raw)
			}
			a = callTool(t, s, "alice", "Initialize", map[string]any{"any_workspace_path": rootB, "thread_id": "t1"})
			if a.Status != "conflict" || strings.Contains(a.raw, "user_asked_change_workspace") {
				t.Errorf("first_call of a bound thread elsewhere = %s, want a conflict that does not suggest user_asked_change_workspace", a.raw)
			}
		})
	}
}

// legacySession opens a 2025-11-25 session as who and returns its id.
func legacySession(t *testing.T, s *runningServe, who string) string {
	t.Helper()
	h := http.Header{}
	h.Set("Authorization", "Bearer "+confinedTokens[who])
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	resp, body := s.post(t, h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize = %d %q (session %q)", resp.StatusCode, body, sid)
	}
	h.Set("Mcp-Session-Id", sid)
	h.Set("MCP-Protocol-Version", mcp.Version20251125)
	s.post(t, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// legacyCall calls tool in the legacy session sid as who.
func legacyCall(t *testing.T, s *runningServe, who, sid, tool string, args map[string]any) *toolAnswer {
	t.Helper()
	h := http.Header{}
	h.Set("Authorization", "Bearer "+confinedTokens[who])
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Mcp-Session-Id", sid)
	h.Set("MCP-Protocol-Version", mcp.Version20251125)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	resp, body := s.post(t, h, string(b))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s in session %s = %d %s", tool, sid, resp.StatusCode, body)
	}
	return decodeToolAnswer(t, tool, body)
}

// Finding 3(d): under conversation affinity each legacy session is its own
// conversation: two sessions of one principal in one workspace get two
// shells, and each session comes back to its own.
func TestConfineLegacyConversationAffinity(t *testing.T) {
	s := serveWith(t, "--principal-config", writeConfinedPrincipals(t, ""), "--session-affinity", "conversation")
	root := canonDir(t, t.TempDir())
	pid := func(sid string) float64 {
		a := legacyCall(t, s, "alice", sid, "Initialize", map[string]any{"any_workspace_path": root})
		if a.Status != "completed" {
			t.Fatalf("Initialize in session %s = %s", sid, a.raw)
		}
		p, _ := a.Data["shell_pid"].(float64)
		return p
	}
	one, two := legacySession(t, s, "alice"), legacySession(t, s, "alice")
	p1, p2 := pid(one), pid(two)
	if p1 == 0 || p1 == p2 {
		t.Errorf("two legacy sessions got shells %v and %v, want two", p1, p2)
	}
	if again := pid(one); again != p1 {
		t.Errorf("the first legacy session came back to shell %v, want %v", again, p1)
	}
}

// allowed_roots: the only directories a principal may Initialize or reach
// with file tools; an unrestricted principal is unchanged.
func TestConfineAllowedRoots(t *testing.T) {
	allowed := canonDir(t, t.TempDir())
	inside := filepath.Join(allowed, "proj")
	outside := canonDir(t, t.TempDir())
	for _, d := range []string{inside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("outside-secret-77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The operator's extra paths reach outside; erin's roots still bind her.
	t.Setenv("WINX_ALLOW_PATHS", outside)
	// A link inside the allowed root pointing outside it.
	if err := os.Symlink(outside, filepath.Join(allowed, "link")); err != nil {
		t.Fatal(err)
	}
	s := serveWith(t, "--principal-config", writeConfinedPrincipals(t, `"`+allowed+`"`))

	for _, path := range []string{outside, secret, filepath.Join(allowed, "link"), filepath.Join(allowed, "..")} {
		a := callTool(t, s, "erin", "Initialize", map[string]any{"any_workspace_path": path, "thread_id": "x"})
		if a.Status != "denied" || a.ErrorCode != "file_operation_denied" {
			t.Errorf("erin Initialize %s = %s, want denied file_operation_denied", path, a.raw)
		}
	}
	// No path: a scratch playground outside her roots is refused too.
	if a := callTool(t, s, "erin", "Initialize", map[string]any{"thread_id": "scratch"}); a.Status != "denied" {
		t.Errorf("erin Initialize without a path = %s, want denied", a.raw)
	}
	a := callTool(t, s, "erin", "Initialize", map[string]any{"any_workspace_path": inside, "thread_id": "e1"})
	if a.Status != "completed" || a.str("workspace_root") != inside {
		t.Fatalf("erin Initialize inside her root = %s", a.raw)
	}
	for _, path := range []string{secret, filepath.Join(allowed, "link", "secret.txt")} {
		a = callTool(t, s, "erin", "ReadFiles", map[string]any{"file_paths": []string{path}, "thread_id": "e1", "workspace_root": inside})
		if strings.Contains(a.raw, "outside-secret-77") {
			t.Errorf("erin ReadFiles %s = %s, want refused", path, a.raw)
		}
	}
	a = callTool(t, s, "erin", "EditFiles", map[string]any{
		"files":     []map[string]any{{"file_path": filepath.Join(outside, "planted.txt"), "mode": "replace", "content": "x\n"}},
		"thread_id": "e1", "workspace_root": inside})
	if _, err := os.Stat(filepath.Join(outside, "planted.txt")); err == nil || a.Status == "completed" {
		t.Errorf("erin EditFiles outside her roots = %s, want refused", a.raw)
	}
	a = callTool(t, s, "erin", "ContextSave", map[string]any{"description": "d", "project_root_path": outside,
		"relevant_file_globs": []string{"*.txt"}, "thread_id": "e1", "workspace_root": inside})
	if a.Status == "completed" {
		t.Errorf("erin ContextSave of a project outside her roots = %s, want refused", a.raw)
	}
	// An unrestricted principal still reaches the operator's extra paths.
	if a := callTool(t, s, "alice", "Initialize", map[string]any{"any_workspace_path": inside, "thread_id": "a1"}); a.Status != "completed" {
		t.Fatalf("alice Initialize = %s", a.raw)
	}
	a = callTool(t, s, "alice", "ReadFiles", map[string]any{"file_paths": []string{secret}, "thread_id": "a1", "workspace_root": inside})
	if !strings.Contains(a.raw, "outside-secret-77") {
		t.Errorf("alice ReadFiles of an allowed path = %s", a.raw)
	}
}

// allowed_roots entries are absolute, existing directories; anything else
// stops start-up.
func TestConfineAllowedRootsRefusedAtStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, roots := range map[string]string{
		"relative":  `"some/dir"`,
		"missing":   `"` + filepath.Join(t.TempDir(), "nope") + `"`,
		"not a dir": `"` + file + `"`,
		"empty":     ``,
		"not text":  `1`,
	} {
		t.Run(name, func(t *testing.T) {
			cfg := writeConfinedPrincipals(t, "")
			b, _ := os.ReadFile(cfg)
			b = append(b, []byte("[[principals]]\nname = \"frank\"\ntoken_env = \"WINX_TEST_FRANK_TOKEN\"\nallowed_roots = ["+roots+"]\n")...)
			if err := os.WriteFile(cfg, b, 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("WINX_TEST_FRANK_TOKEN", "frank-token-0123456789abcdefghijklmnopqrstu")
			err := run(context.Background(), []string{"serve", "--http", "--bind", "127.0.0.1:0", "--principal-config", cfg},
				strings.NewReader(""), io.Discard, io.Discard)
			var pe *auth.PrincipalError
			if !errors.As(err, &pe) || (pe.Name != "frank" && name != "not text") {
				t.Errorf("start-up with allowed_roots = [%s]: %v, want a *auth.PrincipalError for frank", roots, err)
			}
		})
	}
}
