package remote

import (
	"bufio"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/guardian"
)

// reportQuantiles reports the p50 and p99 of samples in milliseconds.
func reportQuantiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	q := func(p float64) float64 {
		return float64(samples[int(p*float64(len(samples)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

// BenchmarkEchoRoundTrip: client → guardian process → bash `echo hi` →
// completed outcome, on the client's shared connection (aim: p50 < 2 ms).
func BenchmarkEchoRoundTrip(b *testing.B) {
	p, _ := spawn(b)
	r := attach(b, p.Socket)
	ctx := context.Background()
	if _, err := r.Run(ctx, "echo warm", 10*time.Second); err != nil {
		b.Fatal(err)
	}
	samples := make([]time.Duration, 0, b.N)
	cpu0, self0 := taskCPU(b, p.PID), selfCPU()
	for b.Loop() {
		start := time.Now()
		o, err := r.Run(ctx, "echo hi", 10*time.Second)
		samples = append(samples, time.Since(start))
		if err != nil || o.Running || o.Output.Text != "hi" {
			b.Fatalf("Run = %+v, %v", o, err)
		}
	}
	n := float64(len(samples))
	reportQuantiles(b, samples)
	// CPU time moves far less than latency with the machine's load: what
	// the hop costs each side per call, the shell's own share included.
	b.ReportMetric(float64(taskCPU(b, p.PID)-cpu0)/float64(time.Microsecond)/n, "guardian-cpu-µs/op")
	b.ReportMetric(float64(selfCPU()-self0)/float64(time.Microsecond)/n, "client-cpu-µs/op")
}

// BenchmarkStatusRoundTrip is the hop alone: a status call on the shared
// connection, which the guardian answers without its shell. Beside
// BenchmarkEchoRoundTrip and BenchmarkEchoEmbedded it splits the daemon's
// overhead into the hop and the rest (the same command's work done in a
// second process).
func BenchmarkStatusRoundTrip(b *testing.B) {
	p, _ := spawn(b)
	r := attach(b, p.Socket)
	ctx := context.Background()
	samples := make([]time.Duration, 0, b.N)
	cpu0 := taskCPU(b, p.PID)
	for b.Loop() {
		start := time.Now()
		_, err := r.Status(ctx)
		samples = append(samples, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	reportQuantiles(b, samples)
	b.ReportMetric(float64(taskCPU(b, p.PID)-cpu0)/float64(time.Microsecond)/float64(len(samples)), "guardian-cpu-µs/op")
}

// taskCPU is the CPU time all threads of process pid ran so far, from
// /proc/<pid>/task/*/schedstat (nanoseconds, unlike the ticks of stat).
func taskCPU(b *testing.B, pid int) time.Duration {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var sum time.Duration
	for _, t := range tasks {
		raw, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(raw))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err == nil {
			sum += time.Duration(ns)
		}
	}
	return sum
}

// selfCPU is this process's user and system time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEchoEmbedded is the same command on the in-process session, for
// the daemon's overhead by difference.
func BenchmarkEchoEmbedded(b *testing.B) {
	ctx := context.Background()
	s, err := guardian.NewShell(ctx, guardian.Options{Dir: b.TempDir(), PrivateRoot: b.TempDir(), Env: testEnv(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	samples := make([]time.Duration, 0, b.N)
	self0 := selfCPU()
	for b.Loop() {
		start := time.Now()
		o, err := s.Run(ctx, "echo hi", 10*time.Second)
		samples = append(samples, time.Since(start))
		if err != nil || o.Output.Text != "hi" {
			b.Fatalf("Run = %+v, %v", o, err)
		}
	}
	reportQuantiles(b, samples)
	b.ReportMetric(float64(selfCPU()-self0)/float64(time.Microsecond)/float64(len(samples)), "client-cpu-µs/op")
}

// BenchmarkGuardianSpawnToPrompt: exec of winx-guardian until it serves
// with its shell at the first prompt (aim < 100 ms).
func BenchmarkGuardianSpawnToPrompt(b *testing.B) {
	dir := shortDir(b)
	env := testEnv(b)
	work := b.TempDir()
	samples := make([]time.Duration, 0, b.N)
	i := 0
	for b.Loop() {
		i++
		cfg := Config{Secret: testSecret, Key: "bench", Socket: dir + "/g" + strconv.Itoa(i) + ".sock", Dir: work}
		start := time.Now()
		p, err := Spawn(context.Background(), guardianBin, cfg, env)
		samples = append(samples, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		syscall.Kill(p.PID, syscall.SIGTERM)
		<-p.Done()
		b.StartTimer()
	}
	reportQuantiles(b, samples)
}

// BenchmarkGuardianIdleRSS reports the resident memory of an idle guardian
// process after a command, its shell excluded (aim < 10 MB).
func BenchmarkGuardianIdleRSS(b *testing.B) {
	p, _ := spawn(b)
	r := attach(b, p.Socket)
	if _, err := r.Run(context.Background(), "echo hi", 10*time.Second); err != nil {
		b.Fatal(err)
	}
	var rss int
	for b.Loop() {
		kb, err := vmRSS(p.PID)
		if err != nil {
			b.Fatal(err)
		}
		rss = max(rss, kb)
	}
	b.ReportMetric(float64(rss)/1024, "rss-MB")
}

// vmRSS reads VmRSS (kB) of one process from /proc.
func vmRSS(pid int) (int, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, os.ErrNotExist
}
