package main

// Round trips an agent should not need, driven through the official Go
// SDK client (mcpprobe script: one client session, steps with checks)
// against the built binaries: a full-screen program's first answer shows
// its screen, a background job's status answers at once, a SEARCH that
// misses shows the nearest lines, text typed at an idle prompt runs as a
// checked command, and refusals carry the call that fixes them.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sdkScript runs steps in one session of the Go SDK client against the
// built winx of d's runtime and fails the test with the client's report
// unless every step passed. The steps may use ${tid} and ${root}, which
// initStep saves.
func sdkScript(t *testing.T, d *daemonEnv, steps ...map[string]any) {
	t.Helper()
	probe := filepath.Join(mcpClients(t), "mcpprobe")
	b, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "steps.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), probe, "script", "--stdio", shellQuote(filepath.Join(d.bins, "winx")), "--file", file, "--timeout", clientTimeout.String())
	cmd.Env = d.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("mcpprobe script: %v\n%s", err, out)
	}
}

// initStep is a first_call in root (plus extra arguments) that saves the
// session's thread_id and workspace_root as ${tid} and ${root}.
func initStep(root string, extra map[string]any) map[string]any {
	args := map[string]any{"type": "first_call", "any_workspace_path": root}
	for k, v := range extra {
		args[k] = v
	}
	return map[string]any{"name": "Initialize " + root, "tool": "Initialize", "args": args,
		"expect": map[string]any{"status": "completed"},
		"save":   map[string]any{"tid": "data.thread_id", "root": "data.workspace_root"}}
}

// bashStep is a BashCommand call of the session initStep saved; wait < 0
// leaves wait_for_seconds out.
func bashStep(name string, action map[string]any, wait float64, expect map[string]any) map[string]any {
	args := map[string]any{"action_json": action, "thread_id": "${tid}", "workspace_root": "${root}"}
	if wait >= 0 {
		args["wait_for_seconds"] = wait
	}
	return map[string]any{"name": name, "tool": "BashCommand", "args": args, "expect": expect}
}

// TestFullScreenFirstAnswer: `less` and `vi` answer with the screen they
// draw and the keys that leave them, not an empty text and an answer
// prompt (nor, for vi, after the whole wait); the keys then end them.
func TestFullScreenFirstAnswer(t *testing.T) {
	d := newDaemonEnv(t)
	root := canonDir(t, t.TempDir())
	var b strings.Builder
	for i := 1; i <= 300; i++ {
		b.WriteString("row-" + strings.Repeat("x", i%7) + "-" + string(rune('a'+i%26)) + "\n")
	}
	if err := os.WriteFile(filepath.Join(root, "long.txt"), []byte("first-row\n"+b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sdkScript(t, d,
		initStep(root, nil),
		bashStep("less shows its screen", command("less long.txt"), 10, map[string]any{
			"status": "awaiting_input", "contains": "first-row\nrow-x-b", "not_contains": "<answer>",
			"matches": `"alt_screen":true[\s\S]*"send_text":"q"`}),
		bashStep("q leaves less", map[string]any{"type": "send_text", "send_text": "q"}, 10, map[string]any{"status": "completed"}),
	)
	if _, err := exec.LookPath("vi"); err != nil {
		t.Logf("no vi on PATH (%v): the editor case is not run", err)
		return
	}
	// vi waits for keys in select(2), not read(2): quiet on the
	// alternate screen is enough, so it answers long before the wait.
	sdkScript(t, d,
		initStep(root, nil),
		bashStep("vi shows its screen", command("vi long.txt"), 60, map[string]any{
			"status": "awaiting_input", "contains": "first-row\nrow-x-b", "matches": `"send_text":"\\u001b:q!"`}),
		bashStep(":q! leaves vi", map[string]any{"type": "send_text", "send_text": "\x1b:q!", "submit": true}, 10, map[string]any{"status": "completed"}),
	)
}

// TestBackgroundStatusCheckAnswersAtOnce: a status_check of a background
// job without wait_for_seconds answers while the job runs (it does not
// wait the default 15 s, by which time this job has ended); with a wait
// given, it waits.
func TestBackgroundStatusCheckAnswersAtOnce(t *testing.T) {
	d := newDaemonEnv(t)
	root := canonDir(t, t.TempDir())
	sdkScript(t, d,
		initStep(root, nil),
		map[string]any{"name": "start", "tool": "BashCommand",
			"args":   map[string]any{"action_json": map[string]any{"type": "command", "command": "sleep 6; echo late-line", "is_background": true}, "thread_id": "${tid}", "workspace_root": "${root}"},
			"expect": map[string]any{"status": "running"}, "save": map[string]any{"bg": "data.bg_command_id"}},
		bashStep("a look answers at once", map[string]any{"type": "status_check", "bg_command_id": "${bg}"}, -1,
			map[string]any{"status": "running", "not_contains": "late-line"}),
		bashStep("a wait asked for waits", map[string]any{"type": "status_check", "bg_command_id": "${bg}"}, 30,
			map[string]any{"status": "completed", "contains": "late-line"}),
	)
}

// TestSearchMissShowsNearestLines: a SEARCH block that is not found, none
// of whose lines is in the file (a typo), answers with the most similar
// lines marked ~ with their numbers, redacted like a read, names the block
// truly, and gives the ReadFiles call of that range; through EditFiles and
// the FileWriteOrEdit alias.
func TestSearchMissShowsNearestLines(t *testing.T) {
	d := newDaemonEnv(t)
	root := canonDir(t, t.TempDir())
	path := filepath.Join(root, "p.go")
	src := "package p\n\nfunc parse(input string) error {\n\ttoken := \"" + testToken + "\"\n\treturn nil\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	blocks := "<<<<<<< SEARCH\nfunc parse(inptu string) eror {\n\ttokn := nil\n=======\nfunc parse() {\n>>>>>>> REPLACE\n"
	expect := func() map[string]any {
		return map[string]any{"status": "conflict",
			"matches": `SEARCH block 1 was not found[\s\S]*~ 3\tfunc parse\(input string\) error \{\n~ 4\t\ttoken := "\[REDACTED:[\s\S]*next: ReadFiles \{"file_paths":\["[^"]*/p\.go:1-7"\]`}
	}
	sdkScript(t, d,
		initStep(root, nil),
		map[string]any{"name": "EditFiles miss", "tool": "EditFiles", "args": map[string]any{
			"files": []any{map[string]any{"file_path": path, "mode": "search_replace", "content": blocks}}, "thread_id": "${tid}", "workspace_root": "${root}"},
			"expect": expect()},
		map[string]any{"name": "no secret", "tool": "EditFiles", "args": map[string]any{
			"files": []any{map[string]any{"file_path": path, "mode": "search_replace", "content": blocks}}, "thread_id": "${tid}", "workspace_root": "${root}"},
			"expect": map[string]any{"not_contains": testToken[4:]}},
		map[string]any{"name": "no content line called a line", "tool": "EditFiles", "args": map[string]any{
			"files": []any{map[string]any{"file_path": path, "mode": "search_replace", "content": blocks}}, "thread_id": "${tid}", "workspace_root": "${root}"},
			"expect": map[string]any{"not_contains": "block 1 (line"}},
		map[string]any{"name": "FileWriteOrEdit miss", "tool": "FileWriteOrEdit", "args": map[string]any{
			"file_path": path, "text_or_search_replace_blocks": blocks, "percentage_to_change": 10, "thread_id": "${tid}", "workspace_root": "${root}"},
			"expect": expect()},
	)
	if b, _ := os.ReadFile(path); string(b) != src {
		t.Errorf("a refused edit changed the file: %q", b)
	}
}

// TestTypingAtIdlePrompt: text typed while no command runs runs at the
// prompt as a command when it is a whole line; a partial line is refused
// with the command call. In architect the typed line passes the command
// policy: a reading command runs, a writing one is refused, and a command
// split over two calls (no Enter in the first) never reaches the shell,
// by send_text or send_ascii.
func TestTypingAtIdlePrompt(t *testing.T) {
	d := newDaemonEnv(t)
	root := canonDir(t, t.TempDir())
	if err := os.WriteFile(filepath.Join(root, "seen.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sdkScript(t, d,
		initStep(root, nil),
		bashStep("a typed line runs", map[string]any{"type": "send_text", "send_text": "echo typed-$((6*7))", "submit": true}, 10,
			map[string]any{"status": "completed", "contains": "typed-42"}),
		bashStep("send_ascii too", map[string]any{"type": "send_ascii", "send_ascii": []int{'l', 's', '\r'}}, 10,
			map[string]any{"status": "completed", "contains": "seen.txt"}),
		bashStep("a partial line is refused with the command", map[string]any{"type": "send_text", "send_text": "echo partial"}, 10,
			map[string]any{"status": "not_found", "matches": `"command":"echo partial"`}),
	)
	arch := canonDir(t, t.TempDir())
	if err := os.WriteFile(filepath.Join(arch, "seen.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pwned := filepath.Join(arch, "pwned")
	sdkScript(t, d,
		initStep(arch, map[string]any{"mode_name": "architect"}),
		bashStep("a reading line runs", map[string]any{"type": "send_text", "send_text": "ls", "submit": true}, 10,
			map[string]any{"status": "completed", "contains": "seen.txt"}),
		bashStep("a writing line is refused", map[string]any{"type": "send_text", "send_text": "touch " + pwned, "submit": true}, 10,
			map[string]any{"status": "denied"}),
		bashStep("split: first half", map[string]any{"type": "send_text", "send_text": "tou"}, 10,
			map[string]any{"status": "denied", "matches": `"send_text":"tou","submit":true`}),
		bashStep("split: second half", map[string]any{"type": "send_text", "send_text": "ch " + pwned, "submit": true}, 10,
			map[string]any{"status": "denied"}),
		bashStep("split by send_ascii: first half", map[string]any{"type": "send_ascii", "send_ascii": []int{'t', 'o', 'u'}}, 10,
			map[string]any{"status": "denied"}),
		bashStep("split by send_ascii: Enter", map[string]any{"type": "send_specials", "send_specials": []string{"Enter"}}, 10,
			map[string]any{"isError": true}),
		bashStep("a whole line by send_ascii", map[string]any{"type": "send_ascii", "send_ascii": append([]int{'t', 'o', 'u', 'c', 'h', ' '}, append(runesOf(pwned), '\r')...)}, 10,
			map[string]any{"status": "denied"}),
	)
	if _, err := os.Lstat(pwned); !os.IsNotExist(err) {
		t.Errorf("architect: typed text created %s (%v)", pwned, err)
	}
}

func runesOf(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}

// TestRefusalsCarryNextAction: a call to a session that runs nowhere (the
// embedded runtime's adapter restarted) answers with the exact Initialize
// call, and removing a dirty managed worktree answers with the forced
// removal and how to keep the work.
func TestRefusalsCarryNextAction(t *testing.T) {
	root := canonDir(t, t.TempDir())
	emb := newDaemonEnv(t, "WINX_RUNTIME=embedded")
	sdkScript(t, emb,
		map[string]any{"name": "no session", "tool": "BashCommand", "args": map[string]any{
			"action_json": command("true"), "thread_id": "lost_thread", "workspace_root": root},
			"expect": map[string]any{"status": "needs_initialize",
				"matches": `"nextAction":\{"arguments":\{"any_workspace_path":"` + root + `","thread_id":"lost_thread","type":"first_call"\},[^}]*"tool":"Initialize"`}},
	)

	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "one")
	d := newDaemonEnv(t)
	sdkScript(t, d,
		map[string]any{"name": "make a worktree", "tool": "Initialize", "args": map[string]any{"type": "first_call", "any_workspace_path": root, "worktree": "task1"},
			"expect": map[string]any{"status": "completed"}, "save": map[string]any{"tid": "data.thread_id", "root": "data.workspace_root"}},
		bashStep("dirty it", command("echo new > untracked.txt"), 10, map[string]any{"status": "completed"}),
		map[string]any{"name": "remove refused", "tool": "Initialize", "args": map[string]any{"type": "first_call", "any_workspace_path": root, "worktree": "task1", "worktree_action": "remove"},
			"expect": map[string]any{"status": "conflict", "matches": `worktree_dirty[\s\S]*"nextAction":\{"arguments":\{[^}]*"force":true[^}]*"worktree_action":"remove"[^}]*\},"instruction":"To keep the changes, commit them`}},
	)
}
