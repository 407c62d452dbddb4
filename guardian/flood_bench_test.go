package guardian

import (
	"io"
	"os/exec"
	"testing"
	"time"
)

// floodCmd is the flood both benchmarks run: 20 MB of short lines.
const floodCmd = "yes | head -c 20000000"

// BenchmarkFloodSession is a flood through a Shell: PTY, terminal,
// redaction and journal.
func BenchmarkFloodSession(b *testing.B) {
	s := newTestSession(b, "")
	b.SetBytes(20000000)
	for b.Loop() {
		o := run(b, s, floodCmd, 10*time.Minute)
		if o.Running {
			b.Fatal("flood did not finish")
		}
	}
}

// BenchmarkFloodScript is the same flood through script(1) on a PTY, the
// baseline for BenchmarkFloodSession.
func BenchmarkFloodScript(b *testing.B) {
	if _, err := exec.LookPath("script"); err != nil {
		b.Skip("no script(1)")
	}
	b.SetBytes(20000000)
	for b.Loop() {
		cmd := exec.Command("script", "-qc", floodCmd, "/dev/null")
		cmd.Stdout = io.Discard
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
