package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv makes the test binary run TestMissingChild's body.
const childEnv = "WINX_TESTENV_CHILD"

// TestMissingChild runs in a child process only: it calls Missing.
func TestMissingChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs as the child of TestMissing")
	}
	Missing(t, "no %s here", "feature")
	t.Log("Missing returned")
}

// TestMissing: a missing feature fails the test under CI=true and skips it
// otherwise; the message names the feature either way.
func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		ci       string
		wantFail bool
		want     string
	}{
		{"true", true, "--- FAIL: TestMissingChild"},
		{"", false, "--- SKIP: TestMissingChild"},
		{"false", false, "--- SKIP: TestMissingChild"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingChild$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"=1", "CI="+tc.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.wantFail || !strings.Contains(string(out), tc.want) ||
			!strings.Contains(string(out), "no feature here") || strings.Contains(string(out), "Missing returned") {
			t.Errorf("CI=%q: err %v, output:\n%s\nwant %q and the message", tc.ci, err, out, tc.want)
		}
	}
}
