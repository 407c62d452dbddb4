//go:build linux

package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/guardian/remote"
	"winx/guardian/wire"
	"winx/guardian/wire/hermetic"
	"winx/pty/testenv"
)

// deathDeadline is the promise: a guardian dead, its session gone within
// this. The tests wait much longer and report when it became true.
const deathDeadline = 2 * time.Second

// doomedSession is a guardian, spawned through a real winxd, whose session
// runs one process of each kind that could outlive it, each with a marker
// of its own in its arguments.
type doomedSession struct {
	g       Guardian
	key     string
	work    string // the workspace and the shell's directory
	state   string // XDG_STATE_HOME of the session
	journal string // a line the foreground command printed
	// markers by what runs them: "pipeline" (the foreground sleep | cat),
	// "job" (a background job), "double" (setsid'd, double-forked),
	// "bare" (setsid'd with an empty environment: it carries no tag).
	markers map[string]string
	shells  string // the directory of the sessions' private directories
}

// startDoomed starts the session through the winxd serving in dir.
func startDoomed(t *testing.T, dir, name string) doomedSession {
	t.Helper()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		testenv.Missing(t, "needs /proc")
	}
	c := &Client{Socket: filepath.Join(dir, wire.DaemonSocketName), Hello: wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	work, state := t.TempDir(), t.TempDir()
	key := SessionKey{ExternalID: "ws_" + name, Principal: "p", Workspace: work}.String()
	res, err := c.Ensure(ctx, &EnsureParams{Key: key, Dir: work, Workspace: work, Env: append(testEnv(t), "XDG_STATE_HOME="+state)})
	if err != nil {
		t.Fatal(err)
	}
	d := doomedSession{g: res.Guardian, key: key, work: work, state: state, markers: map[string]string{}, shells: filepath.Join(state, "winx", wire.SessionsDirName)}
	t.Cleanup(func() { hermetic.Kill(d.g.PID, false) })
	n := time.Now().UnixNano() % 100000
	for i, what := range []string{"pipeline", "job", "double", "bare"} {
		d.markers[what] = fmt.Sprintf("71.%05d%d", n, i)
	}
	t.Cleanup(func() {
		for _, m := range d.markers {
			for _, pid := range markerPIDs(m) {
				hermetic.Kill(pid, false)
			}
		}
	})
	rs, err := remote.Attach(ctx, d.g.Socket, &remote.ClientOptions{Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.StartBackground(ctx, "sleep "+d.markers["job"]); err != nil {
		t.Fatalf("StartBackground: %v", err)
	}
	for _, cmd := range []string{
		"setsid sh -c 'sleep " + d.markers["double"] + " >/dev/null 2>&1 </dev/null &' >/dev/null 2>&1 </dev/null &",
		"env -i setsid sleep " + d.markers["bare"] + " >/dev/null 2>&1 </dev/null &",
	} {
		if o, err := rs.Run(ctx, cmd, 10*time.Second); err != nil || o.Running {
			t.Fatalf("Run(%q) = %+v, %v", cmd, o, err)
		}
	}
	d.journal = fmt.Sprintf("journal-%d", n)
	if o, err := rs.Run(ctx, "echo "+d.journal+"; sleep "+d.markers["pipeline"]+" | cat", time.Second); err != nil || !o.Running {
		t.Fatalf("the foreground pipeline: %+v, %v", o, err)
	}
	for what, m := range d.markers {
		if !waitFor(10*time.Second, func() bool { return len(markerPIDs(m)) > 0 }) {
			t.Fatalf("the %s marker %s never ran", what, m)
		}
	}
	// The premise of "bare": nothing of it carries the session's tag.
	for _, pid := range markerPIDs(d.markers["bare"]) {
		if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil && bytes.Contains(env, []byte(remote.EnvTag)) {
			t.Fatalf("the bare sleep %d carries the tag: %q", pid, env)
		}
	}
	if entries, _ := filepath.Glob(filepath.Join(d.shells, "winx-shell-*")); len(entries) != 1 {
		t.Fatalf("private dirs = %v, want one", entries)
	}
	return d
}

// markerPIDs lists the live processes whose arguments carry marker.
func markerPIDs(marker string) []int {
	var pids []int
	for _, p := range hermetic.Processes(marker) {
		var pid int
		if _, err := fmt.Sscanf(p, "%d:", &pid); err == nil && pid > 0 && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// gone reports whether path does not exist.
func gone(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// killAndMeasure sends sig to the guardian and polls (for much longer than
// the promise) until none of the markers whats runs and the guardian's
// socket and record are gone; it returns how long that took after the
// signal, and how long until the last marker process was gone.
func killAndMeasure(t *testing.T, d doomedSession, sig syscall.Signal, whats ...string) (all, procs time.Duration) {
	t.Helper()
	running := func() []int {
		var pids []int
		for _, w := range whats {
			pids = append(pids, markerPIDs(d.markers[w])...)
		}
		return pids
	}
	start := time.Now()
	if err := syscall.Kill(d.g.PID, sig); err != nil {
		t.Fatal(err)
	}
	deadline := start.Add(30 * time.Second)
	procs = -1
	for time.Now().Before(deadline) {
		none := len(running()) == 0
		if none && procs < 0 {
			procs = time.Since(start)
		}
		if none && gone(d.g.Socket) && gone(remote.RecordPath(d.g.Socket)) {
			return time.Since(start), procs
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("30 s after %v: still running %v; socket gone %v, record gone %v", sig, running(), gone(d.g.Socket), gone(remote.RecordPath(d.g.Socket)))
	return 0, 0
}

// checkLost checks the evidence a lost session keeps: the lost record,
// naming the private directory, which still holds the journal of the
// command that ran, and the jobs record.
func checkLost(t *testing.T, d doomedSession, reason string) remote.LostRecord {
	t.Helper()
	lost, err := remote.ReadLost(d.g.Socket)
	if err != nil {
		t.Fatalf("ReadLost: %v", err)
	}
	if fi, err := os.Stat(remote.LostRecordPath(d.g.Socket)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lost record: %v, %v; want a 0600 file", fi, err)
	}
	dirs, _ := filepath.Glob(filepath.Join(d.shells, "winx-shell-*"))
	if lost.PID != d.g.PID || lost.Key != d.key || lost.Reason != reason || lost.Tag == "" || len(dirs) != 1 || lost.ShellDir != dirs[0] || lost.Time.IsZero() {
		t.Errorf("lost record = %+v; want pid %d, the key, reason %q, the tag, the time and the private dir %v", lost, d.g.PID, reason, dirs)
	}
	// A journal output-N.txt holds the lines that left the command's
	// screen, its output-N.txt.screen sidecar those still on it.
	journals, _ := filepath.Glob(filepath.Join(lost.ShellDir, "output-*"))
	found := false
	for _, j := range journals {
		b, _ := os.ReadFile(j)
		found = found || bytes.Contains(b, []byte(d.journal))
	}
	if !found {
		for _, j := range journals {
			b, _ := os.ReadFile(j)
			t.Logf("%s: %q", j, b)
		}
		t.Errorf("no journal in %s holds %q (journals %v)", lost.ShellDir, d.journal, journals)
	}
	if _, err := remote.ReadJobsRecord(d.g.Socket); err != nil {
		t.Errorf("jobs record of the lost session: %v, want kept", err)
	}
	return lost
}

// A guardian that dies (killed, crashed) leaves nothing running, at once:
// not its foreground pipeline, its background job, a setsid'd
// double-forked process, nor one that cleared its environment (and with it
// the session's tag); its socket and record go. The session's journals and
// jobs record stay, named by a lost record that says how it died. Before
// winxd watched its guardians, all of them ran on and the socket stayed
// until a sweep (every minute) or `winx prune`.
func TestDeadGuardianLeavesNothing(t *testing.T) {
	for _, tt := range []struct {
		name string
		sig  syscall.Signal
	}{
		// An OOM kill is a SIGKILL from the kernel.
		{"SIGKILL", syscall.SIGKILL},
		// SIGBUS and SIGABRT stand for a crash of the guardian.
		{"SIGBUS", syscall.SIGBUS},
		{"SIGABRT", syscall.SIGABRT},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := socketDir(t)
			serve(t, dir, Policy{})
			d := startDoomed(t, dir, "dead_"+strings.ToLower(tt.name))
			all, procs := killAndMeasure(t, d, tt.sig, "pipeline", "job", "double", "bare")
			t.Logf("%s: last session process gone %v after the kill; socket and record gone after %v", tt.name, procs, all)
			if all > deathDeadline {
				t.Errorf("the session took %v to go, want within %v", all, deathDeadline)
			}
			lost := checkLost(t, d, remote.LostGuardianDied)
			code := "none"
			if lost.ExitCode != nil {
				code = fmt.Sprint(*lost.ExitCode)
			}
			t.Logf("lost record: signal %q, exit code %s, core dumped %v", lost.Signal, code, lost.CoreDumped)
			switch {
			case tt.sig == syscall.SIGKILL && lost.Signal != "SIGKILL":
				t.Errorf("lost record signal = %q, want SIGKILL", lost.Signal)
			case lost.Signal == "" && lost.ExitCode == nil:
				t.Errorf("lost record says nothing of how the guardian ended: %+v", lost)
			}
		})
	}
}

// A new guardian of a lost session's key starts, and the evidence of the
// lost session stays (until it expires) for the adapter to report.
func TestLostSessionOutlivesNextGuardian(t *testing.T) {
	dir := socketDir(t)
	serve(t, dir, Policy{})
	d := startDoomed(t, dir, "next")
	killAndMeasure(t, d, syscall.SIGKILL, "pipeline", "job", "double", "bare")
	lost := checkLost(t, d, remote.LostGuardianDied)
	c := &Client{Socket: filepath.Join(dir, wire.DaemonSocketName), Hello: wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)}
	res, err := c.Ensure(t.Context(), &EnsureParams{Key: d.key, Dir: d.work, Workspace: d.work, Env: append(testEnv(t), "XDG_STATE_HOME="+d.state)})
	if err != nil || !res.Spawned {
		t.Fatalf("Ensure after the loss = %+v, %v; want a new guardian", res, err)
	}
	t.Cleanup(func() { hermetic.Kill(res.Guardian.PID, false) })
	again, err := remote.ReadLost(d.g.Socket)
	if err != nil || again.PID != lost.PID {
		t.Errorf("lost record with a new guardian = %+v, %v; want the old one kept", again, err)
	}
	if _, err := os.Stat(lost.ShellDir); err != nil {
		t.Errorf("the lost session's private dir with a new guardian: %v, want kept", err)
	}
}

// A guardian that a restarted winxd found from its record (not its child)
// is watched too: killed, what it left is gone at once. Its orphans are
// not the new winxd's (they went to init, or to whichever subreaper is
// above the winxd that spawned it); the tag finds every one that kept its
// environment. Here the old winxd ran in this test process, which is a
// subreaper, so the bare process is not a witness and is not checked.
func TestRestartedWinxdWatchesFoundGuardian(t *testing.T) {
	dir := socketDir(t)
	_, _, stop := serveStoppable(t, dir, Policy{})
	d := startDoomed(t, dir, "restart")
	stop()
	srv, _ := serve(t, dir, Policy{})
	if !waitFor(10*time.Second, func() bool { return srv.guards.watching(d.g.Socket, d.g.PID) }) {
		t.Fatal("the new winxd does not watch the guardian it found")
	}
	all, procs := killAndMeasure(t, d, syscall.SIGKILL, "pipeline", "job", "double")
	t.Logf("found guardian: last tagged process gone %v after the kill; socket and record gone after %v", procs, all)
	if all > deathDeadline {
		t.Errorf("the session took %v to go, want within %v", all, deathDeadline)
	}
	lost := checkLost(t, d, remote.LostGuardianDied)
	if lost.Signal != "" || lost.ExitCode != nil {
		t.Errorf("lost record of a guardian this winxd did not spawn = %+v; want no exit status (it cannot know it)", lost)
	}
}

// The sweep ends a session whose workspace directory was removed, and keeps
// its journals as for a lost session.
func TestSweepEndsSessionOfRemovedWorkspace(t *testing.T) {
	dir := socketDir(t)
	srv, _ := serve(t, dir, Policy{})
	d := startDoomed(t, dir, "rmws")
	if ended, err := srv.Sweep(t.Context()); err != nil || len(ended) != 0 {
		t.Fatalf("Sweep with the workspace present = %+v, %v; want nothing ended", ended, err)
	}
	if err := os.RemoveAll(d.work); err != nil {
		t.Fatal(err)
	}
	ended, err := srv.Sweep(t.Context())
	if err != nil || len(ended) != 1 || ended[0].PID != d.g.PID {
		t.Fatalf("Sweep after the workspace was removed = %+v, %v; want the guardian ended", ended, err)
	}
	for what, m := range d.markers {
		if !waitFor(20*time.Second, func() bool { return len(markerPIDs(m)) == 0 }) {
			t.Errorf("the %s process runs on: %v", what, hermetic.Processes(m))
		}
	}
	if !gone(d.g.Socket) || !gone(remote.RecordPath(d.g.Socket)) {
		t.Errorf("socket gone %v, record gone %v; want both gone", gone(d.g.Socket), gone(remote.RecordPath(d.g.Socket)))
	}
	checkLost(t, d, remote.LostWorkspaceRemoved)
}
