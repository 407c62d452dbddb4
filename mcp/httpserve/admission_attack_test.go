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

// listenLoopback is a listener on a fresh loopback port, held from here on:
// Serve takes it, so no other process can take the port in between.
func listenLoopback(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// startServer runs Serve on a fresh loopback port until the test ends.
func startServer(t *testing.T, o *Options) string {
	t.Helper()
	return startServerWith(t, o, mcp.NewRegistry())
}

// startServerWith is startServer with the tools of reg.
func startServerWith(t *testing.T, o *Options, reg *mcp.Registry) string {
	t.Helper()
	ln := listenLoopback(t)
	srv := mcp.NewServer(mcp.Implementation{Name: "admission-test", Version: "1"}, reg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, srv, fakeAuthn{}, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(ShutdownGrace + 5*time.Second):
			t.Error("Serve did not return")
		}
	})
	base := "http://" + ln.Addr().String()
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
	// Not a sleep: alice holds her share once a request of hers is refused.
	for deadline := time.Now().Add(20 * time.Second); status(t, http.DefaultClient, mcpRequest(t, base, aliceToken, strings.NewReader(discover))) != http.StatusServiceUnavailable; {
		if time.Now().After(deadline) {
			t.Fatal("alice's slow bodies never held her share of the slots")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c := status(t, http.DefaultClient, mcpRequest(t, base, bobToken, strings.NewReader(discover))); c != http.StatusOK {
		t.Errorf("bob while alice holds slots = %d, want 200", c)
	}
}

// bodyEnv makes the test binary a winx HTTP server for the RSS test.
const bodyEnv = "WINX_HTTPSERVE_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(bodyEnv) != "" {
		ln, err := net.FileListener(os.NewFile(3, "listener"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		srv := mcp.NewServer(mcp.Implementation{Name: "rss-test", Version: "1"}, mcp.NewRegistry(), nil)
		err = Serve(context.Background(), ln, srv, fakeAuthn{}, &Options{
			MaxBodyBytes: mcp.DefaultMaxBodyBytes,
			// The byte rate and the large-body slot are off: the test is
			// about the global budget under 32 bodies read at once.
			Admission: admission.Options{MaxConcurrency: 32, RequestTimeout: 120 * time.Second, BytesPerSecond: -1, HeavyBytes: -1},
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
	// The child serves the listener it inherits as fd 3.
	ln := listenLoopback(t)
	lf, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ln.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), bodyEnv+"=1")
	cmd.ExtraFiles = []*os.File{lf}
	cmd.Stderr = os.Stderr
	err = cmd.Start()
	lf.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
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

// rawPost sends the head of a POST /mcp declaring length bytes of body and
// then only the first prefix bytes of it, and returns the connection and a
// reader of the answer; the client is still "sending" the rest.
func rawPost(t *testing.T, base, token string, length int64, prefix string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n"+
		"Content-Length: %d\r\n\r\n%s", token, length, prefix)
	return conn, bufio.NewReader(conn)
}

// answerWithin reads the status and Retry-After of the answer on br, or
// fails the test when none comes within d (the server is reading the body).
func answerWithin(t *testing.T, conn net.Conn, br *bufio.Reader, d time.Duration) (int, string) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer within %v while the body is unsent: %v", d, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// postSized sends a valid body of n bytes as token and returns the status.
func postSized(t *testing.T, base, token string, n int) int {
	t.Helper()
	req := mcpRequest(t, base, token, newPaddedBody(n))
	req.ContentLength = int64(n)
	return status(t, &http.Client{Timeout: 30 * time.Second}, req)
}

// A principal that spent its byte burst is refused with 429 and a
// Retry-After that says when its bytes are back, before the server reads
// a byte of the body (the client has sent none of it and is still
// waiting); another principal's bytes are its own.
func TestAttackByteRateRefusedBeforeBody(t *testing.T) {
	base := startServer(t, &Options{Admission: admission.Options{
		MaxConcurrency: 32, BytesPerSecond: 1 << 20, BytesBurst: 16 << 20, RequestTimeout: time.Minute}})
	if c := postSized(t, base, aliceToken, 12<<20); c != http.StatusOK {
		t.Fatalf("alice's first 12 MiB body = %d, want 200 (within the burst)", c)
	}
	conn, br := rawPost(t, base, aliceToken, 12<<20, "")
	code, retry := answerWithin(t, conn, br, 10*time.Second)
	if code != http.StatusTooManyRequests {
		t.Errorf("alice's second 12 MiB body = %d, want 429", code)
	}
	if n, err := strconv.Atoi(retry); err != nil || n < 2 {
		t.Errorf("Retry-After = %q, want the seconds until 8 MiB refill at 1 MiB/s (several)", retry)
	}
	if c := postSized(t, base, bobToken, 12<<20); c != http.StatusOK {
		t.Errorf("bob's 12 MiB body while alice is out of bytes = %d, want 200", c)
	}
	// A chunked body spends as it is read and is cut when it runs out.
	req := mcpRequest(t, base, aliceToken, io.MultiReader(newPaddedBody(12<<20)))
	req.ContentLength = -1
	if c := status(t, &http.Client{Timeout: 30 * time.Second}, req); c != http.StatusTooManyRequests {
		t.Errorf("alice's chunked 12 MiB body = %d, want 429", c)
	}
}

// Requests that fail authentication spend their own, smaller byte
// allowance per IP: past it they get 429 with Retry-After before the body
// is read, and a valid principal from the same address is not refused.
func TestAttackUnauthenticatedByteAllowance(t *testing.T) {
	base := startServer(t, &Options{Admission: admission.Options{MaxConcurrency: 32}})
	codes := map[int]int{}
	var retry string
	for range 4 {
		conn, br := rawPost(t, base, "wrong-0123456789abcdef0123456789abcdef", 512<<10, "")
		code, ra := answerWithin(t, conn, br, 10*time.Second)
		codes[code]++
		if code == http.StatusTooManyRequests {
			retry = ra
		}
	}
	if codes[http.StatusUnauthorized] != 2 || codes[http.StatusTooManyRequests] != 2 {
		t.Errorf("four unauthenticated 512 KiB bodies = %v, want 2 x 401 then 2 x 429 (1 MiB allowance)", codes)
	}
	if n, err := strconv.Atoi(retry); err != nil || n < 1 {
		t.Errorf("Retry-After = %q, want whole seconds", retry)
	}
	if c := postSized(t, base, aliceToken, 2<<20); c != http.StatusOK {
		t.Errorf("alice's 2 MiB body from the same address = %d, want 200", c)
	}
}

// A principal's large bodies queue behind its own: while one of alice's
// is being read, her next large body waits for it (503 past HeavyWait),
// and bob's large body does not.
func TestAttackLargeBodiesQueuePerPrincipal(t *testing.T) {
	base := startServer(t, &Options{Admission: admission.Options{
		MaxConcurrency: 32, HeavyBytes: 1 << 20, HeavyWait: 500 * time.Millisecond, RequestTimeout: time.Minute}})
	slow, slowBr := rawPost(t, base, aliceToken, 2<<20, newPaddedBody(2<<20).head)
	if c := postSized(t, base, aliceToken, 2<<20); c != http.StatusServiceUnavailable {
		t.Errorf("alice's second large body while her first is read = %d, want 503", c)
	}
	if c := postSized(t, base, bobToken, 2<<20); c != http.StatusOK {
		t.Errorf("bob's large body while alice's is read = %d, want 200", c)
	}
	if c := postSized(t, base, aliceToken, 512<<10); c != http.StatusOK {
		t.Errorf("alice's small body while her large one is read = %d, want 200", c)
	}
	p := newPaddedBody(2 << 20)
	p.off = len(p.head)
	io.Copy(slow, p)
	if code, _ := answerWithin(t, slow, slowBr, 10*time.Second); code != http.StatusOK {
		t.Errorf("alice's slow large body = %d, want 200", code)
	}
}

// One principal's unfinished bodies cannot hold the whole body budget:
// past half of it (with more than one body) its next body waits, and
// another principal's body still finds room.
func TestAttackBodyBudgetShare(t *testing.T) {
	base := startServer(t, &Options{Admission: admission.Options{
		MaxConcurrency: 32, BodyBudget: 4 << 20, BodyWait: 500 * time.Millisecond, HeavyBytes: -1, RequestTimeout: time.Minute}})
	for range 3 {
		rawPost(t, base, aliceToken, 3<<19, newPaddedBody(3<<19).head) // 1.5 MiB each, never finished
	}
	if c := postSized(t, base, bobToken, 3<<19); c != http.StatusOK {
		t.Errorf("bob's 1.5 MiB body while alice's bodies wait = %d, want 200", c)
	}
}

// A client that ignores Retry-After and sends its next large body at once
// waits for its refusal: the 429 comes no sooner than the refusal delay
// (the wait is longer), with the body still unread, so that a flood of
// refusals costs the flooder time rather than the server's cores.
func TestAttackByteRateRefusalHeld(t *testing.T) {
	const delay = 700 * time.Millisecond
	base := startServer(t, &Options{Admission: admission.Options{
		MaxConcurrency: 32, BytesPerSecond: 1 << 20, BytesBurst: 8 << 20, RequestTimeout: time.Minute, RefusalDelay: delay}})
	if c := postSized(t, base, aliceToken, 8<<20); c != http.StatusOK {
		t.Fatalf("alice's first 8 MiB body = %d, want 200 (within the burst)", c)
	}
	start := time.Now()
	conn, br := rawPost(t, base, aliceToken, 8<<20, "")
	code, _ := answerWithin(t, conn, br, 10*time.Second)
	if held := time.Since(start); held < delay {
		t.Errorf("the refusal came after %v, want it held at least %v", held, delay)
	}
	if code != http.StatusTooManyRequests {
		t.Errorf("alice's second 8 MiB body = %d, want 429", code)
	}
}
