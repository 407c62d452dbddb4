package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"winx/mcp/usage"
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

// TestUsageArgsDigestKeyed: the usage log's argsDigest is keyed by a secret
// of the installation, so a reader of the log cannot confirm guessed
// arguments by hashing them. One call with the same arguments, written by
// two runs on one state directory and one run on another: the first two
// agree (a repeated rejected call is still seen), the third differs. The
// key file is 0600 in a 0700 directory; a key file that is a symbolic link
// or readable by others refuses the server, and no log is written.
func TestUsageArgsDigestKeyed(t *testing.T) {
	bin := buildWinx(t)
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ReadFiles","arguments":{"file_paths":["/nonexistent/guessable.txt"]},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n"
	run := func(stateHome string) (digest, stderr string, err error) {
		logPath := filepath.Join(t.TempDir(), "usage.jsonl")
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "WINX_USAGE_LOG="+logPath, "HOME="+t.TempDir(), "XDG_STATE_HOME="+stateHome)
		cmd.Stdin = strings.NewReader(line)
		var errBuf bytes.Buffer
		cmd.Stderr = &errBuf
		if _, err := cmd.Output(); err != nil {
			if _, serr := os.Stat(logPath); serr == nil {
				t.Errorf("a refused server wrote its usage log")
			}
			return "", errBuf.String(), err
		}
		raw, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		var rec usage.Record
		if err := json.Unmarshal(raw, &rec); err != nil || len(rec.ArgsDigest) != 16 {
			t.Fatalf("usage log %q: argsDigest %q (%v), want 16 hex digits", raw, rec.ArgsDigest, err)
		}
		return rec.ArgsDigest, errBuf.String(), nil
	}
	stateA, stateB := t.TempDir(), t.TempDir()
	a1, _, err1 := run(stateA)
	a2, _, err2 := run(stateA)
	b, _, err3 := run(stateB)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatalf("winx: %v", err)
	}
	if a1 != a2 {
		t.Errorf("one installation digests one call twice as %s and %s, want one digest", a1, a2)
	}
	if a1 == b {
		t.Errorf("two installations digest one call alike (%s): the digest is not keyed", a1)
	}
	key := filepath.Join(stateA, "winx", "usage-args-key")
	if fi, err := os.Lstat(key); err != nil {
		t.Fatalf("no key file: %v", err)
	} else if fi.Mode() != 0o600 {
		t.Errorf("key file %s is %v, want a regular 0600 file", key, fi.Mode())
	}
	if fi, err := os.Stat(filepath.Dir(key)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory: %v; want 0700", err)
	}

	good, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		plant      func(path string) error
	}{
		{"readable by others", "mode 0644", func(path string) error {
			if err := os.WriteFile(path, good, 0o600); err != nil {
				return err
			}
			return os.Chmod(path, 0o644)
		}},
		{"symbolic link", "symbolic link", func(path string) error { return os.Symlink(key, path) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			path := filepath.Join(state, "winx", "usage-args-key")
			if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := tc.plant(path); err != nil {
				t.Fatal(err)
			}
			_, stderr, err := run(state)
			if err == nil || !strings.Contains(stderr, path) || !strings.Contains(stderr, tc.want) {
				t.Errorf("winx with a bad key file: %v, stderr %q; want a refusal naming %s and %q", err, stderr, path, tc.want)
			}
		})
	}
}
