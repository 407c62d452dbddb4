//go:build linux

package sandbox

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"winx/pty/testenv"
)

// readOnlyBash runs script in bash -c through argv (a launcher vector from
// ReadOnly), with HOME, WS, TMPF and PORT set, and returns its combined
// output and error.
func readOnlyBash(t *testing.T, argv []string, env []string) (string, error) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), launcherEnv+"=1", "LC_ALL=C"), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestReadOnlyShellWritesNothing starts real bash through the launcher with
// the read-only ruleset, alone and stacked on the sandbox policy, and runs
// every kind of write: nothing lands, reading and /dev/null still work.
func TestReadOnlyShellWritesNothing(t *testing.T) {
	abi := requireLandlock(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		testenv.Missing(t, "no bash: %v", err)
	}
	home, err := os.MkdirTemp("/var/tmp", "winx-readonly-home-")
	if err != nil {
		testenv.Missing(t, "no /var/tmp for a home directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	ws := filepath.Join(home, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "keep"), []byte("keep-me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := realTempDir(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:")
	env := []string{"HOME=" + home, "WS=" + ws, "TMPF=" + tmp, "PORT=" + port}

	writes := []struct{ name, script string }{
		{"touch in the workspace", `touch "$WS/m1"`},
		{"redirect in the workspace", `echo x > "$WS/m2"`},
		{"append to a file", `echo x >> "$WS/keep"`},
		{"mkdir in the workspace", `mkdir "$WS/m3"`},
		{"symlink", `ln -s /etc/passwd "$WS/m4"`},
		{"hard link", `ln "$WS/keep" "$WS/m5"`},
		{"rename", `mv "$WS/keep" "$WS/m6"`},
		{"copy", `cp "$WS/keep" "$WS/m7"`},
		{"truncate", `truncate -s 0 "$WS/keep"`},
		{"remove", `rm -f "$WS/keep"`},
		{"write in /tmp", `echo x > "$TMPF/m8"`},
		{"write in home", `echo x > "$HOME/m9"`},
		{"mkfifo", `mkfifo "$TMPF/m10"`},
		{"grandchild", `bash -c 'echo x > "$WS/m11"'`},
		{"here-string through a temp file", `cat > "$WS/m12" <<< x`},
	}
	if abi >= 4 {
		writes = append(writes, struct{ name, script string }{"tcp connect", `exec 3<>/dev/tcp/127.0.0.1/$PORT && echo connected`})
	} else {
		t.Logf("Landlock ABI %d < 4: TCP connect not confined, not checked", abi)
	}

	// The sandbox policy granted writes in the workspace and /tmp; the
	// read-only ruleset on top takes them away again.
	p := Policy{Home: home, RW: []string{ws, tmp}}
	profiles := []struct {
		name string
		argv func(cmd []string) []string
	}{
		{"read-only", func(cmd []string) []string { return ReadOnly(os.Args[0], cmd, ReadOnlyOptions{}) }},
		{"policy+read-only", func(cmd []string) []string {
			return ReadOnly(os.Args[0], Launcher(os.Args[0], p, cmd), ReadOnlyOptions{})
		}},
	}
	for _, pr := range profiles {
		for _, w := range writes {
			out, err := readOnlyBash(t, pr.argv([]string{bash, "-c", w.script}), env)
			if err == nil {
				t.Errorf("%s: %s: %s succeeded (%q); want it denied", pr.name, w.name, w.script, out)
			}
		}
		for _, ok := range []struct{ name, script, want string }{
			{"/dev/null", `echo x > /dev/null && echo null-ok`, "null-ok"},
			{"read the workspace", `cat "$WS/keep"`, "keep-me"},
			{"read /etc", `head -c 4 /etc/passwd >/dev/null && echo etc-ok`, "etc-ok"},
			{"no_new_privs", `grep NoNewPrivs /proc/self/status`, "NoNewPrivs:\t1"},
		} {
			out, err := readOnlyBash(t, pr.argv([]string{bash, "-c", ok.script}), env)
			if err != nil || !strings.Contains(out, ok.want) {
				t.Errorf("%s: %s: %s = %v, %q; want success with %q", pr.name, ok.name, ok.script, err, out, ok.want)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, "keep")); err != nil || string(b) != "keep-me\n" {
		t.Errorf("workspace file after the read-only shells = %q, %v; want it untouched", b, err)
	}
	for _, dir := range []string{ws, tmp, home} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "m") {
				t.Errorf("%s was created from a read-only shell", filepath.Join(dir, e.Name()))
			}
		}
	}
	if len(accepted) > 0 {
		t.Errorf("a read-only shell connected to 127.0.0.1:%s %d times", port, len(accepted))
	}
}

func TestReadOnlyArgv(t *testing.T) {
	self := "/bin/winx"
	got := ReadOnly(self, []string{"/bin/bash", "-i"}, ReadOnlyOptions{})
	want := []string{self, LauncherArg, readOnlyFlag, "--", "/bin/bash", "-i"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ReadOnly(plain) = %q, want %q", got, want)
	}
	stacked := ReadOnly(self, Launcher(self, Policy{Home: "/h"}, []string{"/bin/bash"}), ReadOnlyOptions{})
	want = []string{self, LauncherArg, readOnlyFlag, policyFlag, "--home", "/h", "--", "/bin/bash"}
	if strings.Join(stacked, " ") != strings.Join(want, " ") {
		t.Errorf("ReadOnly(Launcher(...)) = %q, want %q", stacked, want)
	}
	o := ReadOnlyOptions{Hide: []string{"/h/state"}, Readable: []string{"/h/state/pub"}}
	hidden := ReadOnly(self, Launcher(self, Policy{Home: "/h", DenyNetwork: true}, []string{"/bin/bash"}), o)
	want = []string{self, LauncherArg, readOnlyFlag, "--readonly-hide", "/h/state", "--readonly-readable", "/h/state/pub",
		policyFlag, "--home", "/h", "--deny-network", "--", "/bin/bash"}
	if strings.Join(hidden, " ") != strings.Join(want, " ") {
		t.Errorf("ReadOnly(Launcher(...), hide) = %q, want %q", hidden, want)
	}
	l, err := parseLauncher(hidden[2:])
	if err != nil || !l.policy || !l.readOnly || !l.p.DenyNetwork || !slices.Equal(l.ro.Hide, o.Hide) || !slices.Equal(l.ro.Readable, o.Readable) {
		t.Errorf("parseLauncher(%q) = %+v, %v; want both rulesets, deny-network and the hidden paths", hidden[2:], l, err)
	}
	// A launcher given no ruleset never runs its command.
	if err := RunLauncher([]string{"--", "/bin/true"}); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("RunLauncher with no ruleset = %v, want ErrInvalidPolicy", err)
	}
}
