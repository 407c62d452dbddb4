package edit

import (
	"bufio"
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
	batchCrashEnv   = "WINX_EDIT_BATCH_CRASH_DIR"
	batchCrashReady = "winx-edit-batch-helper-ready"
	batchFiles      = 40
)

// batchEdits is the batch of the crash test: every file of dir replaced
// by its "new" version. Both the killed writer and the replaying engine
// (another process, as a new adapter is) build it the same way, so it is
// the identical call.
func batchEdits(dir string) []FileEdit {
	edits := make([]FileEdit, batchFiles)
	for i := range edits {
		edits[i] = FileEdit{Path: filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), Mode: ModeReplace, Content: batchContent(i, "new")}
	}
	return edits
}

func batchContent(i int, version string) string {
	return strings.Repeat(fmt.Sprintf("%s %02d\n", version, i), 64)
}

// batchEngine is an engine of dir's installation whose ledger has seen
// every file of the batch whole in its old version, as the model that
// made the call had (a session's ledger outlives its adapter).
func batchEngine(t testing.TB, dir string) *Engine {
	t.Helper()
	ledger := evidence.NewLedger(0)
	for i, ed := range batchEdits(filepath.Join(dir, "ws")) {
		ledger.Record(ed.Path, evidence.RevisionOf([]byte(batchContent(i, "old"))), evidence.All)
	}
	e, err := NewEngine(EngineOptions{Ledger: ledger, Paths: &rootChecker{root: filepath.Join(dir, "ws")},
		StateDir: filepath.Join(dir, "state"), Session: "alice/s1"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestBatchCrashHelper is the subprocess of TestBatchCrashReplay: it
// commits the batch once and waits to be killed.
func TestBatchCrashHelper(t *testing.T) {
	dir := os.Getenv(batchCrashEnv)
	if dir == "" {
		t.Skip("helper process only")
	}
	e := batchEngine(t, dir)
	p, err := e.Plan(batchEdits(filepath.Join(dir, "ws")))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(batchCrashReady)
	if _, err := e.Commit(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Minute)
}

// batchState counts the files of the batch that hold their old and new
// versions.
func batchState(t *testing.T, ws string) (old, new int) {
	t.Helper()
	for i := range batchFiles {
		b, err := os.ReadFile(filepath.Join(ws, fmt.Sprintf("f%02d.txt", i)))
		if err != nil {
			t.Fatal(err)
		}
		switch string(b) {
		case batchContent(i, "old"):
			old++
		case batchContent(i, "new"):
			new++
		default:
			t.Fatalf("f%02d.txt is neither version: %q", i, b)
		}
	}
	return old, new
}

// TestBatchCrashReplay kills a writer at a random point of a 40-file batch,
// then has another process's engine (a new adapter) act: the identical call
// finishes the batch (all new, answered as recovered), another call naming
// one of its files rolls it back first (all old). No run may leave a mixed
// batch.
func TestBatchCrashReplay(t *testing.T) {
	runs := 50
	if testing.Short() || raceEnabled {
		runs = 10
	}
	var mixedAtKill, recovered, mixedAfter int
	deadline := time.Now().Add(90 * time.Second)
	for run := 0; run < runs; run++ {
		if time.Now().After(deadline) {
			if run < 10 {
				t.Fatalf("only %d runs in the time budget", run)
			}
			t.Logf("time budget reached after %d of %d runs", run, runs)
			runs = run
			break
		}
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		ws := filepath.Join(dir, "ws")
		if err := os.Mkdir(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range batchFiles {
			if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%02d.txt", i)), []byte(batchContent(i, "old")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestBatchCrashHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), batchCrashEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		for sc.Scan() && sc.Text() != batchCrashReady {
		}
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		io.Copy(io.Discard, out)
		cmd.Wait()
		if o, n := batchState(t, ws); o > 0 && n > 0 {
			mixedAtKill++
		}

		e := batchEngine(t, dir)
		if run%5 == 4 {
			// Another access to one of the files, an edit or a read: the
			// interrupted batch is rolled back first.
			target := filepath.Join(ws, "f07.txt")
			if run%10 == 4 {
				if _, err := e.Plan([]FileEdit{{Path: target, Mode: ModeReplace, Content: batchContent(7, "old")}}); err != nil {
					t.Fatalf("run %d: another call: %v", run, err)
				}
			} else if err := e.Settle([]string{target}); err != nil {
				t.Fatalf("run %d: settle before a read: %v", run, err)
			}
			if Interrupted(filepath.Join(dir, "state")) {
				t.Errorf("run %d: an interrupted batch is left after another access", run)
			}
			if o, n := batchState(t, ws); n > 0 && o > 0 {
				mixedAfter++
				t.Errorf("run %d: after another call planned, %d old and %d new", run, o, n)
			}
			continue
		}
		p, err := e.Plan(batchEdits(ws))
		if err != nil {
			t.Fatalf("run %d: replay: %v", run, err)
		}
		res, err := e.Commit(context.Background(), p)
		if err != nil {
			t.Fatalf("run %d: replay commit: %v", run, err)
		}
		if res.Recovered {
			recovered++
		}
		if o, n := batchState(t, ws); o != 0 || n != batchFiles {
			mixedAfter++
			t.Errorf("run %d: after the replay, %d old and %d new", run, o, n)
		}
		if ents, _ := os.ReadDir(filepath.Join(dir, "state", intentDir)); len(ents) != 0 {
			t.Errorf("run %d: intent records left: %v", run, ents)
		}
	}
	t.Logf("%d kills: %d left the batch mixed at the kill, %d replays finished an interrupted batch, %d mixed after the replay or rollback",
		runs, mixedAtKill, recovered, mixedAfter)
	if mixedAtKill == 0 {
		t.Logf("no kill landed mid-batch in this run (the property was still checked on every run)")
	}
}
