// Package benchenv is what the benchmark commands share about the servers
// they start: a throwaway home for them, so that the user's state, sockets
// and daemon are never touched, and the end of every process they left.
package benchenv

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Isolate points HOME, the XDG directories and WINX_SOCKET of this process,
// and so of every server it starts, into tmp, and gives the home an empty
// rc file: a shell's start-up is winx's own share only.
func Isolate(tmp string) error {
	for _, kv := range [][2]string{
		{"HOME", "home"}, {"XDG_RUNTIME_DIR", "run"}, {"XDG_STATE_HOME", "state"},
		{"XDG_CONFIG_HOME", "config"}, {"XDG_CACHE_HOME", "cache"}, {"XDG_DATA_HOME", "data"},
	} {
		dir := filepath.Join(tmp, kv[1])
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		os.Setenv(kv[0], dir)
	}
	if err := os.WriteFile(filepath.Join(tmp, "home", ".bashrc"), nil, 0o600); err != nil {
		return err
	}
	os.Setenv("WINX_SOCKET", filepath.Join(tmp, "run", "winxd.sock"))
	return nil
}

// StopServers sends SIGTERM to the processes whose command line names a
// path under tmp: the winxd and guardians a run started, and nothing else.
func StopServers(tmp string) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(tmp+string(filepath.Separator))) {
			continue
		}
		if p, err := os.FindProcess(pid); err == nil {
			p.Signal(syscall.SIGTERM)
		}
	}
}
