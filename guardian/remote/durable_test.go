package remote

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKilledGuardianKeepsPrintedOutput kills a guardian with SIGKILL at
// random points of a command that prints (through tee, which also writes
// every line to a progress file) and counts what the journal and its screen
// sidecar hold afterwards: always a gapless run of the first lines, and at
// least everything printed 100 ms before the kill. The review's run found
// an empty journal after 3,000 lines and a sleep, and the last 64 KiB lost
// after 80,000.
func TestKilledGuardianKeepsPrintedOutput(t *testing.T) {
	runs := 12
	if testing.Short() {
		runs = 4
	}
	for run := 0; run < runs; run++ {
		p, work := spawn(t)
		r := attach(t, p.Socket)
		rec, err := ReadRecord(p.Socket)
		if err != nil || rec.ShellDir == "" {
			t.Fatalf("record: %+v, %v", rec, err)
		}
		progress := filepath.Join(work, "progress")
		// Half the runs flood, half print a few thousand lines and rest.
		cmd := "seq 1 400000 | tee " + progress
		if run%2 == 1 {
			cmd = "seq 1 " + strconv.Itoa(1000+rand.IntN(5000)) + " | tee " + progress + "; sleep 30"
		}
		if _, err := r.Run(ctxT(t), cmd, 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		type sample struct {
			at   time.Time
			size int64
		}
		var samples []sample
		killAt := time.Now().Add(time.Duration(100+rand.IntN(900)) * time.Millisecond)
		for time.Now().Before(killAt) {
			if fi, err := os.Stat(progress); err == nil {
				samples = append(samples, sample{time.Now(), fi.Size()})
			}
			time.Sleep(5 * time.Millisecond)
		}
		syscall.Kill(p.PID, syscall.SIGKILL)
		killed := time.Now()
		<-p.Done()
		KillTagged(rec.Tag) // what the dead guardian left running
		// Everything printed 100 ms before the kill must be on disk.
		var due int64
		for _, s := range samples {
			if killed.Sub(s.at) >= 100*time.Millisecond {
				due = s.size
			}
		}
		printed, _ := os.ReadFile(progress)
		dueLines := bytes.Count(printed[:min(int(due), len(printed))], []byte("\n"))
		journal := filepath.Join(rec.ShellDir, "output-1.txt")
		j, _ := os.ReadFile(journal)
		sc, _ := os.ReadFile(journal + ".screen")
		kept, err := onDisk(j, sc)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		t.Logf("run %d: %d lines printed by the kill, %d of them 100 ms before it, %d on disk (%d bytes of journal, %d of screen)",
			run, bytes.Count(printed, []byte("\n")), dueLines, kept, len(j), len(sc))
		if kept < dueLines {
			t.Errorf("run %d: %d lines on disk, but %d were printed at least 100 ms before the kill", run, kept, dueLines)
		}
		os.RemoveAll(rec.ShellDir)
	}
}

// onDisk checks what a killed guardian left of seq's output, the journal
// j and its screen sidecar sc, and returns how many of the first lines
// they hold together. The journal is lines 1..J, but for a last line the
// kill cut in the middle of its write (a torn write of the buffer, written
// less than a flush interval before); the sidecar is a run of consecutive
// lines, written with the journal flushed, so it starts at most one past
// the journal's end, and may end with the line at the cursor, printed in
// part.
func onDisk(j, sc []byte) (int, error) {
	if i := bytes.LastIndexByte(j, '\n'); i+1 < len(j) {
		j = j[:i+1] // the torn last line
	}
	n := 0
	for _, l := range strings.Fields(string(j)) {
		if l != strconv.Itoa(n+1) {
			return 0, fmt.Errorf("journal line %d is %q: lines lost or doubled", n+1, l)
		}
		n++
	}
	screen := strings.Fields(string(sc))
	if len(screen) == 0 {
		return n, nil
	}
	first, err := strconv.Atoi(screen[0])
	if err != nil || first > n+1 {
		return 0, fmt.Errorf("the screen starts at %q after %d journal lines: a gap", screen[0], n)
	}
	for i, l := range screen {
		want := strconv.Itoa(first + i)
		if i == len(screen)-1 && l != want && strings.HasPrefix(want, l) {
			// The line at the cursor, still being printed.
			screen = screen[:i]
			break
		}
		if l != want {
			return 0, fmt.Errorf("screen line %d is %q, want %s", i, l, want)
		}
	}
	return max(n, first+len(screen)-1), nil
}
