package placeholder

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var commands = []Command{{Name: "winxd", Role: "control plane"}, {Name: "winx-guardian", Role: "session guardian"}}

func TestRun(t *testing.T) {
	for _, c := range commands {
		tests := []struct {
			name       string
			args       []string
			wantErr    error // nil means success
			wantStdout string
			wantStderr []string
		}{
			{name: "version", args: []string{"--version"}, wantStdout: c.Name + " winx "},
			{name: "version single dash", args: []string{"-version"}, wantStdout: c.Name + " winx "},
			{name: "no arguments", wantErr: ErrNotImplemented, wantStderr: []string{
				c.Name + ": role " + c.Role + ", version winx ",
				"not implemented yet: the durable daemon arrives with the durable sessions work",
			}},
			{name: "unknown flag", args: []string{"--listen", "x"}, wantErr: ErrUsage,
				wantStderr: []string{"flag provided but not defined: -listen", "usage: " + c.Name}},
			{name: "extra argument", args: []string{"serve"}, wantErr: ErrUsage,
				wantStderr: []string{`unexpected argument "serve"`, "usage: " + c.Name}},
			{name: "help", args: []string{"-h"}, wantErr: flag.ErrHelp, wantStderr: []string{"usage: " + c.Name}},
		}
		for _, tt := range tests {
			t.Run(c.Name+"/"+tt.name, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				err := c.Run(context.Background(), tt.args, &stdout, &stderr)
				if tt.wantErr == nil && err != nil {
					t.Fatalf("Run(%q) = %v, want nil", tt.args, err)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("Run(%q) = %v, want %v", tt.args, err, tt.wantErr)
				}
				if tt.wantStdout == "" && stdout.Len() > 0 {
					t.Errorf("Run(%q) stdout = %q, want empty", tt.args, stdout.String())
				}
				if tt.wantStdout != "" {
					line := stdout.String()
					if !strings.HasPrefix(line, tt.wantStdout) || !strings.HasSuffix(line, " "+runtime.Version()+"\n") || strings.Count(line, "\n") != 1 {
						t.Errorf("Run(%q) stdout = %q, want one line %q... ending in %q", tt.args, line, tt.wantStdout, runtime.Version())
					}
				}
				for _, want := range tt.wantStderr {
					if !strings.Contains(stderr.String(), want) {
						t.Errorf("Run(%q) stderr = %q, want it to contain %q", tt.args, stderr.String(), want)
					}
				}
			})
		}
	}
}

// TestExitStatus builds the real binaries and checks what a shell sees.
func TestExitStatus(t *testing.T) {
	dir := t.TempDir()
	for _, c := range commands {
		bin := filepath.Join(dir, c.Name)
		if out, err := exec.Command("go", "build", "-o", bin, "winx/cmd/"+c.Name).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", c.Name, err, out)
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
			out, err := exec.Command(bin, tt.args...).CombinedOutput()
			got := 0
			if err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatalf("%s %q: %v", c.Name, tt.args, err)
				}
				got = ee.ExitCode()
			}
			if got != tt.want {
				t.Errorf("%s %q exit status = %d, want %d; output:\n%s", c.Name, tt.args, got, tt.want, out)
			}
		}
	}
}
