package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"winx/mcp"
	"winx/mcp/httpserve"
)

const bearer = "Bearer " + serveTestToken

func TestGuardRateLimit(t *testing.T) {
	s := startServe(t, "--requests-per-minute", "5")
	codes := map[int]int{}
	for i := 0; i < 8; i++ {
		resp, _ := s.post(t, discoverHeader(bearer), discoverBody)
		codes[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "1" {
			t.Errorf("429 without Retry-After: 1")
		}
	}
	if codes[http.StatusOK] != 5 || codes[http.StatusTooManyRequests] != 3 {
		t.Errorf("status counts = %v, want 5 x 200 and 3 x 429", codes)
	}
	// Health probes are outside the limit.
	if resp, err := s.client.Get(s.base + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("healthz under rate limit = %v, %v", resp, err)
	}
}

func TestGuardBadAuthIsDelayed(t *testing.T) {
	s := startServe(t)
	start := time.Now()
	resp, _ := s.post(t, discoverHeader("Bearer wrong-token-wrong-token-wrong-token"), discoverBody)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token = %d", resp.StatusCode)
	}
	if d := time.Since(start); d < httpserve.BadAuthDelay {
		t.Errorf("401 after %v, want at least %v", d, httpserve.BadAuthDelay)
	}
}

// TestGuardQueryTokenOnlyWhenAllowed: ?token= (the guide's name) and its
// alias ?access_token= authenticate only with --allow-query-token, and the
// token never reaches the operational log or the usage log.
func TestGuardQueryTokenOnlyWhenAllowed(t *testing.T) {
	for _, param := range []string{"token", "access_token"} {
		for _, allow := range []bool{false, true} {
			usageLog := filepath.Join(t.TempDir(), "usage.jsonl")
			t.Setenv("WINX_USAGE_LOG", usageLog)
			t.Setenv("WINX_LOG", "debug")
			var extra []string
			if allow {
				extra = []string{"--allow-query-token"}
			}
			s := startServe(t, extra...)
			req, _ := http.NewRequest(http.MethodPost, s.base+"/mcp?"+param+"="+serveTestToken, strings.NewReader(discoverBody))
			req.Header = discoverHeader("")
			resp, err := s.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := http.StatusUnauthorized
			if allow {
				want = http.StatusOK
			}
			if resp.StatusCode != want {
				t.Errorf("?%s= with allow=%v = %d, want %d", param, allow, resp.StatusCode, want)
			}
			s.client.CloseIdleConnections()
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
			logged := s.stderr.String()
			if !strings.Contains(logged, "/mcp") {
				t.Errorf("operational log has no request record:\n%s", logged)
			}
			if strings.Contains(logged, serveTestToken) {
				t.Errorf("operational log carries the query token:\n%s", logged)
			}
			if allow {
				b, err := os.ReadFile(usageLog)
				if err != nil {
					t.Fatalf("usage log: %v", err)
				}
				if len(b) == 0 || strings.Contains(string(b), serveTestToken) {
					t.Errorf("usage log empty or carries the query token:\n%s", b)
				}
			}
		}
	}
}

// initSession runs Initialize on a fresh workspace and returns thread id
// and root.
func initSession(t *testing.T, s *runningServe) (string, string) {
	t.Helper()
	root := t.TempDir()
	resp, body := s.post(t, callHeader("Initialize"), callBody(1, "Initialize", map[string]any{"any_workspace_path": root}))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Initialize = %d %s", resp.StatusCode, body)
	}
	var r struct {
		Result struct {
			StructuredContent struct {
				Data struct {
					ThreadID      string `json:"thread_id"`
					WorkspaceRoot string `json:"workspace_root"`
				} `json:"data"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	json.Unmarshal(body, &r)
	return r.Result.StructuredContent.Data.ThreadID, r.Result.StructuredContent.Data.WorkspaceRoot
}

func callHeader(tool string) http.Header {
	h := discoverHeader(bearer)
	h.Set("Mcp-Method", "tools/call")
	h.Set("Mcp-Name", tool)
	return h
}

func callBody(id int, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
		"name": tool, "arguments": args,
		"_meta": map[string]any{mcp.MetaProtocolVersion: mcp.Version20260728, mcp.MetaClientCapabilities: map[string]any{}},
	}})
	return string(b)
}

func TestGuardConcurrencyAndTimeout(t *testing.T) {
	s := startServe(t, "--max-concurrency", "2", "--request-timeout", "1s", "--requests-per-minute", "0")
	thread, root := initSession(t, s)
	sleep := func(id int, secs float64) (int, []byte) {
		resp, body := s.post(t, callHeader("BashCommand"), callBody(id, "BashCommand", map[string]any{
			"action_json": map[string]any{"type": "command", "command": fmt.Sprintf("sleep %v", secs), "is_background": true},
			"thread_id":   thread, "workspace_root": root}))
		return resp.StatusCode, body
	}
	if code, body := sleep(2, 0.1); code != http.StatusOK {
		t.Fatalf("background start = %d %s", code, body)
	}
	// A foreground wait longer than the request timeout gets 408.
	resp, body := s.post(t, callHeader("BashCommand"), callBody(3, "BashCommand", map[string]any{
		"action_json":      map[string]any{"type": "command", "command": "sleep 5"},
		"wait_for_seconds": 3, "thread_id": thread, "workspace_root": root}))
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("call past the request timeout = %d %s, want 408", resp.StatusCode, body)
	}
	// Two open subscription streams hold both slots; a third request gets
	// 503 at once, and closing them frees the slots.
	a, b := openListen(t, s), openListen(t, s)
	resp, _ = s.post(t, discoverHeader(bearer), discoverBody)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("third concurrent request = %d, want 503 with Retry-After", resp.StatusCode)
	}
	a.Body.Close()
	b.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, _ := s.post(t, discoverHeader(bearer), discoverBody)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slots not freed after the streams closed: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestGuardDrainOnShutdown(t *testing.T) {
	s := startServe(t, "--requests-per-minute", "0")
	thread, root := initSession(t, s)
	type answer struct {
		code int
		body []byte
	}
	// The running call marks that it started and then waits on a FIFO, not
	// on the clock: it surely runs through the whole drain below.
	started, gate := filepath.Join(root, "started"), filepath.Join(root, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	long := make(chan answer, 1)
	go func() {
		resp, body := s.post(t, callHeader("BashCommand"), callBody(5, "BashCommand", map[string]any{
			"action_json": map[string]any{"type": "command", "command": ": > " + started + "; read -r _ < " + gate + "; echo finished"},
			"thread_id":   thread, "workspace_root": root}))
		long <- answer{resp.StatusCode, body}
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the long call's command never started")
		}
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	// The drain begins when stop has cancelled the server's context:
	// readyz turns 503 then, and must.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := s.client.Get(s.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz while draining = %v %v, want 503", resp, err)
		}
	}
	resp, _ := s.post(t, discoverHeader(bearer), discoverBody)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("new request while draining = %d, want 503", resp.StatusCode)
	}
	if err := os.WriteFile(gate, []byte("go\n"), 0); err != nil {
		t.Fatal(err)
	}
	a := <-long
	if a.code != http.StatusOK || !strings.Contains(string(a.body), "finished") {
		t.Errorf("the running call = %d %s, want it completed", a.code, a.body)
	}
	if err := <-stopped; err != nil {
		t.Errorf("run after drain = %v", err)
	}
}

// TestGuardBurst fires 500 concurrent requests at max-concurrency 32, half
// with a wrong token (each then holds its slot for the 100 ms bad-auth
// delay, so slots run out): valid requests get only 200 or 503, the server
// keeps serving, memory stays bounded and no goroutine is left.
func TestGuardBurst(t *testing.T) {
	before := runtime.NumGoroutine()
	s := startServe(t, "--max-concurrency", "32", "--requests-per-minute", "0")
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 500; i++ {
		valid := i%2 == 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(discoverBody))
			req.Header = discoverHeader("Bearer wrong-token-wrong-token-wrong-token")
			if valid {
				req.Header = discoverHeader(bearer)
			}
			resp, err := client.Do(req)
			code := -1
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				code = resp.StatusCode
			}
			if !valid {
				if code != http.StatusUnauthorized && code != http.StatusServiceUnavailable {
					t.Errorf("invalid token answered %d", code)
				}
				return
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	client.CloseIdleConnections()
	for code, n := range codes {
		if code != http.StatusOK && code != http.StatusServiceUnavailable {
			t.Errorf("%d answers with status %d, want only 200 and 503 (%v)", n, code, codes)
		}
	}
	if codes[http.StatusOK] == 0 {
		t.Errorf("no request succeeded: %v", codes)
	}
	if resp, _ := s.post(t, discoverHeader(bearer), discoverBody); resp.StatusCode != http.StatusOK {
		t.Errorf("after the burst = %d", resp.StatusCode)
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.HeapInuse > 256<<20 {
		t.Errorf("heap in use %d MiB after the burst", m.HeapInuse>>20)
	}
	s.client.CloseIdleConnections()
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 {
		if time.Now().After(deadline) {
			t.Errorf("goroutines: %d before, %d after the server stopped", before, runtime.NumGoroutine())
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("status counts: %v", codes)
}

func TestGuardBodyLimit(t *testing.T) {
	s := startServe(t, "--max-body-bytes", "1024")
	resp, _ := s.post(t, discoverHeader(bearer), strings.Replace(discoverBody, "http-test", strings.Repeat("x", 2048), 1))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("2 KiB body with a 1 KiB limit = %d, want 413", resp.StatusCode)
	}
	if resp, _ := s.post(t, discoverHeader(bearer), discoverBody); resp.StatusCode != http.StatusOK {
		t.Errorf("after the 413 = %d, want the server serving", resp.StatusCode)
	}
}
