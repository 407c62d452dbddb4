package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
	dir, err := os.MkdirTemp("", "winx-cmd-test-")
	if err != nil {
		panic(err)
	}
	binDir = dir
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
