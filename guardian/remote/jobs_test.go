package remote

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"winx/guardian"
	"winx/guardian/wire/hermetic"
)

func jobsByID(t *testing.T, jobs []guardian.Job) map[string]guardian.Job {
	t.Helper()
	m := make(map[string]guardian.Job, len(jobs))
	for _, j := range jobs {
		m[j.ID] = j
	}
	return m
}

// Jobs are listed over the wire by any client of the guardian; when the
// guardian is killed, its record says which jobs were lost, the record
// outlives the dead guardian's cleanup, and the next guardian of the key
// lists them lost and numbers its own jobs after them. A guardian that
// ends normally removes the record.
func TestJobsOverTheWireAndLostAfterKill(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)
	first := attach(t, p.Socket)
	long, err := first.StartBackground(ctx, "echo started-jobs; sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	short, err := first.StartBackground(ctx, "exit 7")
	if err != nil {
		t.Fatal(err)
	}
	if o, err := first.PollBackground(ctx, short, 20*time.Second); err != nil || o.Running || o.ExitCode != 7 {
		t.Fatalf("PollBackground(%s) = %+v, %v; want exit 7", short, o, err)
	}
	first.Release(ctx) // detach; the guardian stays

	// Another client (a second adapter) lists and reads them.
	second := attach(t, p.Socket)
	jobs, err := second.Jobs(ctx)
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	m := jobsByID(t, jobs)
	if j := m[long]; j.State != guardian.JobRunning || j.Command != "echo started-jobs; sleep 60" {
		t.Errorf("job %s = %+v, want running", long, j)
	}
	if j := m[short]; j.State != guardian.JobExited || j.ExitCode != 7 {
		t.Errorf("job %s = %+v, want exited 7", short, j)
	}
	if o, err := second.PollBackground(ctx, long, 5*time.Second); err != nil || !strings.Contains(o.Output.Text, "started-jobs") {
		t.Errorf("PollBackground(%s) from the second client = %+v, %v", long, o, err)
	}
	fi, err := os.Stat(JobsRecordPath(p.Socket))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("jobs record: %v, %v; want a 0600 file", fi, err)
	}

	hermetic.Kill(p.PID, false)
	<-p.Done()
	var lostErr *guardian.ShellLostError
	if _, err := second.Jobs(ctx); !errors.As(err, &lostErr) {
		t.Errorf("Jobs of a killed guardian = %v, want *guardian.ShellLostError", err)
	}
	rec, err := ReadJobsRecord(p.Socket)
	if err != nil {
		t.Fatalf("ReadJobsRecord after the kill: %v", err)
	}
	m = jobsByID(t, rec.LostJobs())
	if m[long].State != guardian.JobLost || m[short].State != guardian.JobExited || m[short].ExitCode != 7 {
		t.Errorf("record of the killed guardian = %+v, want %s lost and %s exited 7", rec.LostJobs(), long, short)
	}
	if err := CleanupDead(p.Socket, Loss{Reason: LostGuardianDied}); err != nil {
		t.Fatalf("CleanupDead: %v", err)
	}
	if _, err := os.Stat(JobsRecordPath(p.Socket)); err != nil {
		t.Fatalf("the jobs record did not survive CleanupDead: %v", err)
	}

	// The next guardian of the key.
	next, err := Spawn(ctx, guardianBin, Config{Secret: testSecret, Key: "test-" + t.Name(), Socket: p.Socket, Dir: t.TempDir()}, testEnv(t))
	if err != nil {
		t.Fatalf("Spawn the next guardian: %v", err)
	}
	t.Cleanup(func() { hermetic.Kill(next.PID, false) })
	third := attach(t, p.Socket)
	jobs, err = third.Jobs(ctx)
	if err != nil {
		t.Fatalf("Jobs of the next guardian: %v", err)
	}
	m = jobsByID(t, jobs)
	if j := m[long]; j.State != guardian.JobLost {
		t.Errorf("job %s on the next guardian = %+v, want lost", long, j)
	}
	if j := m[short]; j.State != guardian.JobExited || j.ExitCode != 7 {
		t.Errorf("job %s on the next guardian = %+v, want exited 7", short, j)
	}
	id, err := third.StartBackground(ctx, "true")
	if err != nil || id != "bg-3" {
		t.Errorf("StartBackground on the next guardian = %q, %v; want bg-3", id, err)
	}
	if err := third.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-next.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the guardian did not exit after session.close")
	}
	if _, err := os.Stat(JobsRecordPath(p.Socket)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("jobs record after a normal end: %v, want removed", err)
	}
}

// A record of another key at the socket is not adopted; an oversized or
// malformed one is refused with ErrJobsRecord.
func TestJobsRecordBounds(t *testing.T) {
	socket := shortDir(t) + "/g-x.sock"
	if err := writeJobsRecord(socket, JobsRecord{Key: "other", Jobs: []guardian.Job{{ID: "bg-1", State: guardian.JobRunning}}}); err != nil {
		t.Fatal(err)
	}
	if prior, err := priorJobs(socket, "mine"); err != nil || prior != nil {
		t.Errorf("priorJobs of another key = %v, %v; want none", prior, err)
	}
	many := JobsRecord{Key: "k"}
	for range 2000 {
		many.Jobs = append(many.Jobs, guardian.Job{ID: "bg-1", Command: strings.Repeat("x", guardian.MaxJobCommandBytes), State: guardian.JobExited})
	}
	if err := writeJobsRecord(socket, many); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(JobsRecordPath(socket)); err != nil || fi.Size() > MaxJobsRecordBytes {
		t.Errorf("written record: %v, %v; want at most %d bytes", fi, err, MaxJobsRecordBytes)
	}
	for _, bad := range []string{"{", strings.Repeat(" ", MaxJobsRecordBytes+1)} {
		if err := os.WriteFile(JobsRecordPath(socket), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadJobsRecord(socket); !errors.Is(err, ErrJobsRecord) {
			t.Errorf("ReadJobsRecord(%.10q...) = %v, want ErrJobsRecord", bad, err)
		}
	}
}

// BenchmarkWriteJobsRecord measures one rewrite of a full jobs record
// (MaxBackground jobs): the cost a background command's start and end add.
func BenchmarkWriteJobsRecord(b *testing.B) {
	socket := shortDir(b) + "/g-x.sock"
	r := JobsRecord{Key: "k", PID: 1}
	for i := range guardian.MaxBackground {
		r.Jobs = append(r.Jobs, guardian.Job{ID: "bg-" + strings.Repeat("1", i%3+1), Command: strings.Repeat("x", 120),
			State: guardian.JobRunning, Started: time.Now(), Journal: "/tmp/winx-shell-123456/output-bg-1.txt"})
	}
	for b.Loop() {
		if err := writeJobsRecord(socket, r); err != nil {
			b.Fatal(err)
		}
	}
}
