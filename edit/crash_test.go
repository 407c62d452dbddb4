package edit

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/evidence"
)

const (
	crashEnv   = "WINX_EDIT_CRASH_FILE"
	crashReady = "winx-edit-crash-helper-ready"
)

// crashContents are the two versions the helper alternates between: 2 MiB
// each (1 MiB under the race detector), differing in every line, so a mix is detectable anywhere.
func crashContents() (a, b []byte) {
	line := strings.Repeat("x", 60)
	var ba, bb bytes.Buffer
	size := 2 << 20
	if raceEnabled {
		size = 1 << 20
	}
	for ba.Len() < size {
		ba.WriteString("A " + line + "\n")
		bb.WriteString("B " + line + "\n")
	}
	return ba.Bytes(), bb.Bytes()
}

// TestCrashHelper is the subprocess of TestCrashAtomicity: it replaces the
// file named by $WINX_EDIT_CRASH_FILE in a loop until it is killed.
func TestCrashHelper(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	a, b := crashContents()
	ledger := evidence.NewLedger(0)
	e, err := NewEngine(EngineOptions{Ledger: ledger, Paths: &rootChecker{root: filepath.Dir(path)}})
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		if n == 1 {
			fmt.Println(crashReady) // one write done: the parent may start its timer
		}
		s, err := evidence.ReadSnapshot(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		ledger.Record(s.Path, s.Revision, evidence.All)
		next := a
		if s.Bytes[0] == 'A' {
			next = b
		}
		p, err := e.Plan([]FileEdit{{Path: path, Mode: ModeReplace, Content: string(next)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Commit(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrashAtomicity kills a writer with SIGKILL at random points 200 times:
// the file is always wholly the old or the new bytes, and after the next
// engine write in the directory no temp file is left.
func TestCrashAtomicity(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 200 processes")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "big.txt")
	a, b := crashContents()
	if err := os.WriteFile(path, a, 0o644); err != nil {
		t.Fatal(err)
	}
	seen := map[byte]int{}
	maxTemps := 0
	runs := 200
	if raceEnabled {
		runs = 40 // about 1 s per run under the race detector
	}
	// The budget bounds the test on a loaded machine; the property is
	// checked on every run made, and at least minRuns must be made.
	const minRuns = 10
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; i < runs; i++ {
		if time.Now().After(deadline) {
			if i < minRuns {
				t.Fatalf("only %d runs in the time budget", i)
			}
			t.Logf("time budget reached after %d of %d runs", i, runs)
			runs = i
			break
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for the helper's first completed write, so start-up time
		// (slow under -race) does not eat the kill window.
		sc := bufio.NewScanner(out)
		for sc.Scan() && sc.Text() != crashReady {
		}
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		io.Copy(io.Discard, out)
		cmd.Wait()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("run %d: the file is neither version (%d bytes)", i, len(got))
		}
		seen[got[0]]++
		ents, _ := filepath.Glob(filepath.Join(dir, TempPrefix+"*"))
		maxTemps = max(maxTemps, len(ents))
	}
	t.Logf("%d kills: ended as A %d times, as B %d times; at most %d temp files between runs", runs, seen['A'], seen['B'], maxTemps)
	if seen['A'] == 0 || seen['B'] == 0 {
		t.Errorf("the helper never completed a write or never was cut: %v", seen)
	}

	// The next start: one engine write in the directory sweeps the leftovers.
	ledger := evidence.NewLedger(0)
	e, err := NewEngine(EngineOptions{Ledger: ledger, Paths: &rootChecker{root: dir}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Plan([]FileEdit{{Path: filepath.Join(dir, "other.txt"), Mode: ModeReplace, Content: "x\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Commit(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if ents, _ := filepath.Glob(filepath.Join(dir, TempPrefix+"*")); len(ents) != 0 {
		t.Errorf("temp files left after the next write: %v", ents)
	}
}
