package guardian

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/pty/sandbox"
	"winx/pty/testenv"
)

// launcherEnv makes the test binary act as the Landlock launcher, as winx
// and winx-guardian do when their first argument is sandbox.LauncherArg.
const launcherEnv = "WINX_GUARDIAN_TEST_LAUNCHER"

func TestMain(m *testing.M) {
	if os.Getenv(launcherEnv) == "1" && len(os.Args) > 1 && os.Args[1] == sandbox.LauncherArg {
		err := sandbox.RunLauncher(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(126)
	}
	os.Exit(m.Run())
}

// newProfileSession starts a real bash in ws whose HOME is home, able to
// take the read-only profile through this test binary as launcher.
func newProfileSession(t *testing.T, shell, home, ws string) *Shell {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := NewShell(ctx, Options{
		Shell:       shell,
		Dir:         ws,
		PrivateRoot: t.TempDir(),
		Env:         []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", launcherEnv + "=1"},
		Shape:       ShapeOptions{ScratchDir: filepath.Join(t.TempDir(), "scratch")},
		Launcher:    os.Args[0],
	})
	if err != nil {
		t.Fatalf("NewShell: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSessionKeepsNoHistory runs commands in sessions whose ~/.bashrc (or
// ~/.zshrc) points HISTFILE at the user's history file and appends to it at
// every prompt and command; the file must stay byte-identical.
func TestSessionKeepsNoHistory(t *testing.T) {
	for _, tc := range []struct{ shell, rc, hist, rcBody string }{
		{ShellBash, ".bashrc", ".bash_history",
			"HISTFILE=\"$HOME/.bash_history\"\nHISTSIZE=1000\nHISTFILESIZE=1000\nshopt -s histappend\nset -o history\ntrap 'history -a' DEBUG\n"},
		{ShellZsh, ".zshrc", ".zsh_history",
			"HISTFILE=\"$HOME/.zsh_history\"\nSAVEHIST=1000\nHISTSIZE=1000\nsetopt INC_APPEND_HISTORY SHARE_HISTORY\n"},
	} {
		t.Run(tc.shell, func(t *testing.T) {
			if tc.shell == ShellZsh {
				if _, err := os.Stat("/usr/bin/zsh"); err != nil {
					if _, err := os.Stat("/bin/zsh"); err != nil {
						t.Skip("no zsh")
					}
				}
			}
			home := t.TempDir()
			hist := filepath.Join(home, tc.hist)
			before := []byte("ls\ncd /srv\n: an older command\n")
			if err := os.WriteFile(hist, before, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, tc.rc), []byte(tc.rcBody), 0o600); err != nil {
				t.Fatal(err)
			}
			s := newProfileSession(t, tc.shell, home, t.TempDir())
			for _, cmd := range []string{"echo one", "HISTFILE=$HOME/" + tc.hist + " 2>/dev/null; echo two", "history -a 2>/dev/null; fc -W 2>/dev/null; echo three"} {
				run(t, s, cmd, 10*time.Second)
			}
			if _, err := s.Respawn(context.Background(), ShellProfile{}); err != nil {
				t.Fatalf("Respawn: %v", err)
			}
			run(t, s, "echo four", 10*time.Second)
			s.Close()
			if after, err := os.ReadFile(hist); err != nil || !bytes.Equal(after, before) {
				t.Errorf("%s after a session = %q, %v; want it byte-identical to %q", tc.hist, after, err, before)
			}
		})
	}
}

// TestRespawnDropsShellState defines an alias, a function, a variable and
// a PROMPT_COMMAND-like trap in one shell; a respawn starts a shell where
// none applies (the marker file is never created), at the same cwd.
func TestRespawnDropsShellState(t *testing.T) {
	ws := t.TempDir()
	s := newProfileSession(t, ShellBash, t.TempDir(), ws)
	marker := filepath.Join(ws, "F")
	run(t, s, "cd "+shellQuote(ws)+" && mkdir -p sub && cd sub", 10*time.Second)
	for _, def := range []string{
		`alias ls='touch ` + marker + `'`,
		`cat() { touch ` + marker + `; }`,
		`trap 'touch ` + marker + `' DEBUG`,
		`export MARKVAR=set`,
	} {
		run(t, s, def, 10*time.Second)
	}
	os.Remove(marker) // the DEBUG trap fired for the definitions after it
	if _, err := s.Respawn(context.Background(), ShellProfile{Env: []string{"WINX_PROFILE_TEST=1"}}); err != nil {
		t.Fatalf("Respawn: %v", err)
	}
	o := run(t, s, "shopt -s expand_aliases; ls >/dev/null; cat /dev/null; echo \"var=${MARKVAR-unset} env=$WINX_PROFILE_TEST\"; pwd", 10*time.Second)
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("%s was created after the respawn: a definition of the old shell survived", marker)
	}
	if !strings.Contains(o.Output.Text, "var=unset env=1") || !strings.Contains(o.Output.Text, filepath.Join(ws, "sub")) {
		t.Errorf("after Respawn: %q; want var=unset env=1 and the old cwd %s", o.Output.Text, filepath.Join(ws, "sub"))
	}
}

// TestRespawnReadOnly switches a session's shell to the read-only profile,
// where no command can write, and back.
func TestRespawnReadOnly(t *testing.T) {
	if _, err := sandbox.Probe(); err != nil {
		testenv.Missing(t, "Landlock unavailable: %v", err)
	}
	ws := t.TempDir()
	s := newProfileSession(t, ShellBash, t.TempDir(), ws)
	ctx := context.Background()
	conf, err := s.Respawn(ctx, ShellProfile{Level: LevelReadOnly, Env: RestrictedGitEnv()})
	if err != nil || !conf.ReadOnly || conf.Unavailable != "" {
		t.Fatalf("Respawn(read-only) = %+v, %v; want a kernel-enforced read-only shell", conf, err)
	}
	marker := filepath.Join(ws, "F")
	o := run(t, s, "touch F; echo x > F2; mkdir D; echo ok > /dev/null && echo null-ok; git config --get core.hooksPath", 10*time.Second)
	if !strings.Contains(o.Output.Text, "null-ok") || !strings.Contains(o.Output.Text, "/dev/null") {
		t.Errorf("read-only shell output %q; want /dev/null writable and core.hooksPath /dev/null", o.Output.Text)
	}
	if id, err := s.StartBackground(ctx, "touch "+marker+".bg"); err == nil {
		s.PollBackground(ctx, id, 5*time.Second)
	}
	for _, f := range []string{marker, filepath.Join(ws, "F2"), filepath.Join(ws, "D"), marker + ".bg"} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written from the read-only shell", f)
		}
	}
	// A running command blocks a respawn.
	if _, err := s.Run(ctx, "sleep 30", 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Respawn(ctx, ShellProfile{}); !errors.Is(err, ErrCommandRunning) {
		t.Errorf("Respawn while a command runs = %v, want ErrCommandRunning", err)
	}
	s.Interrupt(ctx, 5*time.Second)
	if conf, err := s.Respawn(ctx, ShellProfile{}); err != nil || conf.ReadOnly {
		t.Fatalf("Respawn(unrestricted) = %+v, %v", conf, err)
	}
	run(t, s, "touch F", 10*time.Second)
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the unrestricted shell after the read-only one could not write: %v", err)
	}
}

// TestReadOnlyWithoutLauncher: a read-only profile where the launcher is
// missing starts a shell and says why the kernel layer is absent.
func TestReadOnlyWithoutLauncher(t *testing.T) {
	s := newTestSession(t, "")
	conf, err := s.Respawn(context.Background(), ShellProfile{Level: LevelReadOnly})
	if err != nil || conf.ReadOnly || conf.Unavailable == "" {
		t.Errorf("Respawn(read-only) without a launcher = %+v, %v; want a shell and the reason", conf, err)
	}
}

// TestReadOnlyStacksOnSandbox: with the sandbox policy on (Options.WrapArgv
// through the launcher), the read-only profile joins the same launcher: the
// workspace the policy made writable is read-only, and writable again after
// a respawn without the profile.
func TestReadOnlyStacksOnSandbox(t *testing.T) {
	if _, err := sandbox.Probe(); err != nil {
		testenv.Missing(t, "Landlock unavailable: %v", err)
	}
	home, err := os.MkdirTemp("/var/tmp", "winx-guardian-home-")
	if err != nil {
		testenv.Missing(t, "no /var/tmp for a home directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	ws := t.TempDir()
	policy, err := sandbox.PolicyFromEnv(ws, func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := NewShell(ctx, Options{
		Dir:         ws,
		PrivateRoot: t.TempDir(),
		Env:         []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", launcherEnv + "=1"},
		Shape:       ShapeOptions{ScratchDir: filepath.Join(t.TempDir(), "scratch")},
		Launcher:    os.Args[0],
		WrapArgv: func(argv []string, own OwnDirs) ([]string, error) {
			return sandbox.Launcher(os.Args[0], own.Grant(policy), argv), nil
		},
		Profile: ShellProfile{Level: LevelReadOnly},
	})
	if err != nil {
		t.Fatalf("NewShell: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	o := run(t, s, "touch F; echo code=$?; ls "+shellQuote(home)+" >/dev/null 2>&1; echo home=$?", 10*time.Second)
	if !strings.Contains(o.Output.Text, "code=1") || !strings.Contains(o.Output.Text, "home=2") {
		t.Errorf("sandbox+read-only shell: %q; want the write and the home listing denied", o.Output.Text)
	}
	if _, err := os.Stat(filepath.Join(ws, "F")); err == nil {
		t.Errorf("the sandbox+read-only shell wrote in the workspace")
	}
	if _, err := s.Respawn(ctx, ShellProfile{}); err != nil {
		t.Fatal(err)
	}
	run(t, s, "touch F", 10*time.Second)
	if _, err := os.Stat(filepath.Join(ws, "F")); err != nil {
		t.Errorf("the sandbox shell without the read-only profile could not write in the workspace: %v", err)
	}
}

// BenchmarkRespawn measures a mode change's fresh shell: unrestricted, and
// read-only through the Landlock launcher.
func BenchmarkRespawn(b *testing.B) {
	for _, p := range []struct {
		name    string
		profile ShellProfile
	}{{"unrestricted", ShellProfile{}}, {"readonly", ShellProfile{Level: LevelReadOnly, Env: RestrictedGitEnv()}}} {
		b.Run(p.name, func(b *testing.B) {
			if p.profile.Level == LevelReadOnly {
				if _, err := sandbox.Probe(); err != nil {
					testenv.Missing(b, "Landlock unavailable: %v", err)
				}
			}
			s, err := NewShell(context.Background(), Options{
				Dir:         b.TempDir(),
				PrivateRoot: b.TempDir(),
				Env:         []string{"HOME=" + b.TempDir(), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", launcherEnv + "=1"},
				Launcher:    os.Args[0],
			})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() {
				if _, err := s.Respawn(context.Background(), p.profile); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
