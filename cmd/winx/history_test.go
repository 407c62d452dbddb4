package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"winx/guardian"
	"winx/mcp/session"
)

// A session's history (the files it read and edited, its last commands
// with their exit codes, its cwd) is reported from what outlives the
// adapter: the guardian and the session's state directory. These tests
// drive the built winx through the official Go SDK client (mcpprobe): one
// adapter does the work and is killed with SIGKILL, a new one reattaches by
// thread id and saves the context.

// historyEnv is a private daemon runtime and the Go SDK client.
type historyEnv struct {
	t     *testing.T
	d     *daemonEnv
	probe string
	root  string
}

func newHistoryEnv(t *testing.T) *historyEnv {
	t.Helper()
	probe := filepath.Join(mcpClients(t), "mcpprobe")
	return &historyEnv{t: t, d: newDaemonEnv(t), probe: probe, root: canonDir(t, t.TempDir())}
}

// probeStep is one step of an mcpprobe script (see its script.go).
type probeStep struct {
	Name   string            `json:"name,omitempty"`
	Tool   string            `json:"tool"`
	Args   map[string]any    `json:"args,omitempty"`
	Expect map[string]any    `json:"expect,omitempty"`
	Save   map[string]string `json:"save,omitempty"`
}

// scriptThenKill runs steps through one winx adapter started by the Go SDK
// client over stdio, then kills that adapter with SIGKILL (the script's
// last step, so no call is in flight) and returns the thread id the first
// step (an Initialize) answered.
func (h *historyEnv) scriptThenKill(steps []probeStep) string {
	h.t.Helper()
	dir := h.t.TempDir()
	pidFile, threadFile := filepath.Join(dir, "pid"), filepath.Join(dir, "thread")
	steps[0].Save = map[string]string{"thread": "data.thread_id"}
	steps = append(steps,
		probeStep{Name: "remember the thread", Tool: "#sh", Args: map[string]any{"cmd": "printf %s '${thread}' > " + shellQuote(threadFile)}},
		probeStep{Name: "kill the adapter", Tool: "#sh", Args: map[string]any{"cmd": "kill -KILL $(cat " + shellQuote(pidFile) + ")"}},
	)
	b, err := json.Marshal(steps)
	if err != nil {
		h.t.Fatal(err)
	}
	file := filepath.Join(dir, "steps.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		h.t.Fatal(err)
	}
	// The adapter writes its pid, then becomes winx: the kill hits winx
	// itself, not a shell around it.
	server := "echo $$ > " + shellQuote(pidFile) + "; exec " + shellQuote(filepath.Join(h.d.bins, "winx"))
	stdout, stderr, _ := h.run(h.probe, "script", "--stdio", server, "--file", file)
	if !strings.Contains(stdout, fmt.Sprintf("%d passed, 0 failed", len(steps))) {
		h.t.Fatalf("adapter A's script:\n%s\nstderr:\n%s", stdout, stderr)
	}
	thread, err := os.ReadFile(threadFile)
	if err != nil || len(thread) == 0 {
		h.t.Fatalf("no thread id: %v", err)
	}
	return string(thread)
}

// run runs the client to completion in the runtime's environment.
func (h *historyEnv) run(argv ...string) (stdout, stderr string, code int) {
	h.t.Helper()
	return runClientEnv(h.t, h.d.env, argv...)
}

// call runs one tool call from a new adapter (a new winx process) and
// returns its structuredContent.
func (h *historyEnv) call(tool string, args map[string]any) (status, output string, data json.RawMessage) {
	h.t.Helper()
	b, _ := json.Marshal(args)
	stdout, stderr, _ := h.run(h.probe, "call", "--stdio", shellQuote(filepath.Join(h.d.bins, "winx")), "--tool", tool, "--args", string(b))
	var res struct {
		StructuredContent struct {
			Status string          `json:"status"`
			Output string          `json:"output"`
			Data   json.RawMessage `json:"data"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		h.t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", tool, err, stdout, stderr)
	}
	sc := res.StructuredContent
	return sc.Status, sc.Output, sc.Data
}

// contextSave saves the context of the thread's session from a new adapter
// and returns the saved file's text.
func (h *historyEnv) contextSave(thread, id string) string {
	h.t.Helper()
	status, out, data := h.call("ContextSave", map[string]any{"id": id, "thread_id": thread, "workspace_root": h.root, "description": "carry on"})
	var d struct {
		Path string `json:"path"`
	}
	if status != "completed" || json.Unmarshal(data, &d) != nil || d.Path == "" {
		h.t.Fatalf("ContextSave from a new adapter = %s %q %s", status, out, data)
	}
	b, err := os.ReadFile(d.Path)
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func (h *historyEnv) write(name, text string) string {
	h.t.Helper()
	p := filepath.Join(h.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *historyEnv) initStep(thread string) probeStep {
	return probeStep{Tool: "Initialize", Args: map[string]any{"type": "first_call", "any_workspace_path": h.root, "thread_id": thread},
		Expect: map[string]any{"status": "completed"}}
}

func (h *historyEnv) bashStep(command string) probeStep {
	return probeStep{Name: command, Tool: "BashCommand", Args: map[string]any{
		"action_json": map[string]any{"type": "command", "command": command}, "wait_for_seconds": 10,
		"thread_id": "${thread}", "workspace_root": h.root}, Expect: map[string]any{"status": "completed"}}
}

func (h *historyEnv) readStep(spec, save string) probeStep {
	return probeStep{Name: "read " + spec, Tool: "ReadFiles", Args: map[string]any{"file_paths": []string{spec}, "thread_id": "${thread}", "workspace_root": h.root},
		Expect: map[string]any{"status": "completed"}, Save: map[string]string{save: "data.files.0.revision"}}
}

func (h *historyEnv) patchStep(path, rev string, line int, text string) probeStep {
	return probeStep{Name: "edit " + path, Tool: "EditFiles", Args: map[string]any{"files": []map[string]any{{"file_path": path, "mode": "line_patch", "expected_revision": rev,
		"patches": []map[string]any{{"start_line": line, "delete_lines": 1, "replacement": text}}}}, "thread_id": "${thread}", "workspace_root": h.root},
		Expect: map[string]any{"status": "completed"}}
}

// savedSection returns the section of a saved context titled title.
func savedSection(t *testing.T, saved, title string) string {
	t.Helper()
	i := strings.Index(saved, "\n## "+title)
	if i < 0 {
		t.Fatalf("saved context has no %q section:\n%s", title, saved)
	}
	rest := saved[i+1:]
	if j := strings.Index(rest[3:], "\n## "); j >= 0 {
		rest = rest[:j+4]
	}
	return rest
}

// historySecret looks like a GitHub token to the redactor.
var historySecret = "ghp_" + strings.Repeat("Q", 36)

// TestHistorySurvivesAdapterKill: a session reads and edits two files and
// runs several commands through adapter A, which is then killed; adapter B
// reattaches by thread id and its ContextSave names both files with the
// lines read and edited, the last commands with their exit codes, and the
// cwd; resuming the saved task from a third adapter shows the same.
func TestHistorySurvivesAdapterKill(t *testing.T) {
	h := newHistoryEnv(t)
	var lines strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	code := h.write("pkg/list.go", lines.String())
	notes := h.write("notes.txt", "alpha\nbeta\ngamma\n")
	if err := os.Mkdir(filepath.Join(h.root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	thread := h.scriptThenKill([]probeStep{
		h.initStep("history-thread"),
		h.readStep(code+":2-8", "revc"),
		h.readStep(notes, "revn"),
		h.patchStep(code, "${revc}", 4, "LINE FOUR\n"),
		h.patchStep(notes, "${revn}", 2, "BETA\n"),
		h.bashStep("echo first"),
		h.bashStep("(exit 3)"),
		h.bashStep("cd sub"),
		h.bashStep("false"),
		h.bashStep("true " + historySecret),
		h.bashStep("echo done-here"),
	})

	saved := h.contextSave(thread, "history-1")
	active := savedSection(t, saved, "Active files")
	for _, want := range []string{"\n- notes.txt (read 1-3; edited 2)\n", "\n- pkg/list.go (read 2-8; edited 4)\n"} {
		if !strings.Contains(active, want) {
			t.Errorf("active files lack %q:\n%s", strings.TrimSpace(want), active)
		}
	}
	term := savedSection(t, saved, "Terminal")
	sub := filepath.Join(h.root, "sub")
	for _, want := range []string{
		"cwd: " + sub + "\n",
		`- [exit 0] "echo done-here" (cwd ` + sub + ")",
		`- [exit 1] "false" (cwd ` + sub + ")",
		`- [exit 0] "cd sub" (cwd ` + sub + ")",
		`- [exit 3] "(exit 3)" (cwd ` + h.root + ")",
		`- [exit 0] "echo first" (cwd ` + h.root + ")",
	} {
		if !strings.Contains(term, want) {
			t.Errorf("terminal section lacks %q:\n%s", want, term)
		}
	}
	if i, j := strings.Index(term, `"echo done-here"`), strings.Index(term, `"echo first"`); i < 0 || j < i {
		t.Errorf("commands not most recent first:\n%s", term)
	}
	// A secret typed in a command is redacted in the saved context and
	// kept in no state file of the session.
	if strings.Contains(saved, historySecret) || !strings.Contains(term, `"true [REDACTED:`) {
		t.Errorf("the command with a secret is not redacted in the saved context:\n%s", term)
	}
	for _, kind := range []string{"commands", "work", "ledgers"} {
		for _, p := range h.stateFiles(kind) {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), historySecret) {
				t.Errorf("state file %s holds the secret typed in a command", p)
			}
		}
	}

	// Resuming the task (a third adapter) shows the same session facts.
	status, out, _ := h.call("Initialize", map[string]any{"type": "first_call", "any_workspace_path": h.root, "task_id_to_resume": "history-1"})
	for _, want := range []string{"pkg/list.go (read 2-8; edited 4)", `[exit 1] "false"`, "cwd: " + sub} {
		if !strings.Contains(out, want) {
			t.Errorf("Initialize resuming the task = %s, lacks %q:\n%s", status, want, out)
		}
	}
}

// stateFiles returns the session state files of kind (work, commands)
// under the runtime's state directory.
func (h *historyEnv) stateFiles(kind string) []string {
	h.t.Helper()
	var out []string
	filepath.WalkDir(filepath.Join(h.d.state, "winx"), func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && filepath.Base(filepath.Dir(p)) == kind && strings.HasSuffix(p, ".json") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestHistoryBounded: a flood of commands and reads keeps what is kept at
// its bounds: the saved context lists the newest commands only, at most
// the session's bound, and the work record on disk stays under its byte
// and file bounds.
func TestHistoryBounded(t *testing.T) {
	h := newHistoryEnv(t)
	steps := []probeStep{h.initStep("flood-thread")}
	const commands = 2*guardian.MaxHistory + 4
	for i := range commands {
		steps = append(steps, h.bashStep(fmt.Sprintf("echo n%d; (exit %d)", i, i%5)))
	}
	// Files with long names, more than the record keeps, each read.
	long := strings.Repeat("n", 200)
	var specs []string
	for i := range session.MaxWorkFiles + 20 {
		specs = append(specs, h.write(fmt.Sprintf("d%03d/%s.txt", i, long), "x\n"))
	}
	for i := 0; i < len(specs); i += 50 {
		steps = append(steps, probeStep{Name: "read many", Tool: "ReadFiles", Args: map[string]any{"file_paths": specs[i:min(i+50, len(specs))],
			"thread_id": "${thread}", "workspace_root": h.root}})
	}
	thread := h.scriptThenKill(steps)

	work := h.stateFiles("work")
	if len(work) != 1 {
		t.Fatalf("work records %v, want one", work)
	}
	fi, err := os.Lstat(work[0])
	if err != nil || fi.Size() > session.MaxWorkFileBytes || fi.Mode().Perm() != 0o600 {
		t.Errorf("work record %v (%v), want a 0600 file of at most %d bytes", fi, err, session.MaxWorkFileBytes)
	}
	saved := h.contextSave(thread, "flood-1")
	active := savedSection(t, saved, "Active files")
	if n := strings.Count(active, "\n- "); n > session.MaxWorkFiles || n == 0 {
		t.Errorf("active files list %d entries, want 1 to %d", n, session.MaxWorkFiles)
	}
	// The files of the last call (read in parallel, so in no order) are
	// kept; those the record dropped are from the first.
	for i := 50; i < len(specs); i++ {
		if !strings.Contains(active, fmt.Sprintf("d%03d/", i)) {
			t.Errorf("active files lack d%03d, read last:\n%s", i, active)
			break
		}
	}
	term := savedSection(t, saved, "Terminal")
	if n := strings.Count(term, "\n- [exit "); n != guardian.MaxHistory {
		t.Errorf("terminal section lists %d commands, want the last %d:\n%s", n, guardian.MaxHistory, term)
	}
	last, first := commands-1, commands-guardian.MaxHistory
	if !strings.Contains(term, fmt.Sprintf("- [exit %d] \"echo n%d; (exit %d)\"", last%5, last, last%5)) ||
		!strings.Contains(term, fmt.Sprintf("\"echo n%d;", first)) || strings.Contains(term, fmt.Sprintf("\"echo n%d;", first-1)) {
		t.Errorf("terminal section does not list commands n%d to n%d:\n%s", first, last, term)
	}
}

// TestHistoryPlantedLinkAndFIFO: a symbolic link or a FIFO planted in
// place of the session's state files is not followed: a new adapter's
// ContextSave answers (a FIFO would block a plain open), names nothing the
// link points at, and the adapter's next write replaces the link instead of
// writing through it.
func TestHistoryPlantedLinkAndFIFO(t *testing.T) {
	h := newHistoryEnv(t)
	notes := h.write("notes.txt", "one\ntwo\n")
	thread := h.scriptThenKill([]probeStep{h.initStep("planted-thread"), h.readStep(notes, "rev"), h.bashStep("echo hi")})
	work, cmds := h.stateFiles("work"), h.stateFiles("commands")
	if len(work) != 1 || len(cmds) != 1 {
		t.Fatalf("state files work=%v commands=%v, want one each", work, cmds)
	}

	// A FIFO in place of both: nothing blocks.
	for _, p := range []string{work[0], cmds[0]} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	saved := h.contextSave(thread, "fifo-1")
	if !strings.Contains(savedSection(t, saved, "Terminal"), `"echo hi"`) {
		t.Errorf("the guardian's commands are missing with FIFOs planted:\n%s", saved)
	}

	// A link to a record an attacker wrote: not read, and not written
	// through.
	decoy := filepath.Join(t.TempDir(), "decoy.json")
	planted := `{"version":1,"files":[{"path":"/etc/planted-by-link","read":[[1,2]],"at":"2030-01-01T00:00:00Z"}]}`
	if err := os.WriteFile(decoy, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(work[0])
	if err := os.Symlink(decoy, work[0]); err != nil {
		t.Fatal(err)
	}
	saved = h.contextSave(thread, "link-1")
	if strings.Contains(saved, "planted-by-link") {
		t.Errorf("ContextSave followed a planted link:\n%s", savedSection(t, saved, "Active files"))
	}
	if status, out, _ := h.call("ReadFiles", map[string]any{"file_paths": []string{notes}, "thread_id": thread, "workspace_root": h.root}); status != "completed" {
		t.Fatalf("ReadFiles = %s %q", status, out)
	}
	if b, _ := os.ReadFile(decoy); string(b) != planted {
		t.Errorf("the adapter wrote through the planted link: %s", b)
	}
	if fi, err := os.Lstat(work[0]); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("work record after a save = %v, %v; want a regular file in place of the link", fi, err)
	}

	// A link in place of the record's directory: not read through either.
	dir := filepath.Dir(work[0])
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, filepath.Base(work[0])), []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	saved = h.contextSave(thread, "dirlink-1")
	if strings.Contains(saved, "planted-by-link") {
		t.Errorf("ContextSave read through a planted directory link:\n%s", savedSection(t, saved, "Active files"))
	}
}
