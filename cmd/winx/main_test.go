package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// binDir holds the winx binary built once for this test process; TestMain
// removes it.
var (
	binDir    string
	buildOnce sync.Once
	builtBin  string
	buildOut  []byte
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("/tmp", "wxc") // short and outside any TMPDIR: socket paths must fit a sockaddr_un
	if err != nil {
		panic(err)
	}
	binDir = dir
	// The go command finds its caches through HOME; pin them first, so the
	// builds these tests run keep the warm caches of the machine.
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output(); err == nil {
		if v := strings.Split(strings.TrimSpace(string(out)), "\n"); len(v) == 3 {
			os.Setenv("GOCACHE", v[0])
			os.Setenv("GOMODCACHE", v[1])
			os.Setenv("GOPATH", v[2])
		}
	}
	// Tests are hermetic: the servers they run in this process or start as
	// children never see the user's home (its shell start-up files, git
	// config), state directory (receipts, saved contexts) or runtime
	// directory (a winxd of the user's own). Each gets a private one here.
	for _, v := range []struct{ name, sub string }{
		{"HOME", "home"},
		{"XDG_STATE_HOME", "state"},
		{"XDG_CONFIG_HOME", "config"},
		{"XDG_RUNTIME_DIR", "run"},
		{"TMPDIR", "tmp"}, // $TMPDIR/winx-<uid> is a socket directory too
	} {
		d := filepath.Join(dir, v.sub)
		if err := os.Mkdir(d, 0o700); err != nil {
			panic(err)
		}
		os.Setenv(v.name, d)
	}
	os.Unsetenv("WINX_SOCKET")
	// Most tests here start winx with no winxd next to it, so they run the
	// embedded runtime; the daemon tests set WINX_RUNTIME=daemon in the
	// environment of the processes they start.
	os.Setenv("WINX_RUNTIME", "embedded")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildWinx builds this package's binary once per test process and returns
// its path.
func buildWinx(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		builtBin = filepath.Join(binDir, "winx")
		buildOut, buildErr = exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput()
	})
	if buildErr != nil {
		tb.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return builtBin
}
