package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"winx/mcp/usage"
)

// TestUsageLogCallFacts drives the built binary over stdio and checks that
// the usage log records what the tools noted of each call: Initialize's
// created or reused session, BashCommand's action and command category,
// the file count of ReadFiles and EditFiles; never the command text or a
// path. `winx report` still reads the log, and every jq recipe of the
// deployment guide runs on it and prints something.
func TestUsageLogCallFacts(t *testing.T) {
	bin := buildWinx(t)
	logPath := filepath.Join(t.TempDir(), "usage.jsonl")
	root := t.TempDir()
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("line\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	thread := "facts_test"
	var lines []string
	call := func(tool string, args map[string]any) {
		if _, ok := args["any_workspace_path"]; !ok {
			args["thread_id"], args["workspace_root"] = thread, root
		}
		a, _ := json.Marshal(args)
		lines = append(lines, `{"jsonrpc":"2.0","id":`+strconv.Itoa(len(lines)+1)+`,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+string(a)+`,`+meta+`}}`)
	}
	const marker = "cmd-marker-51f7"
	call("Initialize", map[string]any{"any_workspace_path": root, "thread_id": thread})
	call("Initialize", map[string]any{"any_workspace_path": root, "thread_id": thread})
	call("BashCommand", map[string]any{"command": "cd . && git status --short " + marker + " 2>/dev/null; true"})
	call("BashCommand", map[string]any{"command": "timeout 30 go test ./" + marker + " 2>/dev/null; true"})
	call("BashCommand", map[string]any{"command": "grep -r " + marker + " . ; true"})
	call("BashCommand", map[string]any{"command": "sed -i s/" + marker + "/x/ a.txt"})
	call("BashCommand", map[string]any{"command": "printf %s " + marker})
	call("BashCommand", map[string]any{"action_json": map[string]any{"type": "status_check"}})
	call("ReadFiles", map[string]any{"file_paths": []string{"a.txt", "b.txt", "c.txt"}})
	call("EditFiles", map[string]any{"files": []map[string]any{
		{"file_path": "new1.txt", "content": marker + "\n"},
		{"file_path": "new2.txt", "content": marker + "\n"},
	}})
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "WINX_USAGE_LOG="+logPath, "HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("winx: %v", err)
	}
	if n := bytes.Count(out, []byte("\n")); n != len(lines) {
		t.Fatalf("winx answered %d lines, want %d:\n%s", n, len(lines), out)
	}
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{marker, root, thread, "git status", "a.txt"} {
		if bytes.Contains(raw, []byte(leak)) {
			t.Errorf("usage log contains %q:\n%s", leak, raw)
		}
	}
	type rec struct {
		Tool, Action, Category, Session string
		Batch                           int
	}
	var got []rec
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		var r usage.Record // reads the Winx shape the log is written in
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("usage line %q: %v", sc.Text(), err)
		}
		got = append(got, rec{Tool: r.Tool, Action: r.Action, Category: r.Category, Session: r.Session, Batch: r.Batch})
	}
	want := []rec{
		{Tool: "Initialize", Session: "created"},
		{Tool: "Initialize", Session: "reused"},
		{Tool: "BashCommand", Action: "command", Category: "vcs"},
		{Tool: "BashCommand", Action: "command", Category: "test"},
		{Tool: "BashCommand", Action: "command", Category: "search"},
		{Tool: "BashCommand", Action: "command", Category: "edit"},
		{Tool: "BashCommand", Action: "command", Category: "other"},
		{Tool: "BashCommand", Action: "status_check"},
		{Tool: "ReadFiles", Batch: 3},
		{Tool: "EditFiles", Batch: 2},
	}
	// Calls over stdio run concurrently: the records are compared as a
	// multiset.
	count := map[rec]int{}
	for _, r := range want {
		count[r]++
	}
	for _, r := range got {
		count[r]--
	}
	for r, n := range count {
		if n != 0 {
			t.Errorf("record %+v: %d more than wanted in the log:\n%s", r, -n, raw)
		}
	}
	report, err := exec.Command(bin, "report", "--log", logPath).CombinedOutput()
	if err != nil || !strings.Contains(string(report), "ReadFiles") {
		t.Errorf("winx report = %v\n%s", err, report)
	}

	// The guide's recipes on the usage log.
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed: the guide's recipes are not run")
	}
	guide, err := os.ReadFile("../../docs/deployment.md")
	if err != nil {
		t.Fatal(err)
	}
	const guidePath = "~/.local/state/winx/usage.jsonl"
	recipes := 0
	for line := range strings.Lines(string(guide)) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "jq ") || !strings.Contains(line, guidePath) {
			continue
		}
		recipes++
		out, err := exec.Command("sh", "-c", strings.ReplaceAll(line, guidePath, logPath)).CombinedOutput()
		if err != nil || len(bytes.TrimSpace(out)) == 0 {
			t.Errorf("recipe %s: %v\n%s", line, err, out)
		}
	}
	if recipes < 5 {
		t.Errorf("the guide has %d usage recipes, want one per field (at least 5)", recipes)
	}
}
