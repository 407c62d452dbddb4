package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"winx/guardian/daemon"
)

// runBuilt runs the built winx with extra environment and returns its
// stdout, stderr and exit code.
func runBuilt(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(buildWinx(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &ee):
		return out.String(), errOut.String(), ee.ExitCode()
	}
	t.Fatalf("winx %v: %v", args, err)
	return "", "", 0
}

// TestOutOfRangeStopsStartUp: a value outside its documented range stops
// winx at start-up with exit 2 and one line naming the variable, and
// `winx doctor` shows it with a warning.
func TestOutOfRangeStopsStartUp(t *testing.T) {
	for _, kv := range []string{"WINX_MAX_GUARDIANS=0", "WINX_READ_PARALLELISM=99", "WINX_SESSION_IDLE_TTL_SECS=-5"} {
		name, _, _ := strings.Cut(kv, "=")
		t.Run(kv, func(t *testing.T) {
			_, stderr, code := runBuilt(t, []string{kv}, "")
			if code != 2 || !strings.HasPrefix(stderr, "winx: "+name+"=") {
				t.Errorf("winx with %s: exit %d, stderr %q; want exit 2 and winx: %s=...", kv, code, stderr, name)
			}
			out, _, _ := runBuilt(t, []string{kv}, "", "doctor")
			if !strings.Contains(out, "  "+kv+" (environment)\n    warning: "+name+"=") {
				t.Errorf("winx doctor with %s printed\n%s\nwant the value with a warning naming it", kv, out)
			}
		})
	}
}

// TestDaemonRefusalReachesAnswer: a winxd that refuses to start (here a
// variable out of range that only it sees) is named in Initialize's answer
// with winxd's own reason, not sent off to WINXD_BIN, and the reason is in
// winxd.log and the exit record.
func TestDaemonRefusalReachesAnswer(t *testing.T) {
	bins := daemonBins(t)
	wrapper := filepath.Join(t.TempDir(), "winxd")
	script := "#!/bin/sh\nWINX_MAX_GUARDIANS=0 exec " + filepath.Join(bins, "winxd") + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := newDaemonEnv(t, "WINXD_BIN="+wrapper)
	a := d.adapter()
	r, _ := a.initialize(t.TempDir(), "")
	if r.Status != "failed" || !strings.Contains(r.Output, "WINX_MAX_GUARDIANS") || strings.Contains(r.Output, "set WINXD_BIN") {
		t.Errorf("Initialize with a winxd that refuses WINX_MAX_GUARDIANS=0 = %+v, want winxd's reason and no WINXD_BIN hint", r)
	}
	for _, f := range []string{daemon.LogFileName, daemon.ExitFileName} {
		b, err := os.ReadFile(filepath.Join(d.state, "winx", f))
		if err != nil || !strings.Contains(string(b), "WINX_MAX_GUARDIANS") {
			t.Errorf("%s = %q, %v; want winxd's reason", f, b, err)
		}
	}
}
