package main

import (
	"strings"
	"syscall"
	"testing"

	"winx/guardian/wire/hermetic"
)

// A stopped guardian answers guardian_unresponsive within the call's wait
// plus the grace (the adapter's tool helper allows 30 s), another session
// of the same adapter keeps answering, and `winx list` shows the stopped
// session as unresponsive.
func TestDaemonStoppedGuardianIsUnresponsive(t *testing.T) {
	d := newDaemonEnv(t)
	a := d.adapter()
	sa, sb := a.mustInit(t.TempDir()), a.mustInit(t.TempDir())
	gpid := 0
	for _, e := range d.list() {
		if e.ShellPID == sa.ShellPID {
			gpid = e.PID
		}
	}
	if gpid == 0 {
		t.Fatalf("no guardian of shell %d in winx list", sa.ShellPID)
	}
	if err := hermetic.Stop(gpid); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(gpid, syscall.SIGCONT) })
	if r := a.bash(sa, command("echo hi"), 2); r.ErrorCode != "guardian_unresponsive" {
		t.Fatalf("BashCommand on a stopped guardian = %+v, want guardian_unresponsive", r)
	}
	if r := a.bash(sb, command("echo other"), 10); exitCode(r) != 0 || !strings.HasPrefix(r.Output, "other") {
		t.Fatalf("the other session = %+v", r)
	}
	found := false
	for _, e := range d.list() {
		if e.PID == gpid {
			found = e.Unresponsive
		}
	}
	if !found {
		t.Errorf("winx list does not show guardian %d as unresponsive: %+v", gpid, d.list())
	}
}
