package guardian

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"winx/evidence/redact"
)

func newJobsSession(t *testing.T, prior []Job, changed *atomic.Int32) *Shell {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := NewShell(ctx, Options{
		Dir:          t.TempDir(),
		PrivateRoot:  t.TempDir(),
		Env:          []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"},
		Shape:        ShapeOptions{ScratchDir: filepath.Join(t.TempDir(), "scratch"), Redactor: redact.New(false)},
		PriorJobs:    prior,
		OnJobsChange: func() { changed.Add(1) },
	})
	if err != nil {
		t.Fatalf("NewShell: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func jobByID(t *testing.T, s *Shell, id string) Job {
	t.Helper()
	jobs, err := s.Jobs(t.Context())
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	for _, j := range jobs {
		if j.ID == id {
			return j
		}
	}
	t.Fatalf("Jobs = %+v, no %s", jobs, id)
	return Job{}
}

// Background commands are jobs: running, then exited with their code, with
// the command redacted and cut, and listed while a foreground command runs.
func TestJobsStates(t *testing.T) {
	var changed atomic.Int32
	s := newJobsSession(t, nil, &changed)
	ctx := t.Context()
	secret := "AKIA" + "IOSFODNN7EXAMPLE"
	long := "echo " + secret + " " + strings.Repeat("é", 300) + "; exit 3"
	exited, err := s.StartBackground(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	running, err := s.StartBackground(ctx, "sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	if o, err := s.PollBackground(ctx, exited, 20*time.Second); err != nil || o.Running || o.ExitCode != 3 {
		t.Fatalf("PollBackground(%s) = %+v, %v; want exit 3", exited, o, err)
	}
	// A foreground command runs: listing needs no shell.
	if o := run(t, s, "sleep 30", 200*time.Millisecond); !o.Running {
		t.Fatalf("foreground sleep = %+v, want running", o)
	}
	listed := make(chan []Job, 1)
	go func() {
		jobs, _ := s.Jobs(ctx)
		listed <- jobs
	}()
	var jobs []Job
	select {
	case jobs = <-listed:
	case <-time.After(20 * time.Second):
		t.Fatal("Jobs did not answer while a foreground command runs")
	}
	if len(jobs) != 2 || jobs[0].ID != exited || jobs[1].ID != running {
		t.Fatalf("Jobs = %+v, want %s then %s", jobs, exited, running)
	}
	e, r := jobs[0], jobs[1]
	if e.State != JobExited || e.ExitCode != 3 || e.Ended.IsZero() || e.Ended.Before(e.Started) || e.OutputBytes == 0 {
		t.Errorf("exited job = %+v, want exited 3 with an end and output", e)
	}
	if strings.Contains(e.Command, secret) || !strings.Contains(e.Command, "[REDACTED:") {
		t.Errorf("job command %q is not redacted", e.Command)
	}
	if len(e.Command) > MaxJobCommandBytes || !strings.HasPrefix(e.Command, "echo ") {
		t.Errorf("job command is %d bytes, want at most %d: %q", len(e.Command), MaxJobCommandBytes, e.Command)
	}
	if !strings.HasSuffix(strings.TrimSuffix(e.Command, "…"), "é") {
		t.Errorf("job command %q is not cut on a rune boundary", e.Command)
	}
	if _, err := os.Stat(e.Journal); err != nil {
		t.Errorf("journal of the exited job: %v", err)
	}
	if r.State != JobRunning || r.ExitCode != 0 || !r.Ended.IsZero() || r.Command != "sleep 60" {
		t.Errorf("running job = %+v", r)
	}
	// Two starts and one end so far.
	if n := changed.Load(); n < 3 {
		t.Errorf("OnJobsChange called %d times, want at least 3", n)
	}
}

// The jobs of a previous process of the session are listed, the running
// ones lost, and new jobs are numbered after them.
func TestJobsPriorAreLost(t *testing.T) {
	var changed atomic.Int32
	t0 := time.Now().Add(-time.Minute)
	prior := []Job{
		{ID: "bg-2", Command: "false", State: JobExited, ExitCode: 1, Started: t0, Ended: t0.Add(time.Second)},
		{ID: "bg-4", Command: "sleep 60", State: JobRunning, Started: t0.Add(2 * time.Second), Journal: "/tmp/gone"},
	}
	s := newJobsSession(t, prior, &changed)
	if j := jobByID(t, s, "bg-2"); j.State != JobExited || j.ExitCode != 1 {
		t.Errorf("prior exited job = %+v, want exited 1", j)
	}
	if j := jobByID(t, s, "bg-4"); j.State != JobLost || !j.Ended.IsZero() {
		t.Errorf("prior running job = %+v, want lost", j)
	}
	id, err := s.StartBackground(t.Context(), "true")
	if err != nil {
		t.Fatal(err)
	}
	if id != "bg-5" {
		t.Errorf("new job id = %s, want bg-5 (after the prior bg-4)", id)
	}
	jobs, _ := s.Jobs(t.Context())
	if len(jobs) != 3 || jobs[2].ID != "bg-5" {
		t.Errorf("Jobs = %+v, want the prior two then bg-5", jobs)
	}
}

func TestJobAge(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{-time.Second, "0s"}, {59 * time.Second, "59s"}, {90 * time.Minute, "1h"}, {30 * time.Minute, "30m"}, {72 * time.Hour, "3d"}} {
		if got := JobAge(c.d); got != c.want {
			t.Errorf("JobAge(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestJobRow(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		j    Job
		want string
	}{
		{Job{ID: "bg-1", State: JobExited, ExitCode: 7, Started: now.Add(-90 * time.Second), Command: "make\ttest"}, "bg-1\texited\t7\t1m\tmake test"},
		{Job{ID: "bg-2", State: JobRunning, Started: now, Command: "a\nb\rc"}, "bg-2\trunning\t-\t0s\ta b c"},
		{Job{ID: "bg-3", State: JobLost, Started: now.Add(-3 * time.Hour), Command: "sleep 9"}, "bg-3\tlost\t-\t3h\tsleep 9"},
	} {
		if got := JobRow(c.j, now); got != c.want {
			t.Errorf("JobRow(%+v) = %q, want %q", c.j, got, c.want)
		}
	}
}
