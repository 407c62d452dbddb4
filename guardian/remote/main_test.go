package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"winx/guardian/wire"
	"winx/guardian/wire/hermetic"
)

// guardianBin is the winx-guardian binary built once by TestMain.
var guardianBin string

// testSecret is the wire secret of every guardian the tests spawn.
var testSecret = wire.NewSecret()

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("/tmp", "wxbin") // short and outside any TMPDIR: socket paths must fit a sockaddr_un
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := hermetic.Setup(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	guardianBin = filepath.Join(dir, "winx-guardian")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(gobin, "build", "-o", guardianBin, "winx/cmd/winx-guardian").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build winx-guardian: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// shortDir is a private directory with a path short enough for sockets.
func shortDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "wxr")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// testEnv is a minimal environment whose HOME is empty, so no user rc file
// shapes the shell.
func testEnv(tb testing.TB) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tb.TempDir(), "LANG=C.UTF-8"}
}

// spawn starts a guardian process; it is stopped (SIGTERM) when the test ends.
func spawn(tb testing.TB) (*Process, string) {
	tb.Helper()
	work := tb.TempDir()
	cfg := Config{Secret: testSecret, Key: "test-" + tb.Name(), Socket: wire.GuardianSocket(shortDir(tb), tb.Name()), Dir: work}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Spawn(ctx, guardianBin, cfg, testEnv(tb))
	if err != nil {
		tb.Fatalf("Spawn: %v", err)
	}
	tb.Cleanup(func() {
		syscall.Kill(p.PID, syscall.SIGTERM)
		select {
		case <-p.Done():
		case <-time.After(10 * time.Second):
			syscall.Kill(p.PID, syscall.SIGKILL)
			<-p.Done()
		}
	})
	return p, work
}

func attach(tb testing.TB, socket string) *RemoteShell {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := Attach(ctx, socket, &ClientOptions{Secret: testSecret, Build: wire.Build{Module: "winx-test"}})
	if err != nil {
		tb.Fatalf("Attach: %v", err)
	}
	return r
}

func ctxT(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// eventually polls cond for up to d; real processes need real time to exit.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
