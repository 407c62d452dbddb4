package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/guardian/remote"
	"winx/guardian/wire"
	"winx/guardian/wire/hermetic"
	"winx/pty/testenv"
)

func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// lifetimeSession starts a guardian through a real winxd whose shell runs
// a foreground pipeline and a setsid'd sleep, each marked, and returns the
// server, the guardian, the markers and the directory of the sessions'
// private directories.
func lifetimeSession(t *testing.T) (*Server, Guardian, []string, string) {
	t.Helper()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		testenv.Missing(t, "needs /proc")
	}
	dir := socketDir(t)
	srv, _ := serve(t, dir, Policy{})
	c := &Client{Socket: filepath.Join(dir, wire.DaemonSocketName), Hello: wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	work, tmp := t.TempDir(), t.TempDir()
	key := SessionKey{ExternalID: "ws_life", Principal: "p", Workspace: work}.String()
	res, err := c.Ensure(ctx, &EnsureParams{Key: key, Dir: work, Workspace: work, Env: append(testEnv(t), "XDG_STATE_HOME="+tmp)})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Guardian
	t.Cleanup(func() {
		if g.PID > 0 {
			hermetic.Kill(g.PID, false)
		}
	})
	rs, err := remote.Attach(ctx, g.Socket, &remote.ClientOptions{Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	n := time.Now().UnixNano() % 100000
	markers := []string{fmt.Sprintf("61.%05d1", n), fmt.Sprintf("61.%05d2", n)}
	t.Cleanup(func() {
		for _, m := range markers {
			for _, p := range hermetic.Processes(m) {
				var pid int
				if _, err := fmt.Sscanf(p, "%d:", &pid); err == nil && pid > 0 {
					hermetic.Kill(pid, false)
				}
			}
		}
	})
	if o, err := rs.Run(ctx, "setsid sleep "+markers[0]+" >/dev/null 2>&1 < /dev/null &", 10*time.Second); err != nil || o.Running {
		t.Fatalf("setsid sleep: %+v, %v", o, err)
	}
	if o, err := rs.Run(ctx, "sleep "+markers[1]+" | cat", time.Second); err != nil || !o.Running {
		t.Fatalf("sleep | cat: %+v, %v", o, err)
	}
	for _, m := range markers {
		if !waitFor(10*time.Second, func() bool { return len(hermetic.Processes(m)) > 0 }) {
			t.Fatalf("marker %s never ran", m)
		}
	}
	shells := filepath.Join(tmp, "winx", wire.SessionsDirName)
	if entries, _ := filepath.Glob(filepath.Join(shells, "winx-shell-*")); len(entries) != 1 {
		t.Fatalf("private dirs in the guardian's state directory = %v, want one", entries)
	}
	return srv, g, markers, shells
}

// Closing a session (`winx kill`) leaves no descendant, setsid'd ones
// included.
func TestClosedGuardianLeavesNothing(t *testing.T) {
	_, g, markers, _ := lifetimeSession(t)
	f := &Fleet{Dir: filepath.Dir(g.Socket), Hello: wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)}
	if err := f.Close(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	for _, m := range markers {
		if !waitFor(20*time.Second, func() bool { return len(hermetic.Processes(m)) == 0 }) {
			t.Errorf("after winx kill, still running: %v", hermetic.Processes(m))
		}
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && len(b) > i+2 && b[i+2] == 'Z'
}

// A stopped guardian slows nobody: a new key's guardian spawns, discovery
// reports the stopped one as unresponsive with its key, and an ensure of
// its own key answers with the typed unresponsive error.
func TestStoppedGuardianDoesNotBlockEnsure(t *testing.T) {
	dir := socketDir(t)
	serve(t, dir, Policy{})
	hello := wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)
	c := &Client{Socket: filepath.Join(dir, wire.DaemonSocketName), Hello: hello}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	ensure := func(name string) (*EnsureResult, error) {
		work := filepath.Join(t.TempDir(), name)
		os.Mkdir(work, 0o700)
		key := SessionKey{ExternalID: "ws_" + name, Principal: "p", Workspace: work}.String()
		return c.Ensure(ctx, &EnsureParams{Key: key, Dir: work, Workspace: work, Env: testEnv(t)})
	}
	a, err := ensure("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := hermetic.Stop(a.Guardian.PID); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(a.Guardian.PID, syscall.SIGCONT) })
	if b, err := ensure("b"); err != nil || !b.Spawned {
		t.Fatalf("Ensure of another key while a guardian is stopped = %+v, %v", b, err)
	}
	f := &Fleet{Dir: dir, Hello: hello}
	live, bad, err := f.Discover(ctx)
	if err != nil || len(live) != 1 || len(bad) != 1 || bad[0].Stale || bad[0].Key != a.Guardian.Status.Key || bad[0].PID != a.Guardian.PID {
		t.Fatalf("Discover = %+v, %+v, %v; want b live and a unresponsive with its key and pid", live, bad, err)
	}
	var ue *remote.UnresponsiveError
	res, err := c.Ensure(ctx, &EnsureParams{Key: a.Guardian.Status.Key, Dir: a.Guardian.Status.Cwd, Env: testEnv(t)})
	if !errors.As(err, &ue) {
		t.Fatalf("Ensure of the stopped guardian's key = %+v, %v; want an *remote.UnresponsiveError", res, err)
	}
}

// The guardian is the subreaper of its session: a setsid'd orphan is
// reparented to it (not to init), and one that exits is reaped, not left a
// zombie.
func TestGuardianAdoptsAndReapsOrphans(t *testing.T) {
	dir := socketDir(t)
	serve(t, dir, Policy{})
	c := &Client{Socket: filepath.Join(dir, wire.DaemonSocketName), Hello: wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	work := t.TempDir()
	res, err := c.Ensure(ctx, &EnsureParams{Key: SessionKey{ExternalID: "ws_reap", Workspace: work}.String(), Dir: work, Env: testEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Guardian
	rs, err := remote.Attach(ctx, g.Socket, &remote.ClientOptions{Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("30.%d", time.Now().UnixNano()%100000)
	cmd := "for i in 1 2 3; do setsid sh -c 'sleep 0.2' >/dev/null 2>&1 </dev/null & done; setsid sleep " + marker + " >/dev/null 2>&1 </dev/null &"
	if o, err := rs.Run(ctx, cmd, 10*time.Second); err != nil || o.Running {
		t.Fatalf("Run = %+v, %v", o, err)
	}
	var adopted []string
	if !waitFor(10*time.Second, func() bool {
		// The sleep itself, not the setsid that starts it and exits.
		adopted = slices.DeleteFunc(hermetic.Processes(marker), func(p string) bool { return !strings.Contains(p, ": sleep ") })
		return len(adopted) == 1
	}) {
		t.Fatalf("orphan never seen: %v", adopted)
	}
	var pid int
	fmt.Sscanf(adopted[0], "%d:", &pid)
	t.Cleanup(func() {
		if pid > 0 {
			hermetic.Kill(pid, false)
		}
	})
	// Its parent (setsid, which forked it) exits at once.
	if !waitFor(10*time.Second, func() bool { return parentOf(pid) == g.PID }) {
		t.Errorf("the setsid'd orphan's parent is %d, want the guardian %d", parentOf(pid), g.PID)
	}
	if !waitFor(10*time.Second, func() bool { return len(zombiesOf(g.PID)) == 0 }) {
		t.Errorf("zombie children of the guardian: %v", zombiesOf(g.PID))
	}
}

// parentOf reads pid's parent from /proc, or -1.
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	var pp int
	fmt.Sscanf(f[1], "%d", &pp)
	return pp
}

// zombiesOf lists the zombie children of parent.
func zombiesOf(parent int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		if parentOf(pid) == parent && isZombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}
