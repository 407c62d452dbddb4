package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"winx/evidence"
	"winx/mcp"
	"winx/mcp/mcptest"
	"winx/mcp/session/sessiontest"
	wspace "winx/mcp/workspace"
)

// Secrets the default redactor knows; the saved file and every answer must
// hold only their placeholders.
const (
	testPEMBody   = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
	testPrivKey   = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + testPEMBody + "\n-----END OPENSSH PRIVATE KEY-----\n"
	testAWSKeyID  = "AKIAIOSFODNN7EXAMPLE"
	testOpenAIKey = "sk-proj-abcdefghijklmnop0123456789"
)

// adapter is one Winx adapter: its own sessions and registry over a state
// directory that outlives it.
type adapter struct {
	t      *testing.T
	client *mcptest.Client
}

func newAdapter(t *testing.T, opts Options) *adapter {
	t.Helper()
	s, _, _ := sessiontest.NewSessions(t)
	opts.Build, opts.Transport, opts.Sessions = "test", "http", s
	if opts.ScratchRoot == "" {
		opts.ScratchRoot = filepath.Join(t.TempDir(), "playground")
	}
	srv := mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, NewRegistry(opts), nil)
	// The single-token caller (principal ""): its saved contexts stay
	// directly under the state directory, where these tests look.
	return &adapter{t: t, client: &mcptest.Client{Handler: mcp.NewHTTPHandler(srv, &mcp.HTTPOptions{Auth: principalAuth("")})}}
}

func (a *adapter) init(args map[string]any) *initResult {
	a.t.Helper()
	return callInit(a.t, a.client, args)
}

// save calls ContextSave and decodes its data.
func (a *adapter) save(args map[string]any) (*toolResult, wspace.SaveResult) {
	a.t.Helper()
	resp, err := a.client.Call(context.Background(), "tools/call", map[string]any{"name": ContextSaveTool, "arguments": args})
	if err != nil {
		a.t.Fatal(err)
	}
	var r toolResult
	if err := resp.Decode(&r); err != nil {
		a.t.Fatalf("ContextSave(%v): %v", args, err)
	}
	var d wspace.SaveResult
	if len(r.Structured.Data) > 0 {
		if err := json.Unmarshal(r.Structured.Data, &d); err != nil {
			a.t.Fatalf("ContextSave data: %v", err)
		}
	}
	return &r, d
}

// bound starts a session in root and returns the binding arguments.
func (a *adapter) bound(root string) map[string]any {
	a.t.Helper()
	r := a.init(map[string]any{"any_workspace_path": root})
	wantStatus(a.t, r, "completed", "", false)
	return map[string]any{"thread_id": r.Structured.Data.ThreadID, "workspace_root": r.Structured.Data.WorkspaceRoot}
}

func with(base map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(base)+len(kv)/2)
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func wantSaveStatus(t *testing.T, r *toolResult, status, code string) {
	t.Helper()
	if r.Structured.Status != status || r.Structured.ErrorCode != code {
		t.Fatalf("ContextSave status %q, errorCode %q; want %q, %q\n%s", r.Structured.Status, r.Structured.ErrorCode, status, code, r.Structured.Output)
	}
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("mode of %s = %v, want %v", path, got, want)
	}
}

// checkRedacted fails when text holds a test secret or lacks the
// placeholders of the ones saved.
func checkRedacted(t *testing.T, where, text string) {
	t.Helper()
	for _, secret := range []string{testPEMBody, testAWSKeyID, testOpenAIKey} {
		if strings.Contains(text, secret) {
			t.Errorf("%s holds the secret %q", where, secret)
		}
	}
	for _, want := range []string{"[REDACTED:private-key]", "[REDACTED:aws-access-key-id]", "[REDACTED:openai-api-key]"} {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %s", where, want)
		}
	}
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// git runs git in dir without the GIT_* variables of the environment, which
// could point it at another repository.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=winx", "-c", "user.email=winx@example.invalid",
		"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// resumeProject is a git repository with code, a file of secrets, an
// uncommitted change and a file no glob names.
func resumeProject(t *testing.T) string {
	t.Helper()
	needGit(t)
	root := filepath.Join(canon(t, t.TempDir()), "proj")
	writeFile(t, filepath.Join(root, "src", "main.go"), "package main\n\n// MARKER-main\nfunc main() {}\n")
	writeFile(t, filepath.Join(root, "src", "deep", "x", "y.go"), "package x // MARKER-deep\n")
	writeFile(t, filepath.Join(root, "notes", "keys.txt"), "deploy key:\n"+testPrivKey+"aws_key = "+testAWSKeyID+"\n")
	writeFile(t, filepath.Join(root, "docs", "guide.md"), "MARKER-unlisted\n")
	git(t, root, "init", "-q")
	git(t, root, "add", ".")
	git(t, root, "commit", "-q", "-m", "start")
	writeFile(t, filepath.Join(root, "src", "main.go"), "package main\n\n// MARKER-main\nfunc main() { println(\"MARKER-diff\") }\n")
	return root
}

func TestContextSaveThenResumeInFreshAdapter(t *testing.T) {
	root := resumeProject(t)
	state := filepath.Join(t.TempDir(), "state")
	// A contexts directory someone left open is made private again.
	if err := os.MkdirAll(filepath.Join(state, "contexts"), 0o755); err != nil {
		t.Fatal(err)
	}
	first := newAdapter(t, Options{StateDir: state})
	bind := first.bound(root)

	r, d := first.save(with(bind, "id", "task-1.fix_flux",
		"description", "Fix the flux capacitor; the old key was "+testOpenAIKey,
		"relevant_file_globs", []string{"src/**/*.go", "notes/*.txt", "**/config", "src/*.rs"}))
	wantSaveStatus(t, r, "completed", "")
	path := filepath.Join(state, "contexts", "task-1.fix_flux.txt")
	if d.ID != "task-1.fix_flux" || d.Path != path || d.ProjectRoot != root || d.Bytes <= 0 || d.Tokens != (d.Bytes+3)/4 {
		t.Errorf("data = %+v", d)
	}
	// ** spans zero or more directories; .git is never walked, so its
	// config is not a match.
	if want := []string{"src/deep/x/y.go", "src/main.go", "notes/keys.txt"}; !slices.Equal(d.FilesIncluded, want) {
		t.Errorf("files_included = %q, want %q", d.FilesIncluded, want)
	}
	if want := []string{"**/config", "src/*.rs"}; !slices.Equal(d.UnmatchedGlobs, want) || len(d.FilesOmitted) != 0 {
		t.Errorf("unmatched %q, omitted %+v; want unmatched %q and nothing omitted", d.UnmatchedGlobs, d.FilesOmitted, want)
	}
	checkMode(t, path, 0o600)
	checkMode(t, filepath.Dir(path), 0o700)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	saved := string(raw)
	for _, want := range []string{wspace.SavedContextMagic + "\nid: task-1.fix_flux\n", fmt.Sprintf("project_root: %q\n", root),
		"Fix the flux capacitor", "MARKER-main", "MARKER-deep", "## git status", "## git diff (unstaged changes)",
		"MARKER-diff", "### notes/keys.txt (", "## Workspace " + root} {
		if !strings.Contains(saved, want) {
			t.Errorf("saved file lacks %q:\n%s", want, saved)
		}
	}
	if strings.Contains(saved, "MARKER-unlisted") {
		t.Error("saved file holds a file no glob names")
	}
	checkRedacted(t, "saved file", saved)
	for _, secret := range []string{testPEMBody, testAWSKeyID, testOpenAIKey} {
		if strings.Contains(r.Structured.Output, secret) {
			t.Errorf("ContextSave answer holds the secret %q", secret)
		}
	}

	// A fresh adapter over the same state directory: new sessions, new
	// registry, nothing shared but the disk.
	second := newAdapter(t, Options{StateDir: state})
	res := second.init(map[string]any{"type": "first_call", "task_id_to_resume": "task-1.fix_flux"})
	wantStatus(t, res, "completed", "", false)
	if dd := res.Structured.Data; dd.WorkspaceRoot != root || dd.Cwd != root || dd.Reattached || dd.Scratch || dd.ResumedTask != "task-1.fix_flux" {
		t.Errorf("resumed data = %+v, want a new session in %s", dd, root)
	}
	text := res.text()
	for _, want := range []string{"## Resumed task task-1.fix_flux", "Fix the flux capacitor", "MARKER-main", "MARKER-deep", "MARKER-diff"} {
		if !strings.Contains(text, want) {
			t.Errorf("resumed answer lacks %q:\n%s", want, text)
		}
	}
	checkRedacted(t, "resumed answer", text)
	if strings.Contains(text, "saved context truncated") {
		t.Error("a small saved context was reported truncated")
	}

	// A later first_call reattaches and does not resend the saved file.
	again := second.init(map[string]any{"task_id_to_resume": "task-1.fix_flux", "thread_id": res.Structured.Data.ThreadID})
	wantStatus(t, again, "completed", "", false)
	if !again.Structured.Data.Reattached || again.Structured.Data.ShellPID != res.Structured.Data.ShellPID {
		t.Errorf("second resume did not reattach: %+v", again.Structured.Data)
	}
	if at := again.text(); strings.Contains(at, "MARKER-main") || !strings.Contains(at, "not repeated") {
		t.Errorf("second resume resent the saved context or did not say so:\n%s", at)
	}
	plain := second.init(map[string]any{"any_workspace_path": root})
	if strings.Contains(plain.text(), "MARKER-main") || plain.Structured.Data.ResumedTask != "" {
		t.Errorf("a first_call without task_id_to_resume showed the saved context:\n%s", plain.text())
	}
}

func TestContextSaveTaskIDs(t *testing.T) {
	state := t.TempDir()
	a := newAdapter(t, Options{StateDir: state})
	root := canon(t, t.TempDir())
	bind := a.bound(root)
	// Initialize keeps the principal's thread book there; nothing else
	// may appear.
	before, _ := os.ReadDir(state)
	for _, id := range []string{"../x", "..", ".hidden", "a/b", "a b", "a\x00b", "ü", strings.Repeat("a", wspace.MaxTaskIDLen+1)} {
		r, _ := a.save(with(bind, "id", id, "description", "d"))
		wantSaveStatus(t, r, "invalid_input", codeInvalidToolInput)
		r2 := a.init(map[string]any{"task_id_to_resume": id})
		wantStatus(t, r2, "invalid_input", codeInvalidToolInput, true)
	}
	if entries, _ := os.ReadDir(state); len(entries) != len(before) {
		t.Errorf("refused ids wrote %d entries into the state directory", len(entries)-len(before))
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(state), "x.txt")); err == nil {
		t.Error("a traversal id wrote outside the state directory")
	}

	r, d := a.save(with(bind, "description", "generated id", "id", strings.Repeat("z", wspace.MaxTaskIDLen)))
	wantSaveStatus(t, r, "completed", "")
	r, d = a.save(with(bind, "description", "generated id"))
	wantSaveStatus(t, r, "completed", "")
	if wspace.ValidTaskID(d.ID) != nil || !regexp.MustCompile(`^task-[0-9a-f]{12}$`).MatchString(d.ID) {
		t.Errorf("generated id %q", d.ID)
	}
	if _, err := os.Stat(filepath.Join(state, "contexts", d.ID+".txt")); err != nil || !strings.Contains(r.Structured.Output, "task_id_to_resume="+d.ID) {
		t.Errorf("generated id %q: file %v, answer %q", d.ID, err, r.Structured.Output)
	}

	for _, args := range []map[string]any{
		with(bind, "description", "   "),
		with(bind, "description", strings.Repeat("d", MaxContextDescriptionBytes+1)),
		with(bind, "description", "d", "relevant_file_globs", []string{"src/[.go"}),
		with(bind, "description", "d", "surprise", true),
	} {
		r, _ := a.save(args)
		wantSaveStatus(t, r, "invalid_input", codeInvalidToolInput)
	}

	missing := a.init(map[string]any{"task_id_to_resume": "never-saved"})
	wantStatus(t, missing, "not_found", codeTaskNotFound, true)
	if !strings.Contains(missing.Structured.Output, `"never-saved"`) {
		t.Errorf("not_found message %q does not name the id", missing.Structured.Output)
	}
	// Only first_call resumes.
	r3 := a.init(map[string]any{"type": "reset_shell", "task_id_to_resume": d.ID, "thread_id": bind["thread_id"]})
	wantStatus(t, r3, "invalid_input", codeInvalidToolInput, true)
}

func TestContextSaveCaps(t *testing.T) {
	state := t.TempDir()
	a := newAdapter(t, Options{StateDir: state})
	root := canon(t, t.TempDir())
	line := strings.Repeat("x", 99) + "\n"
	writeFile(t, filepath.Join(root, "huge", "h.txt"), strings.Repeat(line, 500)) // 50000 bytes
	writeFile(t, filepath.Join(root, "big", "bin.txt"), "text\x00more\n")
	for i := 1; i <= 6; i++ {
		writeFile(t, filepath.Join(root, "big", fmt.Sprintf("f%d.txt", i)), strings.Repeat(line, 360)) // 36000 bytes, 9000 tokens
	}
	bind := a.bound(root)
	r, d := a.save(with(bind, "id", "caps", "description", "caps", "relevant_file_globs", []string{"huge/*", "big/*.txt", "huge/h.txt"}))
	wantSaveStatus(t, r, "completed", "")
	// huge/h.txt is cut to the per-file cap (10000 tokens), then three
	// 9000-token files fit the 40000-token total and three do not.
	if want := []string{"huge/h.txt", "big/f1.txt", "big/f2.txt", "big/f3.txt"}; !slices.Equal(d.FilesIncluded, want) {
		t.Errorf("files_included = %q, want %q", d.FilesIncluded, want)
	}
	if !slices.Equal(d.FilesTruncated, []string{"huge/h.txt"}) {
		t.Errorf("files_truncated = %q", d.FilesTruncated)
	}
	var omitted []string
	for _, o := range d.FilesOmitted {
		omitted = append(omitted, o.Path+": "+o.Reason)
	}
	want := []string{"big/bin.txt: binary", "big/f4.txt: over the total cap of 40000 tokens",
		"big/f5.txt: over the total cap of 40000 tokens", "big/f6.txt: over the total cap of 40000 tokens"}
	if !slices.Equal(omitted, want) {
		t.Errorf("files_omitted = %q, want %q", omitted, want)
	}
	raw, err := os.ReadFile(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	saved := string(raw)
	if n := strings.Count(saved, line); n != 400+3*360 {
		t.Errorf("saved file holds %d content lines, want %d", n, 400+3*360)
	}
	for _, w := range []string{"[huge/h.txt truncated at 10000 tokens", "## Files left out\n- big/bin.txt: binary\n- big/f4.txt: over the total cap"} {
		if !strings.Contains(saved, w) {
			t.Errorf("saved file lacks %q", w)
		}
	}

	// Resuming shows at most the resume budget and says it cut.
	b := newAdapter(t, Options{StateDir: state})
	res := b.init(map[string]any{"task_id_to_resume": "caps"})
	wantStatus(t, res, "completed", "", false)
	text := res.text()
	if !strings.Contains(text, "[saved context truncated to about 20000 tokens") {
		t.Errorf("resumed answer does not say it was truncated")
	}
	if n := strings.Count(text, line); n == 0 || n*len(line) > DefaultResumeTokens*evidence.BytesPerToken {
		t.Errorf("resumed answer holds %d content lines, over the budget of %d tokens", n, DefaultResumeTokens)
	}
}

func TestContextSavePathPolicy(t *testing.T) {
	a := newAdapter(t, Options{StateDir: t.TempDir()})
	root, outside := workspace(t)
	writeFile(t, filepath.Join(root, "sub", "a.txt"), "in sub\n")
	bind := a.bound(root)

	r, _ := a.save(with(bind, "description", "d", "project_root_path", filepath.Dir(root)))
	wantSaveStatus(t, r, "denied", codeFileOperationDenied)
	r, _ = a.save(with(bind, "description", "d", "project_root_path", filepath.Join(root, "nope")))
	wantSaveStatus(t, r, "not_found", codeFileNotFound)
	r, _ = a.save(with(bind, "description", "d", "project_root_path", filepath.Join(root, "README.md")))
	wantSaveStatus(t, r, "invalid_input", codeInvalidToolInput)

	// sneaky.txt links outside; ../* and the absolute path of the outside
	// file are outside too. None is read.
	r, d := a.save(with(bind, "description", "d", "relevant_file_globs", []string{"*.txt", "../*", outside, "sub/*.txt"}))
	wantSaveStatus(t, r, "completed", "")
	if !slices.Equal(d.FilesIncluded, []string{"sub/a.txt"}) {
		t.Errorf("files_included = %q", d.FilesIncluded)
	}
	reasons := map[string]string{}
	for _, o := range d.FilesOmitted {
		reasons[o.Path] = o.Reason
	}
	for _, p := range []string{"sneaky.txt", "../*", outside} {
		if reasons[p] != "outside the workspace and the allowed paths" {
			t.Errorf("omitted %q: %q, want outside (all: %+v)", p, reasons[p], d.FilesOmitted)
		}
	}
	raw, _ := os.ReadFile(d.Path)
	if strings.Contains(string(raw), "top secret") {
		t.Error("a file outside the workspace was saved")
	}

	// A sub-directory as the project root: relative globs join it.
	r, d = a.save(with(bind, "id", "sub", "description", "d", "project_root_path", "sub", "relevant_file_globs", []string{"*.txt"}))
	wantSaveStatus(t, r, "completed", "")
	if d.ProjectRoot != filepath.Join(root, "sub") || !slices.Equal(d.FilesIncluded, []string{"a.txt"}) {
		t.Errorf("sub-directory save: %+v", d)
	}

	// Resuming with another workspace than the saved one is refused; the
	// same one (another spelling) is accepted.
	b := newAdapter(t, Options{StateDir: a.stateDir(t, d.Path)})
	res := b.init(map[string]any{"task_id_to_resume": "sub", "any_workspace_path": root})
	wantStatus(t, res, "invalid_input", codeInvalidToolInput, true)
	res = b.init(map[string]any{"task_id_to_resume": "sub", "any_workspace_path": filepath.Join(root, "sub", "a.txt")})
	wantStatus(t, res, "completed", "", false)
	if res.Structured.Data.WorkspaceRoot != filepath.Join(root, "sub") {
		t.Errorf("resumed in %s", res.Structured.Data.WorkspaceRoot)
	}

	// No session, no save.
	r, _ = a.save(map[string]any{"description": "d"})
	wantSaveStatus(t, r, "needs_initialize", codeNotInitialized)
}

// stateDir is the state directory a saved context file lives in.
func (a *adapter) stateDir(t *testing.T, contextPath string) string {
	t.Helper()
	return filepath.Dir(filepath.Dir(contextPath))
}

func TestContextSaveWithoutStateDir(t *testing.T) {
	a := newAdapter(t, Options{})
	bind := a.bound(canon(t, t.TempDir()))
	r, _ := a.save(with(bind, "id", "t", "description", "d"))
	wantSaveStatus(t, r, "failed", codeStateDirUnavailable)
	res := a.init(map[string]any{"task_id_to_resume": "t"})
	wantStatus(t, res, "not_found", codeTaskNotFound, true)
}

func TestContextSaveListed(t *testing.T) {
	a := newAdapter(t, Options{StateDir: t.TempDir()})
	tools := listedTools(t, a.client)
	i := slices.IndexFunc(tools, func(tool mcp.Tool) bool { return tool.Name == ContextSaveTool })
	if i < 0 {
		t.Fatalf("%s is not listed", ContextSaveTool)
	}
	tool := tools[i]
	checkStrictSchema(t, "ContextSave inputSchema", tool.InputSchema)
	if an := tool.Annotations; an == nil || an.ReadOnlyHint == nil || *an.ReadOnlyHint || an.DestructiveHint == nil || *an.DestructiveHint {
		t.Errorf("annotations %+v, want neither read-only nor destructive", tool.Annotations)
	}
}

// TestContextSaveOpens puts a stand-in xdg-open first on PATH and checks
// that it is started on the saved file, and that a missing opener does not
// fail the save.
func TestContextSaveOpens(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the stand-in opener is xdg-open")
	}
	bin := t.TempDir()
	mark := filepath.Join(t.TempDir(), "opened")
	script := "#!/bin/sh\nprintf '%s' \"$1\" > " + mark + ".tmp && mv " + mark + ".tmp " + mark + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	a := newAdapter(t, Options{StateDir: t.TempDir(), OpenContext: true})
	bind := a.bound(canon(t, t.TempDir()))
	r, d := a.save(with(bind, "id", "shown", "description", "d"))
	wantSaveStatus(t, r, "completed", "")
	if d.OpenedWith != "xdg-open" {
		t.Fatalf("opened_with = %q", d.OpenedWith)
	}
	// The opener runs detached; wait for its mark.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := os.ReadFile(mark)
		if err == nil {
			if string(got) != d.Path {
				t.Errorf("opener got %q, want %q", got, d.Path)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the opener was not started")
		}
		time.Sleep(20 * time.Millisecond)
	}

	t.Setenv("PATH", t.TempDir())
	r, d = a.save(with(bind, "id", "unshown", "description", "d"))
	wantSaveStatus(t, r, "completed", "")
	if d.OpenedWith != "" {
		t.Errorf("opened_with = %q with no opener on PATH", d.OpenedWith)
	}
}

// TestContextSaveListsAreBounded: a broad glob over many files must not
// make the saved file or the answer grow with the number of files. Empty
// files cost no content tokens but still take a heading each, and every
// file over the cap would otherwise get a line of its own.
func TestContextSaveListsAreBounded(t *testing.T) {
	state := t.TempDir()
	a := newAdapter(t, Options{StateDir: state})
	root := canon(t, t.TempDir())
	const n = 3000
	for i := range n {
		writeFile(t, filepath.Join(root, "empty", fmt.Sprintf("e%04d.txt", i)), "")
		writeFile(t, filepath.Join(root, "full", fmt.Sprintf("f%04d.txt", i)), strings.Repeat("y", 99)+"\n")
	}
	bind := a.bound(root)
	r, d := a.save(with(bind, "id", "many", "description", "many files", "relevant_file_globs", []string{"empty/*", "full/*"}))
	wantSaveStatus(t, r, "completed", "")
	raw, err := os.ReadFile(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	// Every file's heading is charged to the total: 3000 empty files and
	// 3000 files of 25 tokens cannot all be listed as saved.
	if len(d.FilesIncluded) >= 2*n {
		t.Errorf("%d files saved, want the heading of each charged to the %d-token cap", len(d.FilesIncluded), wspace.DefaultContextTotalTokens)
	}
	if got := wspace.Tokens(len(raw)); got > wspace.DefaultContextTotalTokens+wspace.Tokens(MaxContextDescriptionBytes)+8000 {
		t.Errorf("saved file is about %d tokens, want it near the %d-token cap", got, wspace.DefaultContextTotalTokens)
	}
	if len(d.FilesOmitted) > wspace.MaxContextListedOmissions || d.FilesOmittedMore != 2*n-len(d.FilesIncluded)-len(d.FilesOmitted) {
		t.Errorf("%d omissions listed and %d more counted, want at most %d listed and the rest (%d) counted",
			len(d.FilesOmitted), d.FilesOmittedMore, wspace.MaxContextListedOmissions, 2*n-len(d.FilesIncluded)-len(d.FilesOmitted))
	}
	if len(r.Structured.Output) > 64<<10 {
		t.Errorf("answer is %d bytes, want it short", len(r.Structured.Output))
	}
	if want := fmt.Sprintf("and %d more", d.FilesOmittedMore); !strings.Contains(string(raw), want) || !strings.Contains(r.Structured.Output, want) {
		t.Errorf("saved file or answer lacks %q", want)
	}
}
