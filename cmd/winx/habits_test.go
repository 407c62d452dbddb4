package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIHabits runs the built winx the way a newcomer types it: each
// answer is short, says what is wrong as `winx: <what>: <why>`, and exits
// 0, 2 for usage and configuration, or 1 for a runtime failure.
func TestCLIHabits(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		env        []string
		wantCode   int
		wantStdout string // a line or part of one; "" checks nothing
		wantStderr string // "" wants it empty
		maxStderr  int    // lines; 0 means any
	}{
		// "winx <version>": "(devel)" in a build without VCS stamps, the
		// module version and revision in one with them.
		{"--version", []string{"--version"}, nil, 0, "winx ", "", 0},
		{"version", []string{"version"}, nil, 0, "winx ", "", 0},
		{"help", []string{"help"}, nil, 0, "  --http\n", "", 0},
		{"help lists jobs", []string{"help"}, nil, 0, "| jobs [thread] |", "", 0},
		{"unknown flag", []string{"--bogus"}, nil, 2, "", "winx: flag provided but not defined: -bogus\nrun 'winx --help' for usage\n", 2},
		{"unknown flag of a command", []string{"list", "--bogus"}, nil, 2, "", "winx: flag provided but not defined: -bogus\n", 2},
		{"report without a log", []string{"report"}, []string{"WINX_USAGE_LOG="}, 2, "", "winx: report: no usage log", 1},
		{"jobs of no session", []string{"jobs", "nope"}, nil, 1, "", "winx: no session matches \"nope\"", 1},
		{"unknown shell", nil, []string{"WINX_SHELL=fish"}, 2, "", "winx: WINX_SHELL=\"fish\": not bash, zsh", 1},
		{"relative socket", nil, []string{"WINX_SOCKET=rel"}, 2, "", "winx: WINX_SOCKET=\"rel\": not an absolute path", 1},
		// The flag and the path once, then why: a configuration error.
		{"missing token file", []string{"serve", "--http", "--token-file", "/nonexistent"}, nil, 2, "", "winx: --token-file /nonexistent: no such file or directory\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runBuilt(t, tt.env, "", tt.args...)
			if code != tt.wantCode {
				t.Errorf("winx %q: exit %d, want %d (stderr %q)", tt.args, code, tt.wantCode, stderr)
			}
			if tt.wantStdout != "" && !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("winx %q: stdout %q, want it to contain %q", tt.args, stdout, tt.wantStdout)
			}
			if tt.wantStderr == "" && stderr != "" || !strings.HasPrefix(stderr, tt.wantStderr) {
				t.Errorf("winx %q: stderr %q, want it to start with %q", tt.args, stderr, tt.wantStderr)
			}
			if n := strings.Count(stderr, "\n"); tt.maxStderr > 0 && n > tt.maxStderr {
				t.Errorf("winx %q: %d lines on stderr, want at most %d:\n%s", tt.args, n, tt.maxStderr, stderr)
			}
			if (tt.name == "version" || tt.name == "--version") && (!strings.HasPrefix(stdout, "winx ") || strings.Count(stdout, "\n") != 1) {
				t.Errorf("winx %q: stdout %q, want one line \"winx <version>\"", tt.args, stdout)
			}
			if strings.Contains(stdout+stderr, "winx winx") {
				t.Errorf("winx %q says winx twice: %q %q", tt.args, stdout, stderr)
			}
		})
	}
}

// TestKillAllOtherStateDir: `winx kill --all` run with another state
// directory than the sessions' (sudo, a unit with its own XDG_STATE_HOME,
// so another wire secret) cannot end them; it says so and exits non-zero
// instead of reporting nothing, and the session is still there.
func TestKillAllOtherStateDir(t *testing.T) {
	d := newDaemonEnv(t)
	a := d.adapter()
	a.mustInit(t.TempDir())
	cmd := exec.Command(filepath.Join(d.bins, "winx"), "kill", "--all")
	cmd.Env = append(append([]string(nil), d.env...), "XDG_STATE_HOME="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "keeps running") {
		t.Errorf("winx kill --all from another state directory: %v, stderr %q; want exit 1 naming the guardian that keeps running", err, stderr.String())
	}
	if out := stderr.String(); !strings.HasPrefix(out, "winx: kill: ") {
		t.Errorf("stderr %q, want winx: kill: ...", out)
	}
	if l := d.list(); len(l) != 1 {
		t.Errorf("after the refused kill, sessions = %+v, want the one session", l)
	}
}
