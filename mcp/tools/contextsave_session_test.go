package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	wspace "winx/mcp/workspace"
)

// TestContextSaveListsActiveFilesAndTerminal: a saved context names the
// files the session read or edited, most recent first, and its terminal:
// cwd, the running command and the last commands with their exit codes, as
// the real shell reported them.
func TestContextSaveListsActiveFilesAndTerminal(t *testing.T) {
	e := newBashEnv(t, "")
	for _, n := range []string{"a.txt", "b.txt", "c.txt"} {
		writeFile(t, filepath.Join(e.root, n), "one\ntwo\n")
	}
	if err := os.Mkdir(filepath.Join(e.root, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	e.read("a.txt")
	e.read("b.txt")
	// Editing a.txt makes it the most recent; c.txt was never touched.
	if r, _ := e.edit(map[string]any{"files": []any{map[string]any{"file_path": "a.txt", "mode": "replace", "content": "three\n"}}}); r.Structured.Status != "completed" {
		t.Fatalf("edit = %+v", r.Structured)
	}
	for _, c := range []struct {
		cmd  string
		code int
	}{{"cd sub && echo in-sub", 0}, {"(exit 3)", 3}, {"false", 1}} {
		if _, d := e.bash(cmd(c.cmd), 20); d.ExitCode == nil || *d.ExitCode != c.code {
			t.Fatalf("%q exit = %v, want %d", c.cmd, d.ExitCode, c.code)
		}
	}
	if r, _ := e.bash(cmd("sleep 30"), 0.2); r.Structured.Status != "running" {
		t.Fatalf("sleep 30 = %+v", r.Structured)
	}
	r := e.call(ContextSaveTool, map[string]any{"thread_id": e.thread, "workspace_root": e.root, "description": "carry on"})
	if r.Structured.Status != "completed" {
		t.Fatalf("ContextSave = %+v", r.Structured)
	}
	var d wspace.SaveResult
	if err := json.Unmarshal(r.Structured.Data, &d); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	saved := string(raw)
	section := func(title string) string {
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
	active := section("Active files")
	// Each with the lines the model read and the lines its edit wrote.
	ia, ib := strings.Index(active, "\n- a.txt (read 1-2; edited 1)\n"), strings.Index(active, "\n- b.txt (read 1-2)\n")
	if ia < 0 || ib < 0 || ia > ib || strings.Contains(active, "c.txt") {
		t.Errorf("active files, want a.txt (read and edited) then b.txt (read) and no c.txt:\n%s", active)
	}
	term := section("Terminal")
	sub := filepath.Join(e.root, "sub")
	for _, want := range []string{
		"cwd: " + sub + "\n",
		`running: "sleep 30"`,
		`- [running] "sleep 30"`,
		`- [exit 1] "false" (cwd ` + sub + ")",
		`- [exit 3] "(exit 3)"`,
		`- [exit 0] "cd sub && echo in-sub"`,
	} {
		if !strings.Contains(term, want) {
			t.Errorf("terminal section lacks %q:\n%s", want, term)
		}
	}
	if i, j := strings.Index(term, `"false"`), strings.Index(term, `"(exit 3)"`); i < 0 || j < 0 || i > j {
		t.Errorf("last commands are not most recent first:\n%s", term)
	}
	e.bash(map[string]any{"type": "send_specials", "send_specials": []string{"Ctrl-c"}}, 5)
	// The end of the interrupted command replaces its running record.
	r = e.call(ContextSaveTool, map[string]any{"thread_id": e.thread, "workspace_root": e.root, "description": "carry on", "id": d.ID})
	raw, _ = os.ReadFile(d.Path)
	saved = string(raw)
	term = section("Terminal")
	if strings.Contains(term, "[running]") || !strings.Contains(term, "running: (nothing)") || strings.Count(term, `"sleep 30"`) != 1 {
		t.Errorf("after Ctrl-c the terminal section still shows sleep running:\n%s", term)
	}
}
