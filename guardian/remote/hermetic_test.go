package remote

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// hermetic gives this test process, and every process it starts, a
// private HOME, state, config, runtime and temporary directory under dir,
// and no WINX_SOCKET: no test here reaches the user's winxd, sessions,
// sockets or state. The go command's caches stay where they were (they
// follow HOME otherwise), so builds the tests run stay warm.
func hermetic(dir string) error {
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
