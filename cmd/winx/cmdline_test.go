package main

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"winx/pty/testenv"
)

// TestTokenLeavesCommandLine: a token given as --token must not stay in
// /proc/PID/cmdline, which every local user and every session shell reads,
// once the server has started.
func TestTokenLeavesCommandLine(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		testenv.Missing(t, "no /proc on this system")
	}
	token := strings.Repeat("c0ffee", 8)
	cmd := exec.Command(buildWinx(t), "serve", "--http", "--bind", "127.0.0.1:0", "--token="+token)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := servingAddr(t, &stderr, nil)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not answer /healthz; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	line, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(line, []byte(token)) {
		t.Errorf("/proc/PID/cmdline still shows the token: %q", line)
	}
	if !bytes.Contains(line, []byte("--token=")) {
		t.Errorf("/proc/PID/cmdline = %q, want the flag kept with its value blanked", line)
	}
	// The server still authenticates with the token it kept in memory.
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		t.Errorf("ping with the token = %d, want it authenticated", resp.StatusCode)
	}
}
