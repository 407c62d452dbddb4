package main

// Benchmarks of the real winx binary, beside the official Go SDK's server
// (the testserver of ../shared/mcpclients) measured in the same run. They
// report numbers and never assert on time.
//
//	go test ./cmd/winx -run='^$' -bench=. -benchtime=2s
//
// The Go SDK server and the cold-start probe need the MCP clients
// (WINX_MCPCLIENTS, else built with setup.sh); without them those
// sub-benchmarks are skipped.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"winx/mcp"
)

// benchConcurrency are the numbers of concurrent HTTP clients measured.
var benchConcurrency = []int{1, 32}

// httpTarget is one server under load and the request style used on it.
type httpTarget struct {
	name     string
	endpoint string
	token    string
	modern   bool // stateless 2026-07-28 requests; else initialize + Mcp-Session-Id at 2025-11-25
}

// BenchmarkHTTPToolsList measures tools/list round trips over Streamable
// HTTP on 127.0.0.1 with keep-alive, by c concurrent clients. Legacy clients
// each hold their own session (initialize, notifications/initialized, then
// tools/list with Mcp-Session-Id and MCP-Protocol-Version 2025-11-25): the
// one style both servers speak. winx is also measured with stateless
// 2026-07-28 requests, which the Go SDK server refuses (-32022).
func BenchmarkHTTPToolsList(b *testing.B) {
	bin := buildWinx(b)
	winx := startHTTP(b, bin)
	targets := []*httpTarget{
		{name: "server=winx/era=legacy", endpoint: winx.endpoint, token: winx.token},
		{name: "server=winx/era=modern", endpoint: winx.endpoint, token: winx.token, modern: true},
	}
	clients, reason := findMCPClients(b)
	var sdk *httpTarget
	if clients != "" {
		sdk = startGoSDKServer(b, filepath.Join(clients, "testserver"))
		targets = append(targets, sdk)
	}
	if sdk == nil {
		b.Run("server=go-sdk/era=legacy", func(b *testing.B) { b.Skipf("Go SDK testserver unavailable: %s", reason) })
	}
	for _, target := range targets {
		for _, c := range benchConcurrency {
			b.Run(fmt.Sprintf("%s/c=%d", target.name, c), func(b *testing.B) {
				benchToolsList(b, target, c)
			})
		}
	}
}

func benchToolsList(b *testing.B, target *httpTarget, c int) {
	tr := &http.Transport{MaxIdleConnsPerHost: 2 * c, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: time.Minute}
	workers := make([]*rpcClient, c)
	for i := range workers {
		w := &rpcClient{hc: hc, target: target}
		if err := w.open(b.Context()); err != nil {
			b.Fatal(err)
		}
		defer w.close()
		workers[i] = w
	}
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	b.ResetTimer()
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := w.toolsList(b.Context()); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// rpcClient is one MCP client over HTTP: the request style of its target
// and, in the legacy era, its session.
type rpcClient struct {
	hc      *http.Client
	target  *httpTarget
	session string
	id      int64
}

const benchClientInfo = `{"name":"winx-bench","version":"0"}`

// open starts the legacy session; modern clients need none.
func (c *rpcClient) open(ctx context.Context) error {
	if c.target.modern {
		return nil
	}
	hdr, body, err := c.post(ctx, "initialize",
		`{"protocolVersion":"`+mcp.Version20251125+`","capabilities":{},"clientInfo":`+benchClientInfo+`}`, http.StatusOK)
	if err != nil {
		return err
	}
	if !bytes.Contains(body, []byte(`"protocolVersion":"`+mcp.Version20251125+`"`)) {
		return fmt.Errorf("%s: initialize answered %s", c.target.name, body)
	}
	c.session = hdr.Get("Mcp-Session-Id")
	if c.session == "" {
		return fmt.Errorf("%s: initialize answered without Mcp-Session-Id", c.target.name)
	}
	_, _, err = c.post(ctx, "notifications/initialized", "", http.StatusAccepted)
	return err
}

// close ends the legacy session so repeated runs do not pile sessions up.
func (c *rpcClient) close() {
	if c.session == "" {
		return
	}
	req, err := http.NewRequest(http.MethodDelete, c.target.endpoint, nil)
	if err != nil {
		return
	}
	c.setHeaders(req, "")
	if resp, err := c.hc.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

var toolsKey = []byte(`"tools":`)

func (c *rpcClient) toolsList(ctx context.Context) error {
	params := `{}`
	if c.target.modern {
		params = `{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.Version20260728 + `",` +
			`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":` + benchClientInfo + `}}`
	}
	_, body, err := c.post(ctx, "tools/list", params, http.StatusOK)
	if err != nil {
		return err
	}
	if !bytes.Contains(body, toolsKey) {
		return fmt.Errorf("%s: tools/list answered %s", c.target.name, body)
	}
	return nil
}

func (c *rpcClient) setHeaders(req *http.Request, method string) {
	req.Header.Set("Authorization", "Bearer "+c.target.token)
	req.Header.Set("Accept", "application/json, text/event-stream")
	switch {
	case c.target.modern:
		req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
		req.Header.Set("Mcp-Method", method)
	case c.session != "":
		req.Header.Set("MCP-Protocol-Version", mcp.Version20251125)
		req.Header.Set("Mcp-Session-Id", c.session)
	}
}

// post sends one JSON-RPC message (a notification when params is "") and
// returns the answer's headers and body, which is JSON or an SSE stream.
func (c *rpcClient) post(ctx context.Context, method, params string, wantStatus int) (http.Header, []byte, error) {
	var msg string
	if params == "" {
		msg = `{"jsonrpc":"2.0","method":"` + method + `"}`
	} else {
		c.id++
		msg = `{"jsonrpc":"2.0","id":` + strconv.FormatInt(c.id, 10) + `,"method":"` + method + `","params":` + params + `}`
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.target.endpoint, strings.NewReader(msg))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	c.setHeaders(req, method)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != wantStatus {
		return nil, nil, fmt.Errorf("%s: %s: HTTP %d, want %d: %s", c.target.name, method, resp.StatusCode, wantStatus, body)
	}
	return resp.Header, body, nil
}

// startGoSDKServer starts the Go SDK reference server on a loopback port of
// its choosing with a fresh token; it prints its endpoint as the first line.
func startGoSDKServer(tb testing.TB, bin string) *httpTarget {
	tb.Helper()
	tok := make([]byte, 24)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-token", token)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
		io.Copy(io.Discard, stdout)
	}()
	select {
	case s := <-line:
		endpoint, ok := strings.CutPrefix(strings.TrimSpace(s), "listening ")
		if !ok {
			tb.Fatalf("testserver printed %q first\nstderr:\n%s", s, stderr.String())
		}
		return &httpTarget{name: "server=go-sdk/era=legacy", endpoint: endpoint, token: token}
	case <-time.After(startupTimeout):
		tb.Fatalf("testserver did not say where it listens within %v\nstderr:\n%s", startupTimeout, stderr.String())
	}
	return nil
}

// coldStartIdle is how long the probe lets the server sit before reading
// its RSS.
const coldStartIdle = "1s"

// BenchmarkColdStart measures, per spawn of a stdio server by the Go SDK
// client (`mcpprobe startup`): the time from spawn to the first answer (the
// SDK's opening handshake), the first tools/list round trip, and the
// server's resident set after idling. ns/op, which would mostly be the idle
// wait, is suppressed.
func BenchmarkColdStart(b *testing.B) {
	bin := buildWinx(b)
	clients, reason := findMCPClients(b)
	if clients == "" {
		b.Skipf("MCP clients unavailable: %s", reason)
	}
	probe := filepath.Join(clients, "mcpprobe")
	for _, target := range []struct{ name, command string }{
		{"server=winx", shellQuote(bin)},
		{"server=go-sdk", shellQuote(filepath.Join(clients, "testserver")) + " --stdio"},
	} {
		b.Run(target.name, func(b *testing.B) {
			var firstAnswerUS, toolsListUS, rssKiB float64
			for i := 0; i < b.N; i++ {
				m, err := coldStart(b.Context(), probe, target.command)
				if err != nil {
					b.Fatal(err)
				}
				firstAnswerUS += m["startup_to_initialize_us"]
				toolsListUS += m["first_tools_list_us"]
				rssKiB += m["rss_kib"]
			}
			n := float64(b.N)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(firstAnswerUS/n/1000, "ms-first-answer")
			b.ReportMetric(toolsListUS/n, "us-first-tools-list")
			b.ReportMetric(rssKiB/n, "KiB-idle-rss")
		})
	}
}

// coldStart runs `mcpprobe startup` once and returns its numeric key=value
// fields.
func coldStart(ctx context.Context, probe, command string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, probe, "startup", "--stdio", command, "--idle", coldStartIdle)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("mcpprobe startup --stdio %s: %v\n%s", command, err, stderr.Bytes())
	}
	m := map[string]float64{}
	for _, field := range strings.Fields(string(out)) {
		k, v, ok := strings.Cut(field, "=")
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			m[k] = f
		}
	}
	for _, k := range []string{"startup_to_initialize_us", "first_tools_list_us", "rss_kib"} {
		if _, ok := m[k]; !ok {
			return nil, errors.New("mcpprobe startup printed no " + k + ": " + string(out))
		}
	}
	return m, nil
}

// BenchmarkHTTPBashEcho measures authenticated BashCommand `echo hi` calls
// over HTTP on 127.0.0.1 by c clients, each with its own session (its own
// shell: one shell runs one foreground command at a time). It reports
// requests per second and the p50/p99 latency.
func BenchmarkHTTPBashEcho(b *testing.B) {
	bin := buildWinx(b)
	winx := startHTTP(b, bin)
	target := &httpTarget{name: "server=winx/era=legacy", endpoint: winx.endpoint, token: winx.token}
	var sessions atomic.Int64 // thread ids must be new for every workspace
	for _, c := range benchConcurrency {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			tr := &http.Transport{MaxIdleConnsPerHost: 2 * c}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr, Timeout: time.Minute}
			type worker struct {
				rpc    *rpcClient
				params string
			}
			workers := make([]worker, c)
			for i := range workers {
				w := &rpcClient{hc: hc, target: target}
				if err := w.open(b.Context()); err != nil {
					b.Fatal(err)
				}
				defer w.close()
				root := b.TempDir()
				thread := fmt.Sprintf("bench_%d", sessions.Add(1))
				init := fmt.Sprintf(`{"name":"Initialize","arguments":{"any_workspace_path":%q,"thread_id":%q}}`, root, thread)
				if _, body, err := w.post(b.Context(), "tools/call", init, http.StatusOK); err != nil || bytes.Contains(body, []byte(`"isError":true`)) {
					b.Fatalf("Initialize: %v %s", err, body)
				}
				workers[i] = worker{rpc: w, params: fmt.Sprintf(`{"name":"BashCommand","arguments":{"command":"echo hi","thread_id":%q,"workspace_root":%q}}`, thread, root)}
			}
			var (
				next      atomic.Int64
				wg        sync.WaitGroup
				mu        sync.Mutex
				latencies []time.Duration
				firstErr  error
			)
			b.ResetTimer()
			for _, w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						start := time.Now()
						_, body, err := w.rpc.post(b.Context(), "tools/call", w.params, http.StatusOK)
						d := time.Since(start)
						mu.Lock()
						latencies = append(latencies, d)
						if err == nil && !bytes.Contains(body, []byte(`exit code: 0`)) {
							err = fmt.Errorf("echo hi answered %s", body)
						}
						if err != nil && firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
						if err != nil {
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			if firstErr != nil {
				b.Fatal(firstErr)
			}
			slices.Sort(latencies)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
		})
	}
}
