package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
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
