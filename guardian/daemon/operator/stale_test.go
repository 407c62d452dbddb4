package operator

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"winx/guardian/remote"
	"winx/guardian/wire"
	"winx/pty/testenv"
)

// deadGuardian leaves in dir what a guardian killed with SIGKILL leaves: a
// socket nobody listens on, its record, its shell directory and a
// descendant (started with setsid, so it escaped to init) carrying its tag.
func deadGuardian(t *testing.T, dir string) (socket, shellDir string, orphan *exec.Cmd) {
	t.Helper()
	socket = wire.GuardianSocket(dir, "dead-"+t.Name())
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	shellDir, err = os.MkdirTemp("", "winx-shell-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shellDir) })
	tag := remote.NewLaunchID()
	orphan = exec.Command("sleep", "61")
	orphan.Env = []string{remote.EnvTag + "=" + tag}
	orphan.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { orphan.Process.Kill(); orphan.Wait() })
	b, _ := json.Marshal(remote.Record{PID: 1 << 22, Key: "dead", Tag: tag, ShellDir: shellDir})
	if err := os.WriteFile(remote.RecordPath(socket), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return socket, shellDir, orphan
}

// kill --all and prune clean up after dead guardians: what they left runs
// no more, and their sockets and records are gone; their shell directories
// stay, named by a lost-session record.
func TestKillAllAndPruneCleanUpDeadGuardians(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		testenv.Missing(t, "needs /proc")
	}
	for _, c := range []Command{{Name: Kill, All: true}, {Name: Prune}} {
		t.Run(c.Name, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "wxo")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			socket, shellDir, orphan := deadGuardian(t, dir)
			exited := make(chan struct{})
			go func() { orphan.Wait(); close(exited) }()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			err = Run(ctx, c, Options{
				Paths: wire.Paths{Dir: dir, Daemon: filepath.Join(dir, wire.DaemonSocketName)}, Secret: wire.NewSecret(),
				FormatBuild: func(wire.Build) string { return "" }, Getenv: os.Getenv, Stdout: io.Discard,
			})
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			select {
			case <-exited:
			case <-time.After(20 * time.Second):
				t.Errorf("%s left the dead guardian's descendant running", c.Name)
			}
			for _, p := range []string{socket, remote.RecordPath(socket)} {
				if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s left %s (%v)", c.Name, p, err)
				}
			}
			if lost, err := remote.ReadLost(socket); err != nil || lost.ShellDir != shellDir || lost.Reason != remote.LostGuardianDied {
				t.Errorf("%s: lost record = %+v, %v; want one naming %s", c.Name, lost, err, shellDir)
			}
			if _, err := os.Stat(shellDir); err != nil {
				t.Errorf("%s removed the lost session's shell dir: %v", c.Name, err)
			}
		})
	}
}

// prune removes the lost-session records past remote.LostTTL, with the
// shell directories and jobs records they kept, and leaves younger ones.
func TestPruneExpiresLostSessions(t *testing.T) {
	dir, err := os.MkdirTemp("", "wxo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	lose := func(name string, age time.Duration) (socket, shellDir string) {
		socket = wire.GuardianSocket(dir, name)
		shellDir, err := os.MkdirTemp("", "winx-shell-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(shellDir) })
		b, _ := json.Marshal(remote.LostRecord{Key: name, PID: 1 << 22, ShellDir: shellDir,
			Loss: remote.Loss{Reason: remote.LostGuardianDied, Time: time.Now().Add(-age)}})
		if err := os.WriteFile(remote.LostRecordPath(socket), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(remote.JobsRecordPath(socket), []byte(`{"key":"`+name+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return socket, shellDir
	}
	oldSocket, oldDir := lose("old", remote.LostTTL+time.Hour)
	newSocket, newDir := lose("new", time.Hour)
	err = Run(t.Context(), Command{Name: Prune}, Options{
		Paths: wire.Paths{Dir: dir, Daemon: filepath.Join(dir, wire.DaemonSocketName)}, Secret: wire.NewSecret(),
		FormatBuild: func(wire.Build) string { return "" }, Getenv: os.Getenv, Stdout: io.Discard,
	})
	if err != nil {
		t.Fatalf("prune: %v", err)
	}
	for _, p := range []string{remote.LostRecordPath(oldSocket), oldDir, remote.JobsRecordPath(oldSocket)} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("prune left the expired %s (%v)", p, err)
		}
	}
	for _, p := range []string{remote.LostRecordPath(newSocket), newDir, remote.JobsRecordPath(newSocket)} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("prune removed the young %s: %v", p, err)
		}
	}
}
