package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageLogHoldsNoSecrets drives the built binary over stdio with a
// command and a file carrying secrets, then checks the usage log has the
// calls but none of the secrets, and that `winx report` summarizes it.
func TestUsageLogHoldsNoSecrets(t *testing.T) {
	bin := buildWinx(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "usage.jsonl")
	root := t.TempDir()
	secrets := []string{"AKIAIOSFODNN7EXAMPLE", "hunter2-password-value", "echo-me-not"}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	call := func(id int, tool string, args map[string]any) string {
		a, _ := json.Marshal(args)
		return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + string(a) + `,` + meta + `}}`
	}
	thread := "usage_test"
	in := strings.Join([]string{
		call(1, "Initialize", map[string]any{"any_workspace_path": root, "thread_id": thread}),
		call(2, "BashCommand", map[string]any{"command": "echo " + secrets[0] + " " + secrets[2] + "; export P=" + secrets[1], "thread_id": thread, "workspace_root": root}),
		call(3, "BashCommand", map[string]any{"command": "echo " + secrets[0] + " " + secrets[2] + "; export P=" + secrets[1], "thread_id": thread, "workspace_root": root}),
	}, "\n") + "\n"
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "WINX_USAGE_LOG="+logPath, "HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("winx: %v", err)
	}
	if n := bytes.Count(out, []byte("\n")); n != 3 {
		t.Fatalf("winx answered %d lines, want 3:\n%s", n, out)
	}
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(logPath); st.Mode().Perm() != 0o600 {
		t.Errorf("usage log mode %v, want 0600", st.Mode().Perm())
	}
	for _, s := range append(secrets, thread, root) {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("usage log contains %q:\n%s", s, raw)
		}
	}
	if got := bytes.Count(raw, []byte(`"tool":"BashCommand"`)); got != 2 {
		t.Errorf("usage log has %d BashCommand records, want 2:\n%s", got, raw)
	}
	report, err := exec.Command(bin, "report", "--log", logPath).CombinedOutput()
	if err != nil || !strings.Contains(string(report), "BashCommand") {
		t.Errorf("winx report = %v\n%s", err, report)
	}
}
