package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// initConcurrency is how many sessions BenchmarkHTTPInitializeDaemon
// starts at once.
const initConcurrency = 30

// BenchmarkHTTPInitializeDaemon measures session creation under load: a
// hermetic winx serve --http in the daemon runtime (its own winxd, socket
// and state directories) receives initConcurrency Initialize calls at once,
// each for a new workspace (so each spawns a guardian), and reports the
// latency percentiles of one round per iteration.
//
//	go test ./cmd/winx -run='^$' -bench=HTTPInitializeDaemon -benchtime=1x
func BenchmarkHTTPInitializeDaemon(b *testing.B) {
	d := newDaemonEnv(b, "WINX_MAX_GUARDIANS=1000")
	token, tokenFile := newToken(b)
	cmd := exec.Command(filepath.Join(d.bins, "winx"), "serve", "--http", "--bind", "127.0.0.1:0", "--token-file", tokenFile, "--requests-per-minute", "0")
	cmd.Env = d.env
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	base := "http://" + servingAddr(b, stderr, exited)
	if err := waitHealthy(base, exited); err != nil {
		b.Fatal(err)
	}
	target := &httpTarget{name: "winx/daemon", endpoint: base + "/mcp", token: token}
	tr := &http.Transport{MaxIdleConnsPerHost: 2 * initConcurrency}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	var (
		sessions  atomic.Int64
		latencies []time.Duration
	)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		workers := make([]*rpcClient, initConcurrency)
		roots := make([]string, initConcurrency)
		for i := range workers {
			workers[i] = &rpcClient{hc: hc, target: target}
			if err := workers[i].open(b.Context()); err != nil {
				b.Fatal(err)
			}
			roots[i] = b.TempDir()
		}
		b.StartTimer()
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			firstErr error
		)
		for i, w := range workers {
			wg.Go(func() {
				thread := fmt.Sprintf("init_%d", sessions.Add(1))
				params := fmt.Sprintf(`{"name":"Initialize","arguments":{"any_workspace_path":%q,"thread_id":%q}}`, roots[i], thread)
				start := time.Now()
				_, body, err := w.post(b.Context(), "tools/call", params, http.StatusOK)
				dur := time.Since(start)
				if err == nil && bytes.Contains(body, []byte(`"isError":true`)) {
					err = fmt.Errorf("Initialize answered %s", body)
				}
				mu.Lock()
				defer mu.Unlock()
				latencies = append(latencies, dur)
				if err != nil && firstErr == nil {
					firstErr = err
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		for _, w := range workers {
			w.close()
		}
		if firstErr != nil {
			b.Fatal(firstErr)
		}
		// The next round starts on a fleet without these guardians.
		if _, err := d.winx("kill", "--all"); err != nil {
			b.Logf("kill --all: %v", err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(latencies)
	ms := func(q float64) float64 {
		return float64(latencies[min(len(latencies)-1, int(q*float64(len(latencies))))].Microseconds()) / 1000
	}
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
	b.ReportMetric(ms(1), "max-ms")
}
