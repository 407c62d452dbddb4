package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// runMainEnv makes the test binary behave as the real command, so the exit
// status seen by a shell is tested too.
const runMainEnv = "WINX_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		panic("main returned without os.Exit")
	}
	os.Exit(m.Run())
}

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantErr    error // nil means success
		wantStdout string
		wantStderr []string
	}{
		{
			name:       "version",
			args:       []string{"--version"},
			wantStdout: "winxd winx ",
		},
		{
			name:       "version single dash",
			args:       []string{"-version"},
			wantStdout: "winxd winx ",
		},
		{
			name:    "no arguments",
			args:    nil,
			wantErr: errNotImplemented,
			wantStderr: []string{
				"winxd: role control plane, version winx ",
				"not implemented yet: the durable daemon arrives with the durable sessions work",
			},
		},
		{
			name:       "unknown flag",
			args:       []string{"--listen", "x"},
			wantErr:    errUsage,
			wantStderr: []string{"flag provided but not defined: -listen", "usage: winxd"},
		},
		{
			name:       "extra argument",
			args:       []string{"serve"},
			wantErr:    errUsage,
			wantStderr: []string{`unexpected argument "serve"`, "usage: winxd"},
		},
		{
			name:       "help",
			args:       []string{"-h"},
			wantErr:    flag.ErrHelp,
			wantStderr: []string{"usage: winxd"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			if tt.wantErr == nil && err != nil {
				t.Fatalf("run(%q) = %v, want nil", tt.args, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("run(%q) = %v, want %v", tt.args, err, tt.wantErr)
			}
			if tt.wantStdout == "" && stdout.Len() > 0 {
				t.Errorf("run(%q) stdout = %q, want empty", tt.args, stdout.String())
			}
			if !strings.HasPrefix(stdout.String(), tt.wantStdout) {
				t.Errorf("run(%q) stdout = %q, want prefix %q", tt.args, stdout.String(), tt.wantStdout)
			}
			if tt.wantStdout != "" {
				line := stdout.String()
				if !strings.HasSuffix(line, " "+runtime.Version()+"\n") || strings.Count(line, "\n") != 1 {
					t.Errorf("run(%q) stdout = %q, want one line ending in %q", tt.args, line, runtime.Version())
				}
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("run(%q) stderr = %q, want it to contain %q", tt.args, stderr.String(), want)
				}
			}
		})
	}
}

func TestExitStatus(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"--version"}, 0},
		{[]string{"--help"}, 0},
		{nil, 2},
		{[]string{"--bogus"}, 2},
		{[]string{"serve"}, 2},
	}
	for _, tt := range tests {
		cmd := exec.Command(exe, tt.args...)
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		out, err := cmd.CombinedOutput()
		got := 0
		if err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("winxd %q: %v", tt.args, err)
			}
			got = ee.ExitCode()
		}
		if got != tt.want {
			t.Errorf("winxd %q exit status = %d, want %d; output:\n%s", tt.args, got, tt.want, out)
		}
	}
}
