package operator

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/guardian"
	"winx/guardian/remote"
	"winx/guardian/wire"
)

// winx jobs reads a dead guardian's jobs record (its running jobs lost);
// the record survives the dead guardian's cleanup (kill --all), which
// leaves a lost-session record, and winx prune removes it with that record
// once it expired.
func TestJobsOfDeadGuardianAndPrune(t *testing.T) {
	dir, err := os.MkdirTemp("", "wxo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket, _, _ := deadGuardian(t, dir)
	started := time.Now().Add(-90 * time.Second)
	b, _ := json.Marshal(remote.JobsRecord{Key: "dead", PID: 1 << 22, Jobs: []guardian.Job{
		{ID: "bg-1", Command: "make build", State: guardian.JobExited, ExitCode: 2, Started: started, Ended: started.Add(time.Second)},
		{ID: "bg-3", Command: "sleep 600", State: guardian.JobRunning, Started: started},
	}})
	if err := os.WriteFile(remote.JobsRecordPath(socket), b, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(c Command) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		var out strings.Builder
		err := Run(ctx, c, Options{
			Paths: wire.Paths{Dir: dir, Daemon: filepath.Join(dir, wire.DaemonSocketName)}, Secret: wire.NewSecret(),
			FormatBuild: func(wire.Build) string { return "" }, Getenv: os.Getenv, Stdout: &out,
		})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		return out.String()
	}
	check := func(when, out string) {
		t.Helper()
		for _, want := range []string{"is gone", "bg-1  exited  2     1m   make build", "bg-3  lost    -     1m   sleep 600"} {
			if !strings.Contains(out, want) {
				t.Errorf("winx jobs %s lacks %q:\n%s", when, want, out)
			}
		}
	}
	check("of a dead guardian", run(Command{Name: Jobs}))
	check("naming its socket", run(Command{Name: Jobs, Thread: filepath.Base(socket)}))
	// A name that matches no session is an error, as for attach and kill.
	var out strings.Builder
	err = Run(t.Context(), Command{Name: Jobs, Thread: "another"}, Options{
		Paths: wire.Paths{Dir: dir, Daemon: filepath.Join(dir, wire.DaemonSocketName)}, Secret: wire.NewSecret(),
		FormatBuild: func(wire.Build) string { return "" }, Getenv: os.Getenv, Stdout: &out,
	})
	if err == nil || !strings.Contains(err.Error(), `no session matches "another"`) || strings.Contains(out.String(), "bg-3") {
		t.Errorf("winx jobs another = %v:\n%s\nwant no session matches", err, out.String())
	}
	run(Command{Name: Kill, All: true})
	if _, err := os.Lstat(socket); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("kill --all left the dead socket (%v)", err)
	}
	check("after kill --all", run(Command{Name: Jobs}))
	run(Command{Name: Prune})
	check("after prune, while the session's loss is recent", run(Command{Name: Jobs}))
	lost, err := remote.ReadLost(socket)
	if err != nil {
		t.Fatalf("ReadLost after kill --all: %v", err)
	}
	lost.Time = time.Now().Add(-remote.LostTTL - time.Minute)
	b, _ = json.Marshal(lost)
	if err := os.WriteFile(remote.LostRecordPath(socket), b, 0o600); err != nil {
		t.Fatal(err)
	}
	run(Command{Name: Prune})
	if _, err := os.Lstat(remote.JobsRecordPath(socket)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("prune left the jobs record (%v)", err)
	}
	if out := run(Command{Name: Jobs}); !strings.Contains(out, "no background jobs") {
		t.Errorf("winx jobs after prune:\n%s", out)
	}
}
