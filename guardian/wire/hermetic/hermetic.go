// Package hermetic gives a test process private home, state, config,
// runtime and temporary directories, so that no test reaches the user's
// winxd, sessions, sockets or state directory, or depends on what runs
// there. It is for tests only.
package hermetic

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Setup points this process, and every process it starts, at a private
// HOME, XDG_STATE_HOME, XDG_CONFIG_HOME, XDG_RUNTIME_DIR and TMPDIR under
// dir, and unsets WINX_SOCKET. The go command's caches stay where they
// were (they follow HOME otherwise), so builds the tests run stay warm.
func Setup(dir string) error {
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output(); err == nil {
		if v := strings.Split(strings.TrimSpace(string(out)), "\n"); len(v) == 3 {
			os.Setenv("GOCACHE", v[0])
			os.Setenv("GOMODCACHE", v[1])
			os.Setenv("GOPATH", v[2])
		}
	}
	for _, v := range []struct{ name, sub string }{
		{"HOME", "home"}, {"XDG_STATE_HOME", "state"}, {"XDG_CONFIG_HOME", "config"},
		{"XDG_RUNTIME_DIR", "run"}, {"TMPDIR", "tmp"},
	} {
		d := filepath.Join(dir, v.sub)
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
		os.Setenv(v.name, d)
	}
	os.Unsetenv("WINX_SOCKET")
	return nil
}

// TempDir makes a private directory for Setup. It is under /tmp, not
// $TMPDIR: short, so socket paths beneath it fit a sockaddr_un.
func TempDir(prefix string) (string, error) {
	return os.MkdirTemp("/tmp", prefix)
}

// Main runs the tests of m after Setup in a fresh directory, removes the
// directory and exits with the tests' code: a package's TestMain.
func Main(m *testing.M) {
	dir, err := TempDir("wxh")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := Setup(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Processes lists the live processes whose command line contains marker,
// each as "PID: command line": what a test looks for to prove a process
// it started is gone.
func Processes(marker string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// Kill sends SIGKILL to the process pid, or to the process group -pid when
// group is set, unless pid names nothing (0 or less: kill(2) would signal
// this test's own process group, or every process) or this very process. A
// test that cleans up after itself gets pids from a peer's answer, and an
// in-process server answers with this process's own pid.
func Kill(pid int, group bool) {
	if pid <= 0 || pid == os.Getpid() {
		return
	}
	if group {
		pid = -pid
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// Stop sends SIGSTOP to the process pid and waits (at most 10 s) until
// every thread of it has stopped. kill(2) returns before the stop takes
// effect: on a loaded machine a thread running on another CPU goes on for
// a while and may still answer requests, which a test that means "this
// process answers nothing now" must not see. Continue it with SIGCONT.
func Stop(pid int) error {
	if pid <= 0 || pid == os.Getpid() {
		return fmt.Errorf("hermetic: will not stop pid %d", pid)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for !allStopped(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("hermetic: pid %d did not stop within 10 s", pid)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// allStopped reports whether every thread of pid is stopped (state T).
func allStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			return false
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) || b[i+2] != 'T' {
			return false
		}
	}
	return true
}
