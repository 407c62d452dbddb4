package tools

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkBashCommandEcho measures `echo hi` through the whole tool path:
// an in-process MCP call, session lookup, a real bash on a real PTY, marker
// completion, rendering and the envelope. It reports the median too, since
// the mean hides scheduler outliers on a busy machine.
func BenchmarkBashCommandEcho(b *testing.B) {
	e := newBashEnv(b, "")
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
