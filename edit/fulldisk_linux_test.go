package edit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"winx/evidence"
	"winx/pty/testenv"
)

// TestBatchOnFullDiskRestores is the review's full-disk case: a two-file
// batch on a full file system replaced a.txt, failed on b.txt and answered
// that nothing was rolled back. Now the first file is restored and the
// error says so. A real tmpfs, filled until the second file's new bytes
// cannot be written.
func TestBatchOnFullDiskRestores(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	root := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", root).CombinedOutput(); err != nil {
		testenv.Missing(t, "mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", root).Run() })
	ws := filepath.Join(root, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	ledger := evidence.NewLedger(0)
	e, err := NewEngine(EngineOptions{Ledger: ledger, Paths: &rootChecker{root: ws}, StateDir: t.TempDir(), Session: "alice/s1"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(ws, "a.txt"), filepath.Join(ws, "b.txt")
	oldA, oldB := "a old\n", "b old\n"
	for p, c := range map[string]string{a: oldA, b: oldB} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := evidence.ReadSnapshot(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		ledger.Record(p, s.Revision, evidence.All)
	}
	plan, err := e.Plan([]FileEdit{
		{Path: a, Mode: ModeReplace, Content: "a new\n"},
		{Path: b, Mode: ModeReplace, Content: strings.Repeat("b new line\n", 40000)}, // 440 KB
	})
	if err != nil {
		t.Fatal(err)
	}
	// Leave a few pages: enough for a.txt's new bytes, not for b.txt's.
	filler, err := os.Create(filepath.Join(root, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(root, &st); err != nil {
			t.Fatal(err)
		}
		if int64(st.Bavail)*st.Bsize < 64<<10 {
			break
		}
		if _, err := filler.Write(make([]byte, 16<<10)); err != nil {
			break
		}
	}
	filler.Close()
	_, err = e.Commit(context.Background(), plan)
	var ce *CommitError
	if !errors.As(err, &ce) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Commit on a full disk = %v, want a *CommitError wrapping ENOSPC", err)
	}
	if len(ce.Committed) != 0 || len(ce.RolledBack) != 1 || ce.RolledBack[0] != a || ce.RestoreErr != nil {
		t.Errorf("CommitError: committed %v, rolled back %v (%v); want a.txt restored", ce.Committed, ce.RolledBack, ce.RestoreErr)
	}
	for p, want := range map[string]string{a: oldA, b: oldB} {
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
}
