package tools

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"winx/jsonrpc"
	"winx/mcp"
)

// BenchmarkBashCommandEcho measures `echo hi` through the whole tool path:
// an in-process MCP call, session lookup, a real bash on a real PTY, marker
// completion, rendering and the envelope. It reports the median too, since
// the mean hides scheduler outliers on a busy machine.
func BenchmarkBashCommandEcho(b *testing.B) {
	benchEcho(b, newBashEnv(b, ""))
}

// benchEcho times `echo hi` through e's BashCommand after one warm-up and
// reports the median and the 99th percentile besides the mean.
func benchEcho(b *testing.B, e *bashEnv) {
	e.bash(cmd("echo warm"), 10)
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, _ := e.bash(cmd("echo hi"), 10)
		durations = append(durations, time.Since(start))
		if output(r) != "hi" {
			b.Fatalf("echo hi = %q", output(r))
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkReadFiles2000 reads a 2,000-line source file through the MCP
// tool: session lookup, path policy, a stable snapshot, rendering within the
// coding budget, the ledger record and redaction of the shown text.
func BenchmarkReadFiles2000(b *testing.B) {
	e := newBashEnv(b, "")
	var src strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&src, "\tx%d := compute(%d) // a typical line of code\n", i, i)
	}
	writeFile(b, filepath.Join(e.root, "big.go"), src.String())
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, _ := e.read("big.go")
		durations = append(durations, time.Since(start))
		if r.IsError {
			b.Fatalf("read: %+v", r.Structured)
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
}

// BenchmarkReadFiles2000Server is BenchmarkReadFiles2000 without the test
// client's decoding of the answer (two copies of the text through
// encoding/json, which dominates the round trip): the same request is
// replayed into the HTTP handler and the answer is only counted. The first
// answer is decoded and checked outside the timed loop.
func BenchmarkReadFiles2000Server(b *testing.B) {
	e := newBashEnv(b, "")
	var src strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&src, "\tx%d := compute(%d) // a typical line of code\n", i, i)
	}
	writeFile(b, filepath.Join(e.root, "big.go"), src.String())
	if r, d := e.read("big.go"); r.IsError || len(d.Files) != 1 || d.Files[0].TotalLines != 2000 {
		b.Fatalf("read: %+v", r.Structured)
	}
	body := readRequestBody(b, e, "big.go")
	durations := make([]time.Duration, 0, b.N)
	size := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		rec := httptest.NewRecorder()
		e.client.Handler.ServeHTTP(rec, readHTTPRequest(body))
		durations = append(durations, time.Since(start))
		if rec.Code != http.StatusOK {
			b.Fatalf("HTTP %d: %s", rec.Code, rec.Body.Bytes())
		}
		size = rec.Body.Len()
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(size), "answer-B")
}

// readRequestBody is the JSON-RPC body of a ReadFiles call of paths, with
// the _meta the 2026-07-28 revision requires.
func readRequestBody(tb testing.TB, e *bashEnv, paths ...string) []byte {
	tb.Helper()
	params := map[string]any{"name": ReadFilesTool, "arguments": map[string]any{"file_paths": paths, "thread_id": e.thread, "workspace_root": e.root},
		"_meta": map[string]any{
			mcp.MetaProtocolVersion:    mcp.Version20260728,
			mcp.MetaClientInfo:         map[string]string{"name": "bench", "version": "1.0.0"},
			mcp.MetaClientCapabilities: map[string]any{},
		}}
	call, err := jsonrpc.NewCall(jsonrpc.Int64ID(1), "tools/call", params)
	if err != nil {
		tb.Fatal(err)
	}
	body, err := jsonrpc.EncodeMessage(call)
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

// readHTTPRequest is a ReadFiles request with body and the routing headers.
func readHTTPRequest(body []byte) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", ReadFilesTool)
	return req
}

// BenchmarkEditLinePatch2000 patches one line of a 2,000-line file through
// the MCP tool, fsync and directory fsync included. Each iteration reads
// the new revision first (as a model would), outside the timed part.
func BenchmarkEditLinePatch2000(b *testing.B) {
	e := newBashEnv(b, "")
	var src strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&src, "\tx%d := compute(%d)\n", i, i)
	}
	path := filepath.Join(e.root, "big.go")
	writeFile(b, path, src.String())
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, d := e.read("big.go:1000-1000")
		rev := d.Files[0].Revision
		b.StartTimer()
		start := time.Now()
		r, _ := e.edit(linePatch(path, rev, 1000, 1, fmt.Sprintf("\tx999 := compute(%d)\n", i)))
		durations = append(durations, time.Since(start))
		if r.Structured.Status != "completed" {
			b.Fatalf("edit: %+v", r.Structured)
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
}
