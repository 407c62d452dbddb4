package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitializeNamesSlowShellStartup: a new session whose rc file is slow
// names it in the answer, text and data; an empty rc file gives neither.
// Only "the note is there when the rc sleeps 0.4 s" is asserted of time:
// the measured start-up is anything from 300 ms.
func TestInitializeNamesSlowShellStartup(t *testing.T) {
	for _, tc := range []struct {
		name, rc string
		slow     bool
	}{
		{"empty rc", "", false},
		{"rc sleeps 0.4 s", "sleep 0.4\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte(tc.rc), 0o600); err != nil {
				t.Fatal(err)
			}
			e := newBashEnv(t, home)
			// newBashEnv started the session; a second workspace is a
			// second new session whose answer this test reads.
			root := t.TempDir()
			r := e.call(InitializeTool, map[string]any{"any_workspace_path": root, "thread_id": "startup-" + strings.ReplaceAll(tc.name, " ", "-")})
			var data struct {
				Reattached     bool   `json:"reattached"`
				ShellStartupMS *int64 `json:"shell_startup_ms"`
			}
			if err := json.Unmarshal(r.Structured.Data, &data); err != nil || data.Reattached {
				t.Fatalf("Initialize = %+v (%v), want a new session", r.Structured, err)
			}
			text := output(r)
			if len(r.Content) > 0 {
				text = r.Content[0].Text
			}
			note := strings.Contains(text, "Your shell start-up (~/.bashrc) took ")
			if note != tc.slow {
				t.Errorf("note in the answer = %v, want %v:\n%s", note, tc.slow, text)
			}
			switch {
			case tc.slow && (data.ShellStartupMS == nil || *data.ShellStartupMS < 300):
				t.Errorf("shell_startup_ms = %v, want >= 300", data.ShellStartupMS)
			case !tc.slow && data.ShellStartupMS != nil:
				t.Errorf("shell_startup_ms = %d, want absent for a fast rc", *data.ShellStartupMS)
			}
			if tc.slow && !strings.Contains(text, "every new session pays it.") {
				t.Errorf("answer = %q, want the slow start-up named", text)
			}
		})
	}
}
