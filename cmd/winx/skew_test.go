package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/guardian/daemon"
	"winx/guardian/wire"
)

// Two builds of the three binaries that differ only in their build
// identity: the version stamped at link time (package cmd/internal/buildid).
const (
	oldStamp = "v0.0.1-skew-old"
	newStamp = "v0.0.2-skew-new"
)

// stampedBins builds winx, winxd and winx-guardian stamped with version
// into dir.
func stampedBins(tb testing.TB, dir, version string) string {
	tb.Helper()
	out, err := exec.Command("go", "build", "-o", dir+"/", "-ldflags", "-X winx/cmd/internal/buildid.stamp="+version,
		"winx/cmd/winx", "winx/cmd/winxd", "winx/cmd/winx-guardian").CombinedOutput()
	if err != nil {
		tb.Fatalf("go build (%s): %v\n%s", version, err, out)
	}
	return dir
}

// winxd returns the hello of the winxd that answers in d.
func (d *daemonEnv) winxd() wire.Hello {
	d.tb.Helper()
	secret, err := wire.LoadSecret(filepath.Join(d.state, "winx", wire.SecretFileName))
	if err != nil {
		d.tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := &daemon.Client{Socket: filepath.Join(d.sock, wire.DaemonSocketName), Hello: wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(secret)}
	peer, err := c.Ping(ctx)
	if err != nil {
		d.tb.Fatalf("winxd does not answer: %v", err)
	}
	return peer
}

// TestDaemonSkewRestartsOlderWinxd: an adapter of a new build that finds
// the winxd of an older build restarts it into its own build (guardians
// keep running) instead of talking to it across builds; the older build's
// guardian keeps serving its session, a command it runs keeps its output,
// and doctor names both builds. Two adapters of different builds do not
// take turns restarting winxd: each restarts it at most once per interval.
func TestDaemonSkewRestartsOlderWinxd(t *testing.T) {
	base := filepath.Join(binDir, "skew")
	oldEnv := newDaemonEnvWith(t, stampedBins(t, filepath.Join(base, "old"), oldStamp))
	newEnv := *oldEnv // the same socket directory, state and home
	newEnv.bins = stampedBins(t, filepath.Join(base, "new"), newStamp)

	root := t.TempDir()
	a := oldEnv.adapter()
	s := a.mustInit(root)
	if r := a.bash(s, command("sleep 3; echo done-old"), 0.5); r.Status != "running" {
		t.Fatalf("sleep 3 after 0.5 s: status %q (%s), want running", r.Status, r.Message)
	}
	before := oldEnv.winxd()
	if before.Build.Version != oldStamp {
		t.Fatalf("winxd build %+v, want version %s", before.Build, oldStamp)
	}

	b := newEnv.adapter()
	r2, s2 := b.initialize(root, "")
	if r2.Status != "completed" || s2.ShellPID != s.ShellPID {
		t.Fatalf("Initialize from the new build = %+v %+v; want the same shell %d", r2, s2, s.ShellPID)
	}
	after := newEnv.winxd()
	if after.PID == before.PID || after.Build.Version != newStamp {
		t.Fatalf("winxd after the new build's Initialize: pid %d build %+v; want a new pid (was %d) of version %s",
			after.PID, after.Build, before.PID, newStamp)
	}
	if !waitGone(before.PID, 20*time.Second) {
		t.Errorf("the old winxd (pid %d) still runs", before.PID)
	}
	done := b.waitDone(s2)
	if !strings.Contains(done.Output, "done-old") || exitCode(done) != 0 {
		t.Errorf("status_check through the restarted winxd = %q exit %d (%s), want done-old, exit 0", done.Output, exitCode(done), done.Message)
	}

	// The new winxd lists the older build's guardian, and doctor names
	// the build of every process.
	l := newEnv.list()
	if len(l) != 1 || l[0].ShellPID != s.ShellPID || !strings.Contains(l[0].Build, oldStamp) || l[0].SameBuild {
		t.Errorf("winx list of the new build = %+v; want the old build's guardian", l)
	}
	doc, err := newEnv.winx("doctor")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"this binary is winx " + newStamp, "MIXED BUILD: winx " + oldStamp, "winxd: answering on", "same build: winx " + newStamp} {
		if !strings.Contains(doc, want) {
			t.Errorf("doctor lacks %q:\n%s", want, doc)
		}
	}
	// A new session of the new build gets a guardian of the new build.
	b.mustInit(t.TempDir())
	var builds []string
	for _, e := range newEnv.list() {
		builds = append(builds, e.Build)
	}
	if len(builds) != 2 || !strings.Contains(strings.Join(builds, "|"), newStamp) {
		t.Errorf("guardian builds after a new session: %q; want one of each build", builds)
	}

	// The restart-loop guard: the old adapter (which never restarted
	// winxd) restarts it back into its build once; the new adapter, which
	// restarted it moments ago, then talks to it across builds instead of
	// restarting it again.
	a.mustInit(t.TempDir())
	back := oldEnv.winxd()
	if back.PID == after.PID || back.Build.Version != oldStamp {
		t.Fatalf("winxd after the old build's Initialize: pid %d build %+v; want a new winxd of version %s", back.PID, back.Build, oldStamp)
	}
	b.mustInit(t.TempDir())
	if again := newEnv.winxd(); again.PID != back.PID {
		t.Errorf("the new adapter restarted winxd again within the interval: pid %d -> %d", back.PID, again.PID)
	}
}
