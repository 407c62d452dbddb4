package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"winx/mcp"
	"winx/mcp/mcptest"
	"winx/mcp/tools"
)

// TestDaemonNamesSlowShellStartup: the guardian measures its shell's
// start-up (spawn to first ready prompt) and reports it over the wire, so
// a new session of the daemon runtime names a slow rc file in its
// Initialize answer as the embedded runtime does. Of time only "the note
// is there when the rc sleeps 0.4 s" is asserted.
func TestDaemonNamesSlowShellStartup(t *testing.T) {
	rt := newDaemonRuntime(t)
	home := ""
	for _, kv := range rt.opts.BaseEnv {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("sleep 0.4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry(tools.Options{Build: "test", Transport: "http", Sessions: rt.sessions(t), ScratchRoot: t.TempDir(), StateDir: t.TempDir()})
	srv := mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, reg, nil)
	client := &mcptest.Client{Handler: mcp.NewHTTPHandler(srv, &mcp.HTTPOptions{Auth: principalAuth("p")})}
	resp, err := client.Call(context.Background(), "tools/call", map[string]any{"name": tools.InitializeTool, "arguments": map[string]any{"any_workspace_path": t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Structured struct {
			Data struct {
				Reattached     bool   `json:"reattached"`
				ShellStartupMS *int64 `json:"shell_startup_ms"`
			} `json:"data"`
		} `json:"structuredContent"`
	}
	if err := resp.Decode(&r); err != nil || len(r.Content) == 0 {
		t.Fatalf("decode: %v", err)
	}
	d := r.Structured.Data
	if d.Reattached || d.ShellStartupMS == nil || *d.ShellStartupMS < 300 {
		t.Errorf("data: reattached %v, shell_startup_ms %v; want a new session with shell_startup_ms >= 300", d.Reattached, d.ShellStartupMS)
	}
	if text := r.Content[0].Text; !strings.Contains(text, "Your shell start-up (~/.bashrc) took ") || !strings.Contains(text, "every new session pays it.") {
		t.Errorf("answer = %q, want the slow start-up named", text)
	}
}
