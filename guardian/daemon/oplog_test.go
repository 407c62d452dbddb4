package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/guardian/wire"
)

// TestWinxdLogsEachRequest runs the built winxd with WINX_LOG_FORMAT=json:
// every call it answers is one JSON object in its log file naming the
// method, a hash of the key and principal, the outcome, duration and size,
// and nothing of the parameters: no workspace path, no principal name, no
// environment value.
func TestWinxdLogsEachRequest(t *testing.T) {
	// Every directory a guardian or its shell may write in is made before
	// socketDir, whose cleanup (ending them) then runs before theirs.
	state := t.TempDir()
	work := filepath.Join(t.TempDir(), "workspace-marker-7c1f")
	daemonEnv, shellEnv := testEnv(t), testEnv(t)
	dir := socketDir(t)
	writeSecret(t, state)
	socket := filepath.Join(dir, wire.DaemonSocketName)
	hello := wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)
	env := append(daemonEnv, "XDG_STATE_HOME="+state, "WINX_GUARDIAN_BIN="+filepath.Join(bins, "winx-guardian"), "WINX_LOG_FORMAT=json")
	c, _, err := Connect(t.Context(), socket, hello, &StartOptions{Bin: filepath.Join(bins, "winxd"), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	const secretValue = "env-secret-value-93ab"
	const principal = "principal-name-d40e"
	key := SessionKey{ExternalID: "ws_w_00000001", Principal: principal, Workspace: work}.String()
	params := &EnsureParams{Key: key, Dir: work, Workspace: work, Env: append(shellEnv, "API_TOKEN="+secretValue)}
	if _, err := c.Ensure(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ensure(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.List(t.Context()); err != nil {
		t.Fatal(err)
	}
	// A refused ensure: its relative directory must not be logged either.
	if _, err := c.Ensure(t.Context(), &EnsureParams{Key: key, Dir: "relative-marker-55e2"}); err == nil {
		t.Fatal("Ensure with a relative dir succeeded")
	}
	if _, err := c.Shutdown(t.Context(), "test over"); err != nil {
		t.Fatal(err)
	}
	var data []byte
	logPath := filepath.Join(state, "winx", LogFileName)
	for range 2000 {
		// The shutdown's record is written once its answer is sent.
		data, err = os.ReadFile(logPath)
		if err == nil && bytes.Count(data, []byte(`"daemon_call"`)) >= 5 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var calls []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line is not one JSON object: %q: %v", sc.Text(), err)
		}
		if rec["msg"] == "daemon_call" {
			calls = append(calls, rec)
		}
	}
	for _, leak := range []string{work, "workspace-marker-7c1f", secretValue, principal, "relative-marker-55e2", "ws_w_00000001"} {
		if strings.Contains(string(data), leak) {
			t.Errorf("the log holds %q:\n%s", leak, data)
		}
	}
	want := []struct{ method, outcome string }{
		{MethodEnsure, OutcomeSpawned},
		{MethodEnsure, OutcomeReused},
		{MethodList, OutcomeOK},
		{MethodEnsure, OutcomeError},
		{MethodShutdown, OutcomeOK},
	}
	if len(calls) != len(want) {
		t.Fatalf("%d daemon_call records, want %d:\n%s", len(calls), len(want), data)
	}
	for i, w := range want {
		r := calls[i]
		if r["method"] != w.method || r["outcome"] != w.outcome || r["peer"] != wire.RoleAdapter {
			t.Errorf("record %d = %v; want method %s outcome %s peer %s", i, r, w.method, w.outcome, wire.RoleAdapter)
		}
		if _, ok := r["duration_ms"].(float64); !ok {
			t.Errorf("record %d has no duration: %v", i, r)
		}
		if w.method == MethodEnsure {
			if k, _ := r["key"].(string); len(k) != 12 {
				t.Errorf("record %d key hash = %q", i, k)
			}
			if p, _ := r["principal"].(string); len(p) != 12 {
				t.Errorf("record %d principal hash = %q", i, p)
			}
		}
		if w.outcome == OutcomeError {
			if code, _ := r["code"].(float64); int64(code) != CodeRequest {
				t.Errorf("record %d code = %v, want %d", i, r["code"], CodeRequest)
			}
		} else if b, _ := r["bytes"].(float64); b <= 0 {
			t.Errorf("record %d bytes = %v", i, r["bytes"])
		}
	}
}
