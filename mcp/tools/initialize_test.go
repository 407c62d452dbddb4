package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"winx/mcp"
	"winx/mcp/mcptest"
	"winx/mcp/session"
	"winx/mcp/session/sessiontest"
	wspace "winx/mcp/workspace"
)

// canon and writeFile are the shared test helpers under the names the
// tests of this package use.
func canon(t *testing.T, p string) string { t.Helper(); return sessiontest.Canon(t, p) }

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	sessiontest.WriteFile(t, path, content)
}

// principalAuth lets every request in as one principal.
type principalAuth string

func (p principalAuth) Authenticate(*http.Request) (mcp.Caller, error) {
	return mcp.Caller{Principal: string(p), Profile: mcp.FullProfile()}, nil
}

// initEnv is a real server with Initialize over real sessions of real
// processes, and a client per principal.
type initEnv struct {
	srv      *mcp.Server
	sessions *session.Sessions
	clock    *sessiontest.Clock
	scratch  string
}

func newInitEnv(t *testing.T) *initEnv {
	t.Helper()
	return newInitEnvTransport(t, "http")
}

// newInitEnvTransport is newInitEnv with the server's transport option
// (which decides, for one, whether a thread may change its workspace).
func newInitEnvTransport(t *testing.T, transport string) *initEnv {
	t.Helper()
	s, _, clock := sessiontest.NewSessions(t)
	scratch := filepath.Join(t.TempDir(), "playground")
	reg := NewRegistry(Options{Build: "test", Transport: transport, Sessions: s, ScratchRoot: scratch})
	return &initEnv{
		srv:      mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, reg, nil),
		sessions: s, clock: clock, scratch: scratch,
	}
}

func (e *initEnv) client(principal string) *mcptest.Client {
	return &mcptest.Client{Handler: mcp.NewHTTPHandler(e.srv, &mcp.HTTPOptions{Auth: principalAuth(principal)})}
}

// initResult is a decoded Initialize answer.
type initResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Structured struct {
		Status        string         `json:"status"`
		Tool          string         `json:"tool"`
		Message       string         `json:"message"`
		ErrorCode     string         `json:"errorCode"`
		Retryable     bool           `json:"retryable"`
		RetrySameCall bool           `json:"retrySameCall"`
		Output        string         `json:"output"`
		Data          initializeData `json:"data"`
	} `json:"structuredContent"`
}

func (r *initResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func callInit(t *testing.T, c *mcptest.Client, args map[string]any) *initResult {
	t.Helper()
	resp, err := c.Call(context.Background(), "tools/call", map[string]any{"name": InitializeTool, "arguments": args})
	if err != nil {
		t.Fatal(err)
	}
	var r initResult
	if err := resp.Decode(&r); err != nil {
		t.Fatalf("Initialize(%v): %v", args, err)
	}
	if r.Structured.Tool != InitializeTool || r.Structured.Output != r.text() || r.Structured.RetrySameCall {
		t.Fatalf("Initialize(%v): envelope %+v does not match its text", args, r.Structured)
	}
	return &r
}

func wantStatus(t *testing.T, r *initResult, status, code string, isError bool) {
	t.Helper()
	if r.Structured.Status != status || r.Structured.ErrorCode != code || r.IsError != isError {
		t.Fatalf("status %q, errorCode %q, isError %v; want %q, %q, %v\n%s",
			r.Structured.Status, r.Structured.ErrorCode, r.IsError, status, code, isError, r.text())
	}
}

func TestInitializeListed(t *testing.T) {
	e := newInitEnv(t)
	tools := listedTools(t, e.client(""))
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if want := []string{InitializeTool, BashCommandTool, ReadFilesTool, EditFilesTool, ContextSaveTool, ReadImageTool, CodeMapTool}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("tools/list = %v, want %v in that order", names, want)
	}
	for _, tool := range tools {
		checkStrictSchema(t, tool.Name+" inputSchema", tool.InputSchema)
		if !bytes.Equal(compact(t, tool.OutputSchema), compact(t, mcp.EnvelopeOutputSchema)) {
			t.Errorf("%s outputSchema is not the envelope schema", tool.Name)
		}
	}
	tool := tools[0]
	// A worktree removal with force discards files: Initialize must not
	// claim to be read-only, or clients approve it without asking.
	if a := tool.Annotations; a == nil || a.ReadOnlyHint == nil || *a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("annotations %+v, want readOnlyHint false and destructiveHint true", tool.Annotations)
	}
	if !bytes.Equal(compact(t, tool.OutputSchema), compact(t, mcp.EnvelopeOutputSchema)) {
		t.Errorf("outputSchema is not the envelope schema")
	}
	checkStrictSchema(t, "inputSchema", tool.InputSchema)
	var schema struct {
		Properties map[string]struct {
			Enum    []string `json:"enum"`
			Default string   `json:"default"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if p := schema.Properties["type"]; p.Default != "first_call" || len(p.Enum) != 4 {
		t.Errorf("type property = %+v", p)
	}
	if p := schema.Properties["mode_name"]; p.Default != "wcgw" || len(p.Enum) != 3 {
		t.Errorf("mode_name property = %+v", p)
	}

	bare := NewRegistry(Options{})
	if names := bare.ToolNames(); len(names) != 0 {
		t.Errorf("catalog without sessions lists %v, want no tools", names)
	}
}

func compact(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkStrictSchema walks a schema for what strict clients refuse: titles,
// $ref, integer formats and boolean true schemas.
func checkStrictSchema(t *testing.T, where string, raw json.RawMessage) {
	t.Helper()
	var node any
	if err := json.Unmarshal(raw, &node); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	var walk func(path string, v any, isSchema bool)
	walk = func(path string, v any, isSchema bool) {
		switch v := v.(type) {
		case bool:
			if isSchema && v {
				t.Errorf("%s: boolean true schema", path)
			}
		case map[string]any:
			for k, child := range v {
				switch k {
				case "title", "$ref", "format":
					t.Errorf("%s: has %q", path, k)
				case "properties":
					for name, p := range child.(map[string]any) {
						walk(path+".properties."+name, p, true)
					}
				case "items", "additionalProperties":
					walk(path+"."+k, child, true)
				case "anyOf", "oneOf", "allOf":
					for i, s := range child.([]any) {
						walk(fmt.Sprintf("%s.%s[%d]", path, k, i), s, true)
					}
				}
			}
		}
	}
	walk(where, node, true)
}

// workspace makes a git repository (when git is there) with a README, an
// AGENTS.md and a file outside it.
func workspace(t *testing.T) (root, outside string) {
	t.Helper()
	base := canon(t, t.TempDir())
	root = filepath.Join(base, "proj")
	writeFile(t, filepath.Join(root, "README.md"), "# Project\nhello from the readme\n")
	writeFile(t, filepath.Join(root, "AGENTS.md"), "Always run the tests.\n")
	writeFile(t, filepath.Join(root, "src", "main.go"), "package main\n")
	outside = filepath.Join(base, "secret.txt")
	writeFile(t, outside, "top secret\n")
	if err := os.Symlink(outside, filepath.Join(root, "sneaky.txt")); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

func TestInitializeFirstCallAndReattach(t *testing.T) {
	e := newInitEnv(t)
	c := e.client("")
	root, _ := workspace(t)

	first := callInit(t, c, map[string]any{"type": "first_call", "any_workspace_path": root})
	wantStatus(t, first, "completed", "", false)
	d := first.Structured.Data
	text := first.text()
	if !regexp.MustCompile(`^ws_proj_[0-9a-f]{8}$`).MatchString(d.ThreadID) || d.SessionID != d.ThreadID ||
		d.WorkspaceRoot != root || d.Cwd != root || d.Mode != ModeWCGW || d.Reattached || d.Scratch || d.ShellPID <= 0 ||
		d.TemporaryArtifactDir != session.TempArtifactDir(session.Key{Principal: "", Root: root}) {
		t.Errorf("first call data = %+v", d)
	}
	for _, want := range []string{"Use thread_id=" + d.ThreadID + " for all winx tool calls.\n", "workspace_root=" + root,
		"README.md", "src/", "Always run the tests.", "## Guidelines from AGENTS.md"} {
		if !strings.Contains(text, want) {
			t.Errorf("first answer lacks %q:\n%s", want, text)
		}
	}

	// Same workspace again, spelled through a file inside it.
	again := callInit(t, c, map[string]any{"any_workspace_path": filepath.Join(root, "README.md")})
	wantStatus(t, again, "completed", "", false)
	d2 := again.Structured.Data
	if d2.ShellPID != d.ShellPID || !d2.Reattached || d2.ThreadID != d.ThreadID || d2.WorkspaceRoot != root {
		t.Errorf("reattach data = %+v, want PID %d and reattached", d2, d.ShellPID)
	}
	text2 := again.text()
	if strings.Contains(text2, "Always run the tests.") || strings.Contains(text2, "src/") ||
		!strings.Contains(text2, "not repeated") || !strings.Contains(text2, "Use thread_id="+d.ThreadID+" for all winx tool calls.") {
		t.Errorf("reattach answer is not compact or does not say so:\n%s", text2)
	}

	// A known thread coming back without its path reattaches too.
	back := callInit(t, c, map[string]any{"thread_id": d.ThreadID})
	if bd := back.Structured.Data; bd.ShellPID != d.ShellPID || !bd.Reattached || bd.WorkspaceRoot != root {
		t.Errorf("thread-only first_call = %+v, want the same session", bd)
	}
}

func TestInitializeThreadIDs(t *testing.T) {
	// The stdio transport: only there may the user move a thread to
	// another workspace (TestInitializeRemoteThreadStaysBound).
	e := newInitEnvTransport(t, "stdio")
	alice, bob := e.client("alice"), e.client("bob")
	rootA, _ := workspace(t)
	rootB := canon(t, t.TempDir())

	r := callInit(t, alice, map[string]any{"any_workspace_path": rootA, "thread_id": "user-1"})
	wantStatus(t, r, "completed", "", false)
	// Under workspace affinity the answer names the session's stable id,
	// and the client's own (normalized) id names the session too.
	tid := r.Structured.Data.ThreadID
	if tid != session.ExternalSessionID("alice", rootA) || !strings.Contains(r.text(), "Use thread_id="+tid+" for all winx tool calls.") {
		t.Errorf("thread_id user-1 came back as %q", tid)
	}
	if sess, err := e.sessions.Lookup("alice", session.NormalizeThreadID("user-1"), rootA); err != nil || sess.Root != rootA {
		t.Errorf("Lookup of user-1 = %v, %v", sess, err)
	}
	if _, err := e.sessions.ByThread("alice", "user1"); err == nil {
		t.Error("user1 is bound before it was used: lookalike ids must be different threads")
	}
	alicePID := r.Structured.Data.ShellPID

	// Lookalike thread ids are different threads: user1 may go elsewhere.
	r = callInit(t, alice, map[string]any{"any_workspace_path": rootB, "thread_id": "user1"})
	wantStatus(t, r, "completed", "", false)
	if r.Structured.Data.ThreadID != session.ExternalSessionID("alice", rootB) {
		t.Errorf("thread_id user1 came back as %q", r.Structured.Data.ThreadID)
	}
	tid = session.NormalizeThreadID("user-1")

	// The same thread cannot jump to another workspace on a first_call.
	r = callInit(t, alice, map[string]any{"any_workspace_path": rootB, "thread_id": "user-1"})
	wantStatus(t, r, "conflict", codeWorkspaceAlreadyBound, true)

	// Bob's "user-1" is his own.
	r = callInit(t, bob, map[string]any{"any_workspace_path": rootA, "thread_id": "user-1"})
	wantStatus(t, r, "completed", "", false)
	if d := r.Structured.Data; d.ShellPID == alicePID || d.Reattached || d.SessionID == session.ExternalSessionID("alice", rootA) {
		t.Errorf("bob shares alice's session: %+v", d)
	}

	// When the user asks, the thread moves.
	r = callInit(t, alice, map[string]any{"type": "user_asked_change_workspace", "any_workspace_path": rootB, "thread_id": "user-1"})
	wantStatus(t, r, "completed", "", false)
	if d := r.Structured.Data; d.WorkspaceRoot != rootB || d.ThreadID != tid || !d.Reattached {
		t.Errorf("change workspace data = %+v, want thread %s in %s (attached to user1's session)", d, tid, rootB)
	}
	if !strings.Contains(r.text(), "## Workspace "+rootB) {
		t.Errorf("change workspace does not show the new workspace's context:\n%s", r.text())
	}
	if sess, err := e.sessions.Lookup("alice", "user-1", rootB); err != nil || sess.Root != rootB {
		t.Errorf("Lookup after the move = %v, %v", sess, err)
	}
}

// TestInitializeRemoteThreadStaysBound: over HTTP a bound thread never
// moves, whatever the affinity, and its conflict does not suggest it.
func TestInitializeRemoteThreadStaysBound(t *testing.T) {
	e := newInitEnv(t)
	alice := e.client("alice")
	rootA, _ := workspace(t)
	rootB := canon(t, t.TempDir())
	r := callInit(t, alice, map[string]any{"any_workspace_path": rootA, "thread_id": "user-1"})
	wantStatus(t, r, "completed", "", false)
	r = callInit(t, alice, map[string]any{"type": "user_asked_change_workspace", "any_workspace_path": rootB, "thread_id": "user-1"})
	wantStatus(t, r, "conflict", codeWorkspaceChangeNewSess, true)
	r = callInit(t, alice, map[string]any{"any_workspace_path": rootB, "thread_id": "user-1"})
	wantStatus(t, r, "conflict", codeWorkspaceAlreadyBound, true)
	if strings.Contains(r.text(), "user_asked_change_workspace") || !strings.Contains(r.text(), "new conversation") {
		t.Errorf("remote conflict answer = %q, want a new conversation suggested and no workspace change", r.text())
	}
	if sess, err := e.sessions.Lookup("alice", "user-1", rootA); err != nil || sess.Root != rootA {
		t.Errorf("Lookup after the refused move = %v, %v", sess, err)
	}
}

func TestInitializeResetShell(t *testing.T) {
	e := newInitEnv(t)
	c := e.client("")
	root, _ := workspace(t)
	first := callInit(t, c, map[string]any{"any_workspace_path": root, "thread_id": "t"})
	pid := first.Structured.Data.ShellPID

	r := callInit(t, c, map[string]any{"type": "reset_shell", "thread_id": "t"})
	wantStatus(t, r, "completed", "", false)
	newPID := r.Structured.Data.ShellPID
	if newPID == pid || r.Structured.Data.ShellReset == nil || !*r.Structured.Data.ShellReset {
		t.Fatalf("reset_shell data = %+v, want a new PID (was %d)", r.Structured.Data, pid)
	}

	r = callInit(t, c, map[string]any{"type": "reset_shell", "thread_id": "t", "any_workspace_path": root})
	wantStatus(t, r, "completed_with_issues", codeResetSkippedHealthy, false)
	if d := r.Structured.Data; d.ShellPID != newPID || d.ShellReset == nil || *d.ShellReset {
		t.Errorf("second reset_shell data = %+v, want PID %d kept", d, newPID)
	}

	r = callInit(t, c, map[string]any{"type": "reset_shell", "thread_id": "unknown"})
	wantStatus(t, r, "needs_initialize", codeNotInitialized, true)

	r = callInit(t, c, map[string]any{"type": "reset_shell", "thread_id": "t", "any_workspace_path": t.TempDir()})
	wantStatus(t, r, "conflict", codeWorkspaceThreadMismatch, true)
}

func TestInitializeModes(t *testing.T) {
	e := newInitEnv(t)
	c := e.client("")
	root, _ := workspace(t)
	callInit(t, c, map[string]any{"any_workspace_path": root, "thread_id": "m", "mode_name": "architect"})

	r := callInit(t, c, map[string]any{"any_workspace_path": root, "thread_id": "m"})
	if r.Structured.Data.Mode != ModeArchitect {
		t.Errorf("reattach without mode_name changed the mode to %q", r.Structured.Data.Mode)
	}
	r = callInit(t, c, map[string]any{"type": "user_asked_mode_change", "thread_id": "m", "mode_name": "code_writer",
		"code_writer_config": map[string]any{"allowed_globs": []string{"src/**"}, "allowed_commands": "all"}})
	wantStatus(t, r, "completed", "", false)
	sess, err := e.sessions.ByThread("", "m")
	if err != nil {
		t.Fatal(err)
	}
	m := sess.Mode()
	if r.Structured.Data.Mode != ModeCodeWriter || m.Name != ModeCodeWriter || !m.AllCommands || m.AllGlobs ||
		len(m.AllowedGlobs) != 1 || m.AllowedGlobs[0] != filepath.Join(root, "src/**") {
		t.Errorf("mode after change = %+v (data %q), want code_writer with %s/src/** and all commands", m, r.Structured.Data.Mode, root)
	}
	r = callInit(t, c, map[string]any{"type": "user_asked_mode_change", "thread_id": "m"})
	wantStatus(t, r, "invalid_input", codeInvalidToolInput, true)
	if sess.Mode().Name != ModeCodeWriter {
		t.Error("a refused mode change changed the mode")
	}
}

func TestInitializeInvalidInput(t *testing.T) {
	e := newInitEnv(t)
	c := e.client("")
	root, _ := workspace(t)
	tests := []struct {
		name string
		args map[string]any
		want string // in the message
	}{
		{name: "unknown field", args: map[string]any{"any_workspace_path": root, "workspace": root}, want: `unknown field "workspace"`},
		{name: "wrong type", args: map[string]any{"any_workspace_path": 42}, want: "any_workspace_path must be a string"},
		{name: "files not a list", args: map[string]any{"any_workspace_path": root, "initial_files_to_read": "README.md"}, want: "initial_files_to_read must be an array"},
		{name: "unknown type", args: map[string]any{"type": "second_call", "any_workspace_path": root}, want: `type "second_call"`},
		{name: "unknown mode", args: map[string]any{"any_workspace_path": root, "mode_name": "root"}, want: `mode_name "root"`},
		{name: "code_writer without config", args: map[string]any{"any_workspace_path": root, "mode_name": "code_writer"}, want: "code_writer_config"},
		{name: "config missing commands", args: map[string]any{"any_workspace_path": root, "mode_name": "code_writer",
			"code_writer_config": map[string]any{"allowed_globs": "all"}}, want: "allowed_commands is required"},
		{name: "config wrong word", args: map[string]any{"any_workspace_path": root, "mode_name": "code_writer",
			"code_writer_config": map[string]any{"allowed_globs": "everything", "allowed_commands": "all"}}, want: `not "everything"`},
		{name: "config unknown field", args: map[string]any{"any_workspace_path": root, "mode_name": "code_writer",
			"code_writer_config": map[string]any{"allowed_globs": "all", "allowed_commands": "all", "sudo": true}}, want: `unknown field "sudo"`},
		{name: "bad glob", args: map[string]any{"any_workspace_path": root, "mode_name": "code_writer",
			"code_writer_config": map[string]any{"allowed_globs": []string{"[a"}, "allowed_commands": "all"}}, want: "glob"},
		{name: "relative workspace", args: map[string]any{"any_workspace_path": "proj"}, want: "not absolute"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := callInit(t, c, tc.args)
			wantStatus(t, r, "invalid_input", codeInvalidToolInput, true)
			if !strings.Contains(r.Structured.Output, tc.want) || !r.Structured.Retryable {
				t.Errorf("message %q lacks %q (retryable %v)", r.Structured.Output, tc.want, r.Structured.Retryable)
			}
		})
	}
	if _, err := e.sessions.ByThread("", session.ExternalSessionID("", root)); err == nil {
		t.Error("an invalid call started a session")
	}
	entries, _ := os.ReadDir(e.scratch)
	if len(entries) != 0 {
		t.Errorf("invalid calls left %d scratch playgrounds", len(entries))
	}
}

func TestInitializeMissingWorkspaceAndTask(t *testing.T) {
	e := newInitEnv(t)
	c := e.client("")
	r := callInit(t, c, map[string]any{"any_workspace_path": filepath.Join(t.TempDir(), "nope")})
	wantStatus(t, r, "not_found", codeFileNotFound, true)

	r = callInit(t, c, map[string]any{"task_id_to_resume": "task-7"})
	wantStatus(t, r, "not_found", codeTaskNotFound, true)
	if !strings.Contains(r.Structured.Output, "task-7") {
		t.Errorf("message %q does not name the task", r.Structured.Output)
	}
}

func TestInitializeInitialFiles(t *testing.T) {
	e := newInitEnv(t)
	c := e.client("")
	root, outside := workspace(t)
	writeFile(t, filepath.Join(root, "big.txt"), strings.Repeat("0123456789abcdef\n", wspace.MaxInitialFileBytes/17+100))

	r := callInit(t, c, map[string]any{"any_workspace_path": root, "initial_files_to_read": []string{
		"README.md", filepath.Join(root, "src", "main.go"), "../secret.txt", outside, "sneaky.txt", "missing.go", "big.txt",
	}})
	wantStatus(t, r, "completed_with_issues", codeFileOperationDenied, false)
	text := r.text()
	for _, want := range []string{"## README.md (", "hello from the readme", "## src/main.go (", "package main",
		"## ../secret.txt: refused, it resolves outside the workspace", "## sneaky.txt: refused", "## missing.go: not found",
		"[big.txt truncated after"} {
		if !strings.Contains(text, want) {
			t.Errorf("answer lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "top secret") {
		t.Error("a file outside the workspace was shown")
	}
	var statuses []string
	for _, n := range r.Structured.Data.InitialFiles {
		statuses = append(statuses, n.Status)
	}
	want := []string{"shown", "shown", "denied", "denied", "denied", "not_found", "truncated"}
	if strings.Join(statuses, ",") != strings.Join(want, ",") {
		t.Errorf("initial file statuses = %v, want %v", statuses, want)
	}
	if len(text) > wspace.MaxInitialFileBytes+16<<10 {
		t.Errorf("answer has %d bytes; big.txt was not bounded", len(text))
	}
}

func TestInitializeScratch(t *testing.T) {
	e := newInitEnv(t)
	c := e.client("")
	r := callInit(t, c, map[string]any{})
	wantStatus(t, r, "completed", "", false)
	d := r.Structured.Data
	if !d.Scratch || filepath.Dir(d.WorkspaceRoot) != canon(t, e.scratch) || !strings.Contains(r.text(), "scratch playground") {
		t.Errorf("scratch data = %+v, want a playground under %s", d, e.scratch)
	}
	// Calls without a path share the principal's one playground (and so
	// its session), whatever their thread; another principal has its own.
	other := callInit(t, c, map[string]any{"thread_id": "another"})
	if od := other.Structured.Data; od.WorkspaceRoot != d.WorkspaceRoot || od.ShellPID != d.ShellPID {
		t.Errorf("a second first call without a path got %+v, want the playground %s and shell %d", od, d.WorkspaceRoot, d.ShellPID)
	}
	bob := callInit(t, e.client("bob"), map[string]any{})
	if bd := bob.Structured.Data; !bd.Scratch || bd.WorkspaceRoot == d.WorkspaceRoot {
		t.Errorf("another principal's playground = %+v, want its own", bd)
	}
}

// TestInitializeOverStdio runs concurrent first calls for one workspace
// through the stdio transport: one creates, the others reattach, one shell.
func TestInitializeOverStdio(t *testing.T) {
	e := newInitEnv(t)
	root, _ := workspace(t)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	var lines []string
	for i := 1; i <= 4; i++ {
		args, _ := json.Marshal(map[string]any{"any_workspace_path": root})
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"Initialize","arguments":%s,%s}}`, i, args, meta))
	}
	var out bytes.Buffer
	in := strings.NewReader(strings.Join(lines, "\n") + "\n")
	if err := e.srv.ServeStdio(context.Background(), in, &out, nil); err != nil {
		t.Fatal(err)
	}
	pids := map[int]bool{}
	created := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var msg struct {
			Result initResult `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("bad line %q: %v", line, err)
		}
		d := msg.Result.Structured.Data
		pids[d.ShellPID] = true
		if !d.Reattached {
			created++
		}
	}
	if len(pids) != 1 || created != 1 {
		t.Errorf("4 concurrent first calls: PIDs %v, %d created; want one PID, one created", pids, created)
	}
}

func TestInitializeRedactsInitialFiles(t *testing.T) {
	e := newInitEnv(t)
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "AGENTS.md"), "deploy key: AKIAIOSFODNN7EXAMPLE\n")
	writeFile(t, filepath.Join(root, "cfg.env"), "TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n")
	r := callInit(t, e.client("p"), map[string]any{"any_workspace_path": root, "initial_files_to_read": []string{"cfg.env"}})
	text := r.text()
	if strings.Contains(text, "AKIAIOSFODNN7EXAMPLE") || strings.Contains(text, "ghp_abcdefghijklmnopqrstuvwxyz0123456789") {
		t.Errorf("Initialize answer leaks a secret: %q", text)
	}
	if !strings.Contains(text, "[REDACTED:") {
		t.Errorf("Initialize answer = %q, want redaction markers", text)
	}
}

// listedTools is the server's tools/list answer.
func listedTools(t testing.TB, c *mcptest.Client) []mcp.Tool {
	t.Helper()
	resp, err := c.Call(context.Background(), "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools []mcp.Tool `json:"tools"`
	}
	if err := resp.Decode(&list); err != nil {
		t.Fatal(err)
	}
	return list.Tools
}
