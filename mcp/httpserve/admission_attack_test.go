package httpserve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"winx/auth/admission"
	"winx/mcp"
)

// These tests play the attacks of finding 4 (one client locks out or
// starves the others) against a real listener.

const (
	aliceToken = "alice-0123456789abcdef0123456789abcdef"
	bobToken   = "bob-0123456789abcdef0123456789abcdef00"
)

// fakeAuthn knows two principals by token, and fails slowly like the real
// one.
type fakeAuthn struct{}

func (fakeAuthn) Authenticate(r *http.Request) (mcp.Caller, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer " + aliceToken:
		return mcp.Caller{Principal: "alice", Profile: mcp.FullProfile()}, nil
	case "Bearer " + bobToken:
		return mcp.Caller{Principal: "bob", Profile: mcp.FullProfile()}, nil
	}
	time.Sleep(BadAuthDelay)
	return mcp.Caller{}, mcp.ErrUnauthorized
}

func (fakeAuthn) Principals() int { return 2 }

func freePort(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// startServer runs Serve on a fresh loopback port until the test ends.
func startServer(t *testing.T, o *Options) string {
	t.Helper()
	o.Bind = "127.0.0.1:" + freePort(t)
	srv := mcp.NewServer(mcp.Implementation{Name: "admission-test", Version: "1"}, mcp.NewRegistry(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, srv, fakeAuthn{}, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(ShutdownGrace + 5*time.Second):
			t.Error("Serve did not return")
		}
	})
	base := "http://" + o.Bind
	waitHealthy(t, base)
	return base
}

func waitHealthy(t testing.TB, base string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not healthy", base)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"attack-test","version":"1"}}}}`

func mcpRequest(t testing.TB, base, token string, body io.Reader) *http.Request {
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	return req
}

func status(t testing.TB, c *http.Client, req *http.Request) int {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", req.URL, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Unauthenticated traffic from the loopback address spends its own
// allowance, never the one of a valid token from the same address.
func TestAttackFailedAuthDoesNotSpendTokenRate(t *testing.T) {
	base := startServer(t, &Options{Admission: admission.Options{MaxConcurrency: 32, RequestsPerMinute: 10}})
	var wg sync.WaitGroup
	codes := make(chan int, 40)
	for range 40 {
		wg.Go(func() {
			codes <- status(t, http.DefaultClient, mcpRequest(t, base, "wrong-token", strings.NewReader(discover)))
		})
	}
	wg.Wait()
	close(codes)
	seen := map[int]int{}
	for c := range codes {
		seen[c]++
	}
	if seen[http.StatusTooManyRequests] == 0 || seen[http.StatusUnauthorized] == 0 {
		t.Errorf("bad tokens = %v, want 401s and then 429s (failed authentication is still limited)", seen)
	}
	for i := range 5 {
		if c := status(t, http.DefaultClient, mcpRequest(t, base, aliceToken, strings.NewReader(discover))); c != http.StatusOK {
			t.Fatalf("valid token request %d after unauthenticated flood = %d, want 200", i, c)
		}
	}
}

// slowBody sends the headers and a few bytes of a large body, then stalls.
func slowBody(t *testing.T, base, token string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n"+
		"Mcp-Method: server/discover\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\":", token)
	return conn, bufio.NewReader(conn)
}

// A body sent too slowly answers 408 at --request-timeout and frees its
// slot.
func TestAttackSlowBodyTimesOut(t *testing.T) {
	base := startServer(t, &Options{Admission: admission.Options{MaxConcurrency: 1, RequestTimeout: 500 * time.Millisecond}})
	conn, br := slowBody(t, base, aliceToken)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("slow body: no answer within 5 s (%v), want 408 at the request timeout", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("slow body = %d, want 408", resp.StatusCode)
	}
	if c := status(t, http.DefaultClient, mcpRequest(t, base, aliceToken, strings.NewReader(discover))); c != http.StatusOK {
		t.Errorf("request after the slow body = %d, want 200 (slot freed)", c)
	}
}

// One principal holding slots (slow bodies here; subscription streams take
// slots the same way) cannot take more than its share: another principal
// still gets in.
func TestAttackPrincipalConcurrencyShare(t *testing.T) {
	base := startServer(t, &Options{Admission: admission.Options{MaxConcurrency: 4}})
	for range 4 {
		slowBody(t, base, aliceToken)
	}
	time.Sleep(200 * time.Millisecond)
	if c := status(t, http.DefaultClient, mcpRequest(t, base, bobToken, strings.NewReader(discover))); c != http.StatusOK {
		t.Errorf("bob while alice holds slots = %d, want 200", c)
	}
}

// bodyEnv makes the test binary a winx HTTP server for the RSS test.
const bodyEnv = "WINX_HTTPSERVE_TEST_CHILD"

func TestMain(m *testing.M) {
	if bind := os.Getenv(bodyEnv); bind != "" {
		srv := mcp.NewServer(mcp.Implementation{Name: "rss-test", Version: "1"}, mcp.NewRegistry(), nil)
		err := Serve(context.Background(), srv, fakeAuthn{}, &Options{
			Bind: bind, MaxBodyBytes: mcp.DefaultMaxBodyBytes,
			Admission: admission.Options{MaxConcurrency: 32, RequestTimeout: 120 * time.Second},
		})
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// vmHWM is the peak resident set of pid in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// paddedBody is a valid request of n bytes.
type paddedBody struct {
	head, tail string
	pad, off   int
}

func newPaddedBody(n int) *paddedBody {
	head := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"pad":"`
	tail := `"}}`
	return &paddedBody{head: head, tail: tail, pad: n - len(head) - len(tail)}
}

func (p *paddedBody) Read(b []byte) (int, error) {
	total := len(p.head) + p.pad + len(p.tail)
	if p.off >= total {
		return 0, io.EOF
	}
	n := 0
	for n < len(b) && p.off < total {
		switch {
		case p.off < len(p.head):
			b[n] = p.head[p.off]
		case p.off < len(p.head)+p.pad:
			b[n] = 'x'
		default:
			b[n] = p.tail[p.off-len(p.head)-p.pad]
		}
		n++
		p.off++
	}
	return n, nil
}

// 32 concurrent authenticated 60 MiB bodies keep the server's peak RSS
// under 512 MiB: body bytes buffered across requests have one bound.
func TestAttackLargeBodiesBoundRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 2 GB")
	}
	bind := "127.0.0.1:" + freePort(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), bodyEnv+"="+bind)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := "http://" + bind
	waitHealthy(t, base)
	const size = 60 << 20
	client := &http.Client{Timeout: 60 * time.Second}
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 32 {
		wg.Go(func() {
			req := mcpRequest(t, base, aliceToken, newPaddedBody(size))
			req.ContentLength = size
			resp, err := client.Do(req)
			code := -1
			if err == nil {
				code = resp.StatusCode
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	hwm := vmHWM(t, cmd.Process.Pid)
	t.Logf("answers %v, peak RSS %d MiB", codes, hwm>>20)
	if codes[http.StatusOK] == 0 {
		t.Errorf("no large body was served: %v", codes)
	}
	if hwm > 512<<20 {
		t.Errorf("peak RSS %d MiB under 32 x 60 MiB bodies, want under 512 MiB", hwm>>20)
	}
}

// One principal cannot take every legacy session: past its share (half)
// its Initialize gets 503 while another principal still gets a session.
func TestAttackPrincipalSessionShare(t *testing.T) {
	base := startServer(t, &Options{Admission: admission.Options{MaxConcurrency: 32}})
	initialize := func(token string) int {
		req := mcpRequest(t, base, token, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Del("MCP-Protocol-Version")
		req.Header.Del("Mcp-Method")
		return status(t, http.DefaultClient, req)
	}
	refused := 0
	for range mcp.DefaultMaxSessions {
		if initialize(aliceToken) != http.StatusOK {
			refused++
		}
	}
	if want := mcp.DefaultMaxSessions / 2; refused != want {
		t.Errorf("alice refused %d of %d sessions, want %d (her share is half)", refused, mcp.DefaultMaxSessions, want)
	}
	if c := initialize(bobToken); c != http.StatusOK {
		t.Errorf("bob's initialize after alice's flood = %d, want 200", c)
	}
}
