package httpserve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"winx/auth/admission"
	"winx/mcp"
	"winx/mcp/mcptest"
)

// The REST tool API behind Serve: off unless Options.REST, and behind the
// one admission gate of /mcp (rate, drain).

// restServer runs Serve with a registry holding "echo" and "slow" (which
// signals started, then blocks until release closes) until the test ends
// or stop is called.
type restServer struct {
	base    string
	started chan struct{}
	release chan struct{}
	stop    context.CancelFunc
	done    chan error
}

func startRESTServer(t *testing.T, o *Options) *restServer {
	t.Helper()
	rs := &restServer{started: make(chan struct{}, 1), release: make(chan struct{}), done: make(chan error, 1)}
	reg := mcp.NewRegistry()
	schema := json.RawMessage(`{"type":"object"}`)
	reg.AddTool(mcp.Tool{Name: "echo", InputSchema: schema}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return mcp.TextResult(string(req.Arguments)), nil
	})
	reg.AddTool(mcp.Tool{Name: "slow", InputSchema: schema}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		rs.started <- struct{}{}
		select {
		case <-rs.release:
			return mcp.TextResult("finished"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	ln := listenLoopback(t)
	srv := mcp.NewServer(mcp.Implementation{Name: "rest-serve-test", Version: "1"}, reg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	rs.stop = cancel
	go func() { rs.done <- Serve(ctx, ln, srv, fakeAuthn{}, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-rs.release:
		default:
			close(rs.release)
		}
		select {
		case <-rs.done:
		case <-time.After(ShutdownGrace + 5*time.Second):
			t.Error("Serve did not return")
		}
	})
	rs.base = "http://" + ln.Addr().String()
	waitHealthy(t, rs.base)
	return rs
}

// restRequest is a REST request of the principal whose token is given.
func restRequest(t testing.TB, method, url, token, body string) *http.Request {
	return mcptest.NewRawRequest(t, method, url, token, body, nil)
}

func TestRESTOffIsNotFound(t *testing.T) {
	rs := startRESTServer(t, &Options{Admission: admission.Options{MaxConcurrency: 4}})
	for _, req := range []*http.Request{
		restRequest(t, http.MethodGet, rs.base+mcp.RESTToolsPath, aliceToken, ""),
		restRequest(t, http.MethodPost, rs.base+mcp.RESTCallPath, aliceToken, `{"name":"echo"}`),
		restRequest(t, http.MethodGet, rs.base+mcp.RESTOpenAPIPath, aliceToken, ""),
	} {
		if got := status(t, http.DefaultClient, req); got != http.StatusNotFound {
			t.Errorf("%s %s without REST = %d, want 404", req.Method, req.URL.Path, got)
		}
	}
	// /mcp is unaffected.
	if got := status(t, http.DefaultClient, mcpRequest(t, rs.base, aliceToken, strings.NewReader(discover))); got != http.StatusOK {
		t.Errorf("/mcp = %d, want 200", got)
	}
}

// /mcp and /api/ spend one rate allowance: a caller cannot double its
// requests per minute by switching doors.
func TestRESTSharesTheRateLimit(t *testing.T) {
	rs := startRESTServer(t, &Options{REST: true, Admission: admission.Options{MaxConcurrency: 4, RequestsPerMinute: 3}})
	steps := []struct {
		req  *http.Request
		want int
	}{
		{mcpRequest(t, rs.base, aliceToken, strings.NewReader(discover)), http.StatusOK},
		{restRequest(t, http.MethodGet, rs.base+mcp.RESTToolsPath, aliceToken, ""), http.StatusOK},
		{restRequest(t, http.MethodPost, rs.base+mcp.RESTCallPath, aliceToken, `{"name":"echo"}`), http.StatusOK},
		{restRequest(t, http.MethodPost, rs.base+mcp.RESTCallPath, aliceToken, `{"name":"echo"}`), http.StatusTooManyRequests},
		{mcpRequest(t, rs.base, aliceToken, strings.NewReader(discover)), http.StatusTooManyRequests},
	}
	for i, s := range steps {
		resp, err := http.DefaultClient.Do(s.req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != s.want {
			t.Fatalf("step %d: %s %s = %d, want %d", i, s.req.Method, s.req.URL.Path, resp.StatusCode, s.want)
		}
		if s.want == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Errorf("step %d: 429 without Retry-After", i)
		}
	}
}

// A REST call running at shutdown finishes; requests arriving while the
// server drains get 503.
func TestRESTDrains(t *testing.T) {
	rs := startRESTServer(t, &Options{REST: true, Admission: admission.Options{MaxConcurrency: 4}})
	type answer struct {
		code int
		body string
		err  error
	}
	slow := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(restRequest(t, http.MethodPost, rs.base+mcp.RESTCallPath, aliceToken, `{"name":"slow"}`))
		if err != nil {
			slow <- answer{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		slow <- answer{code: resp.StatusCode, body: string(b)}
	}()
	select {
	case <-rs.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the slow tool did not start")
	}
	rs.stop()
	deadline := time.Now().Add(20 * time.Second)
	for {
		// A fresh connection each time: the drain refuses new requests.
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		got := status(t, c, restRequest(t, http.MethodPost, rs.base+mcp.RESTCallPath, bobToken, `{"name":"echo"}`))
		if got == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("REST call while draining = %d, want 503", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(rs.release)
	a := <-slow
	if a.err != nil || a.code != http.StatusOK || !strings.Contains(a.body, "finished") {
		t.Errorf("the running REST call = %d %q %v, want 200 finished", a.code, a.body, a.err)
	}
	select {
	case err := <-rs.done:
		rs.done <- err
		if err != nil {
			t.Errorf("Serve after drain = %v", err)
		}
	case <-time.After(ShutdownGrace + 5*time.Second):
		t.Error("Serve did not return after the drain")
	}
}
