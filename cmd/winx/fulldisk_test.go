package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"winx/pty/testenv"
)

// mountTmpfs mounts a tmpfs of size bytes at dir for the test (root only)
// and unmounts it when the test ends, after the runtime's own cleanups.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Missing(t, "mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

// fill writes to dir until the file system is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			return
		}
	}
}

// TestSessionStartNamesFullDisk: a session that cannot start because its
// state directory's file system is full answers with the cause (no space
// left on device) and the path, not a bare "exit status 1"; in both
// runtimes. Once space is freed, the next Initialize starts.
func TestSessionStartNamesFullDisk(t *testing.T) {
	for _, rt := range []string{"daemon", "embedded"} {
		t.Run(rt, func(t *testing.T) {
			// Mounted first, so that it is unmounted last: the runtime's
			// teardown finds its guardians through the wire secret in it.
			state := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(state, 0o700); err != nil {
				t.Fatal(err)
			}
			mountTmpfs(t, state, "2m")
			d := newDaemonEnv(t, "WINX_RUNTIME="+rt, "XDG_STATE_HOME="+state)
			d.state = state
			a := d.adapter()
			if r, _ := a.initialize(t.TempDir(), ""); r.Status == "error" || r.Status == "failed" {
				t.Fatalf("Initialize before the disk is full = %+v", r)
			}
			fill(t, state)
			r, _ := a.initialize(t.TempDir(), "")
			text := r.Message + r.Output
			if !strings.Contains(text, "no space left on device") || !strings.Contains(text, state) {
				t.Errorf("Initialize on a full disk = %s %s: %q; want the cause and the path", r.Status, r.ErrorCode, text)
			}
			os.Remove(filepath.Join(state, "filler"))
			if r, _ := a.initialize(t.TempDir(), ""); r.Status == "error" || r.Status == "failed" {
				t.Errorf("Initialize after space was freed = %+v", r)
			}
		})
	}
}
