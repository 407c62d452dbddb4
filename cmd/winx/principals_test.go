package main

import (
	"errors"

	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/auth"
)

const (
	codingToken   = "coding-token-0123456789abcdefghijklmnopqrstuv"
	terminalToken = "terminal-token-0123456789abcdefghijklmnopqrst"
)

func writePrincipals(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	for name, tok := range map[string]string{"coding.tok": codingToken, "terminal.tok": terminalToken} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := `# two callers
[[principals]]
name = "alice"
token_file = "coding.tok"
tool_profile = "coding"

[[principals]]
name = "bob"
token_file = "terminal.tok"
tool_profile = "terminal"
` + extra
	path := filepath.Join(dir, "principals.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serveWith starts winx serve --http with the given flags (no token file).
func serveWith(t *testing.T, extra ...string) *runningServe {
	t.Helper()
	args := append([]string{"serve", "--http", "--bind", "127.0.0.1:0", "--requests-per-minute", "0"}, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	s := &runningServe{cancel: cancel, done: make(chan error, 1),
		stderr: &syncBuffer{}, client: &http.Client{Timeout: 20 * time.Second}}
	go func() { s.done <- run(ctx, args, strings.NewReader(""), io.Discard, s.stderr) }()
	t.Cleanup(func() { s.stop() })
	s.setAddr(servingAddr(t, s.stderr, s.done))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err := s.client.Get(s.base + "/healthz"); err == nil {
			resp.Body.Close()
			return s
		}
	}
	t.Fatalf("not serving; stderr: %s", s.stderr)
	return nil
}

func toolsFor(t *testing.T, s *runningServe, token string) []string {
	t.Helper()
	h := discoverHeader("Bearer " + token)
	h.Set("Mcp-Method", "tools/list")
	resp, body := s.post(t, h, strings.Replace(discoverBody, "server/discover", "tools/list", 1))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/list = %d %s", resp.StatusCode, body)
	}
	var r struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	json.Unmarshal(body, &r)
	var names []string
	for _, tool := range r.Result.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func callAs(t *testing.T, s *runningServe, token, tool string, args map[string]any) map[string]any {
	t.Helper()
	h := callHeader(tool)
	h.Set("Authorization", "Bearer "+token)
	resp, body := s.post(t, h, callBody(7, tool, args))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s = %d %s", tool, resp.StatusCode, body)
	}
	var m map[string]any
	json.Unmarshal(body, &m)
	return m
}

func TestPrincipalsIsolation(t *testing.T) {
	s := serveWith(t, "--principal-config", writePrincipals(t, ""))
	if got := strings.Join(toolsFor(t, s, codingToken), ","); got != "Initialize,BashCommand,ReadFiles,EditFiles,CodeMap" {
		t.Errorf("coding tools = %s", got)
	}
	if got := strings.Join(toolsFor(t, s, terminalToken), ","); got != "Initialize,BashCommand" {
		t.Errorf("terminal tools = %s", got)
	}
	// A tool outside the profile is denied even by name, aliases included.
	for _, tool := range []string{"ReadFiles", "FileWriteOrEdit"} {
		if m := callAs(t, s, terminalToken, tool, map[string]any{}); m["error"] == nil {
			t.Errorf("terminal calling %s = %v, want an error", tool, m)
		}
	}
	// The same thread id from both principals: two shells.
	root := t.TempDir()
	pids := map[string]string{}
	for who, tok := range map[string]string{"alice": codingToken, "bob": terminalToken} {
		callAs(t, s, tok, "Initialize", map[string]any{"any_workspace_path": root, "thread_id": "shared"})
		m := callAs(t, s, tok, "BashCommand", map[string]any{"command": "echo $$", "thread_id": "shared", "workspace_root": root})
		res, _ := m["result"].(map[string]any)
		sc, _ := res["structuredContent"].(map[string]any)
		out, _ := sc["output"].(string)
		pids[who] = strings.SplitN(out, "\n", 2)[0]
	}
	if pids["alice"] == "" || pids["alice"] == pids["bob"] {
		t.Errorf("shell pids = %v, want two different shells", pids)
	}
}

func TestPrincipalsConfigRefusedAtStart(t *testing.T) {
	t.Setenv("WINX_TEST_CAROL_TOKEN", "carol-token-0123456789abcdefghijklmnopqrstu")
	cases := map[string]func(t *testing.T) []string{
		"unknown tool": func(t *testing.T) []string {
			return []string{"--principal-config", writePrincipals(t, "\n[[principals]]\nname = \"carol\"\ntoken_env = \"WINX_TEST_CAROL_TOKEN\"\nallowed_tools = [\"Nope\"]\n")}
		},
		"malformed toml": func(t *testing.T) []string {
			return []string{"--principal-config", writePrincipals(t, "\n[[principals]\n")}
		},
		"two sources": func(t *testing.T) []string {
			return []string{"--principal-config", writePrincipals(t, ""), "--token", codingToken}
		},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			err := run(context.Background(), append([]string{"serve", "--http", "--bind", "127.0.0.1:0"}, args(t)...),
				strings.NewReader(""), io.Discard, io.Discard)
			if err == nil {
				t.Fatalf("start-up accepted a bad configuration")
			}
			if name == "unknown tool" && !errors.Is(err, auth.ErrUnknownTool) {
				t.Errorf("error = %v, want auth.ErrUnknownTool", err)
			}
		})
	}
}
