package tools

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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
