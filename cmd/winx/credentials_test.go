package main

// Credentials must not reach sessions (security finding 2): not through the
// shell's environment, not through the file tools, not through /proc.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const (
	bobEnvToken  = "bob-env-token-0123456789abcdefghijklmnopqrs"
	readerToken  = "reader-token-0123456789abcdefghijklmnopqrstu"
	bobTokenEnv  = "WINX_TEST_BOB_TOKEN"
	bobTokenCopy = "WINX_TEST_SOMETHING_ELSE" // the same token under a name no config mentions
)

// structured returns a tools/call answer's structuredContent.
func structured(m map[string]any) map[string]any {
	res, _ := m["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	return sc
}

// shellOutput runs command in a fresh session of token's principal at root
// and returns its output.
func shellOutput(t *testing.T, s *runningServe, token, root, command string) string {
	t.Helper()
	callAs(t, s, token, "Initialize", map[string]any{"any_workspace_path": root, "thread_id": "creds"})
	m := callAs(t, s, token, "BashCommand", map[string]any{"command": command, "thread_id": "creds", "workspace_root": root})
	out, _ := structured(m)["output"].(string)
	if out == "" {
		t.Fatalf("BashCommand %q: no output: %v", command, m)
	}
	return out
}

// envProbe prints the names of the shell's variables and counts the
// variables whose value is the given credential (grep -c of a fixed piece
// of it, so no redaction can hide a hit).
func envProbe(piece string) string {
	return "echo NAMES: $(env | cut -d= -f1 | sort | tr '\\n' ' '); echo HITS: $(env | grep -c -- '" + piece + "')"
}

// TestShellEnvHasNoPrincipalTokens is finding 2(a): a principal's shell
// printed every principal's token_env variable.
func TestShellEnvHasNoPrincipalTokens(t *testing.T) {
	t.Setenv(bobTokenEnv, bobEnvToken)
	t.Setenv(bobTokenCopy, bobEnvToken)
	cfg := writePrincipals(t, "\n[[principals]]\nname = \"bob-env\"\ntoken_env = \""+bobTokenEnv+"\"\ntool_profile = \"terminal\"\n")
	s := serveWith(t, "--principal-config", cfg)
	out := shellOutput(t, s, codingToken, t.TempDir(), envProbe(bobEnvToken[:20]))
	if strings.Contains(out, bobTokenEnv) || strings.Contains(out, bobTokenCopy) || !strings.Contains(out, "HITS: 0") {
		t.Errorf("alice's shell sees bob's token:\n%s", out)
	}
	if !strings.Contains(out, "PATH") {
		t.Errorf("the shell lost its ordinary environment:\n%s", out)
	}
}

// TestShellEnvHasNoHTTPToken: the single-token server's WINX_HTTP_TOKEN,
// under its own name or copied to another, never reaches a shell.
func TestShellEnvHasNoHTTPToken(t *testing.T) {
	t.Setenv("WINX_HTTP_TOKEN", serveTestToken)
	t.Setenv(bobTokenCopy, serveTestToken)
	s := serveWith(t)
	out := shellOutput(t, s, serveTestToken, t.TempDir(), envProbe(serveTestToken[:20]))
	if strings.Contains(out, "WINX_HTTP_TOKEN") || strings.Contains(out, bobTokenCopy) || !strings.Contains(out, "HITS: 0") {
		t.Errorf("the shell sees the server's token:\n%s", out)
	}
}

// TestFileToolsRefuseCredentials is finding 2(b): a read-only principal
// Initialized the directory of the principal file and read another
// principal's token with ReadFiles. Every spelling is tried: absolute,
// relative, through "..", through a symlink planted in its own workspace,
// as an initial file of Initialize, and the principal file itself.
func TestFileToolsRefuseCredentials(t *testing.T) {
	cfg := writePrincipals(t, "\n[[principals]]\nname = \"reader\"\ntoken_file = \"reader.tok\"\ntool_profile = \"read-only\"\n")
	dir := filepath.Dir(cfg)
	if err := os.WriteFile(filepath.Join(dir, "reader.tok"), []byte(readerToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A harmless file beside them: the directory itself stays readable.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("plain notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "coding.tok"), filepath.Join(ws, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A guideline file that is a link to a token: the overview must not
	// show it either.
	if err := os.Symlink("coding.tok", filepath.Join(dir, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	s := serveWith(t, "--principal-config", cfg)

	secrets := []string{codingToken[:20], terminalToken[:20], "[[principals]]"}
	leaks := func(m map[string]any) bool {
		b, _ := json.Marshal(m)
		for _, sec := range secrets {
			if strings.Contains(string(b), sec) {
				return true
			}
		}
		return false
	}

	// Initialize the directory holding the credentials; initial files too.
	m := callAs(t, s, readerToken, "Initialize", map[string]any{"any_workspace_path": dir, "thread_id": "r1",
		"initial_files_to_read": []string{"coding.tok", filepath.Join(dir, "principals.toml"), "notes.txt"}})
	if leaks(m) {
		t.Errorf("Initialize showed a credential: %v", m)
	}
	if b, _ := json.Marshal(m); !strings.Contains(string(b), "plain notes") {
		t.Errorf("Initialize did not show an ordinary initial file: %v", m)
	}
	for _, p := range []string{
		filepath.Join(dir, "coding.tok"),
		"terminal.tok",
		"./sub/../principals.toml",
		filepath.Join(dir, "principals.toml"),
		filepath.Join(dir, ".", "coding.tok"),
	} {
		m := callAs(t, s, readerToken, "ReadFiles", map[string]any{"file_paths": []string{p}, "thread_id": "r1", "workspace_root": dir})
		if leaks(m) {
			t.Errorf("ReadFiles %s leaked a credential: %v", p, m)
		}
		if b, _ := json.Marshal(m); !strings.Contains(string(b), "credential or state path") {
			t.Errorf("ReadFiles %s: want a structured refusal naming the protected path, got %v", p, m)
		}
	}
	// Through a symlink in an ordinary workspace.
	callAs(t, s, readerToken, "Initialize", map[string]any{"any_workspace_path": ws, "thread_id": "r2",
		"initial_files_to_read": []string{"innocent.txt"}})
	m = callAs(t, s, readerToken, "ReadFiles", map[string]any{"file_paths": []string{"innocent.txt"}, "thread_id": "r2", "workspace_root": ws})
	if leaks(m) {
		t.Errorf("ReadFiles through a symlink leaked a credential: %v", m)
	}
	// The ordinary file beside the credentials is still readable.
	m = callAs(t, s, readerToken, "ReadFiles", map[string]any{"file_paths": []string{"notes.txt"}, "thread_id": "r1", "workspace_root": dir})
	if b, _ := json.Marshal(m); !strings.Contains(string(b), "plain notes") {
		t.Errorf("ReadFiles of an ordinary file: %v", m)
	}
	// The state directory (every principal's saved contexts and receipts).
	state := filepath.Join(os.Getenv("XDG_STATE_HOME"), "winx")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "probe.txt"), []byte(codingToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	callAs(t, s, readerToken, "Initialize", map[string]any{"any_workspace_path": state, "thread_id": "r3"})
	m = callAs(t, s, readerToken, "ReadFiles", map[string]any{"file_paths": []string{"probe.txt"}, "thread_id": "r3", "workspace_root": state})
	if leaks(m) {
		t.Errorf("ReadFiles in the state directory leaked: %v", m)
	}
	// The server's own /proc directory: its environment and memory.
	callAs(t, s, readerToken, "Initialize", map[string]any{"any_workspace_path": "/proc/self", "thread_id": "r4"})
	self := "/proc/" + strconv.Itoa(os.Getpid())
	for _, p := range []string{"/proc/self/environ", self + "/environ", "/proc/thread-self/environ", "/dev/fd/../environ", self + "/task/" + strconv.Itoa(os.Getpid()) + "/environ"} {
		m = callAs(t, s, readerToken, "ReadFiles", map[string]any{"file_paths": []string{p}, "thread_id": "r4", "workspace_root": "/proc/self"})
		if b, _ := json.Marshal(m); strings.Contains(string(b), "XDG_STATE_HOME") || !strings.Contains(string(b), "credential or state path") {
			t.Errorf("ReadFiles %s: want a refusal, got %v", p, m)
		}
	}
}
