package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// testToken is a GitHub token shape the redactor knows; never real.
var testToken = "ghp_" + strings.Repeat("aB3", 12)

// TestFaithfulOutputThroughBinary: through the built binaries (daemon
// runtime), command output keeps its bytes: tabs stay tabs, a line longer
// than the terminal is one line, a 300,000-character line is never
// reported as repeated, a dropped trailing `| tail` is said in the text,
// and a secret split by the terminal's width or still arriving is never
// shown raw.
func TestFaithfulOutputThroughBinary(t *testing.T) {
	d := newDaemonEnv(t)
	a := d.adapter()
	s := a.mustInit(t.TempDir())

	r := a.bash(s, command(`printf '\tX\tY\n'`), 10)
	if !strings.Contains(r.Output, "\tX\tY") {
		t.Errorf("tabs: %q, want \\tX\\tY", r.Output)
	}

	var want strings.Builder
	for i := 1; i <= 120; i++ {
		if i > 1 {
			want.WriteByte(',')
		}
		want.WriteString(strconv.Itoa(i))
	}
	r = a.bash(s, command(`seq -s, 1 120`), 10)
	if !strings.Contains(r.Output, want.String()+"\n") {
		t.Errorf("seq -s, 1 120 is not one line: %q", r.Output)
	}

	r = a.bash(s, command(`head -c 300000 /dev/zero | tr '\0' a; echo; echo end`), 30)
	if strings.Contains(r.Output, "[winx: x") {
		t.Errorf("a 300,000-character line is reported as repeated: %.300q", r.Output)
	}
	if strings.Count(r.Output, "aaaaaaaaaa\n") > 1 {
		t.Errorf("the long line was split into rows: %.300q", r.Output)
	}

	r = a.bash(s, command(`seq 1 50 | tail -n 2`), 10)
	if !strings.Contains(r.Output, "| tail -n 2") || !strings.Contains(r.Output, "\n1\n") {
		t.Errorf("dropped tail pipe: %q, want it named and the whole bounded output", r.Output)
	}

	for _, c := range []string{
		`printf '%0190d ` + testToken + `\n' 0`,
		`printf '%0185d aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n' 0`,
	} {
		r = a.bash(s, command(c), 10)
		if strings.Contains(r.Output, testToken) || strings.Contains(r.Output, "wJalrXUtnFEMI") || !strings.Contains(r.Output, "[REDACTED:") {
			t.Errorf("%s: a secret split at the terminal width leaks: %q", c, r.Output)
		}
	}

	// A token still arriving: its start is held back while it runs.
	r = a.bash(s, command(`printf 'x ghp_aB3aB3'; sleep 3; printf '`+testToken[len("ghp_aB3aB3"):]+`\n'`), 1)
	if r.Status != "running" {
		t.Fatalf("partial token: %q %q, want running", r.Status, r.Output)
	}
	if strings.Contains(r.Output, "ghp_") {
		t.Errorf("the start of a token is shown before it completes: %q", r.Output)
	}
	screen := a.bash(s, map[string]any{"type": "screen"}, 0)
	if strings.Contains(screen.Output, "ghp_") {
		t.Errorf("screen shows the start of a token: %q", screen.Output)
	}
	done := a.waitDone(s)
	if strings.Contains(done.Output, testToken) || strings.Contains(r.Output+done.Output, "ghp_aB3") {
		t.Errorf("the finished token leaks: %q + %q", r.Output, done.Output)
	}
}

// editAnswer is what the evidence test reads of an EditFiles answer.
type editAnswer struct {
	Files []struct {
		Revision string `json:"revision"`
		UndoID   string `json:"undo_id"`
		Deleted  bool   `json:"deleted"`
	} `json:"files"`
}

func editData(t *testing.T, r daemonToolResult) editAnswer {
	t.Helper()
	var e editAnswer
	if r.Status != "completed" || json.Unmarshal(r.Data, &e) != nil || len(e.Files) != 1 {
		t.Fatalf("EditFiles = %+v", r)
	}
	return e
}

// TestEvidenceThroughBinary: through the built binaries, what the model
// itself wrote counts as read (a line_patch needs no ReadFiles after a
// creation or a search_replace), initial_files_to_read count as reads and
// show the revision, a revision no read ever issued answers needs_read,
// and undoing a creation says the file was deleted.
func TestEvidenceThroughBinary(t *testing.T) {
	d := newDaemonEnv(t)
	a := d.adapter()
	root := canonDir(t, t.TempDir())
	seed := filepath.Join(root, "seed.txt")
	if err := os.WriteFile(seed, []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := a.tool("Initialize", map[string]any{"type": "first_call", "any_workspace_path": root, "initial_files_to_read": []string{seed}})
	var s initData
	if r.Status != "completed" || json.Unmarshal(r.Data, &s) != nil {
		t.Fatalf("Initialize = %+v", r)
	}
	if !strings.Contains(r.Output, "beta") {
		t.Errorf("the initial file is not shown: %q", r.Output)
	}
	i := strings.Index(r.Output, "sha256:")
	if i < 0 {
		t.Fatalf("the initial file's revision is not shown: %q", r.Output)
	}
	// The revision as shown (short), which the model passes back as is.
	seedRev := "sha256:" + strings.TrimRightFunc(strings.Fields(r.Output[i+len("sha256:"):])[0], func(c rune) bool { return c == ';' })
	edit := func(files ...map[string]any) daemonToolResult {
		return a.tool("EditFiles", map[string]any{"files": files, "thread_id": s.ThreadID, "workspace_root": s.WorkspaceRoot})
	}
	patch := func(path, rev string, start, del int, repl string) map[string]any {
		return map[string]any{"file_path": path, "mode": "line_patch", "expected_revision": rev,
			"patches": []map[string]any{{"start_line": start, "delete_lines": del, "replacement": repl}}}
	}
	// An initial file counts as read: patch it at once.
	e := editData(t, edit(patch(seed, seedRev, 2, 1, "BETA\n")))
	// What the model wrote counts as read at the new revision.
	e = editData(t, edit(patch(seed, e.Files[0].Revision, 2, 1, "Beta\n")))
	sr := edit(map[string]any{"file_path": seed, "mode": "search_replace",
		"content": "<<<<<<< SEARCH\nBeta\n=======\nbeta two\n>>>>>>> REPLACE\n"})
	e = editData(t, sr)
	editData(t, edit(patch(seed, e.Files[0].Revision, 2, 1, "beta three\n")))
	if b, _ := os.ReadFile(seed); string(b) != "alpha\nbeta three\ngamma\n" {
		t.Errorf("seed.txt = %q", b)
	}

	created := filepath.Join(root, "new.txt")
	c := editData(t, edit(map[string]any{"file_path": created, "mode": "replace", "content": "one\ntwo\n"}))
	editData(t, edit(patch(created, c.Files[0].Revision, 1, 1, "ONE\n")))

	never := "sha256:" + strings.Repeat("0", 64)
	if r := edit(patch(created, never, 1, 1, "x\n")); r.Status != "needs_read" {
		t.Errorf("a revision never issued: %q %q, want needs_read", r.Status, r.Output)
	}

	other := filepath.Join(root, "other.txt")
	oc := editData(t, edit(map[string]any{"file_path": other, "mode": "replace", "content": "x\n"}))
	ud := editData(t, a.tool("EditFiles", map[string]any{"operation": "undo", "thread_id": s.ThreadID, "workspace_root": s.WorkspaceRoot,
		"files": []map[string]any{{"file_path": other, "mode": "undo", "undo_id": oc.Files[0].UndoID}}}))
	if !ud.Files[0].Deleted {
		t.Errorf("undo of a creation does not say the file was deleted: %+v", ud)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("other.txt still exists after the undo of its creation: %v", err)
	}
}
