package remote

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/guardian"
)

// TestKilledGuardianKeepsPrintedOutput kills a guardian with SIGKILL at
// random points of a command that prints and counts what the journal and
// its screen sidecar hold afterwards: always a gapless run of the first
// lines, and at least every line an answer showed before the kill (an
// answer leaves only once what it shows is on disk). The kill points come
// from the answers, not from the clock: a busy machine changes where the
// kill lands, not what must hold. The bound for output nobody asked about
// (on disk within persistDelay of being read) is
// guardian.TestPrintedOutputPersistedWithinDelay, on a bubble's clock. The
// review's run found an empty journal after 3,000 lines and a sleep, and the
// last 64 KiB lost after 80,000.
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
		// Half the runs flood, half print a few thousand lines and wait on
		// a FIFO nobody opens.
		cmd := "seq 1 3000000"
		if run%2 == 1 {
			fifo := filepath.Join(work, "never")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd = "seq 1 " + strconv.Itoa(1000+rand.IntN(5000)) + "; read -r _ < " + fifo
		}
		o, err := r.Run(ctxT(t), cmd, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		seen := lastLineShown(o)
		for range rand.IntN(20) {
			o, err = r.Poll(ctxT(t), o.Generation, time.Duration(rand.IntN(50))*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			seen = max(seen, lastLineShown(o))
		}
		kept, j, sc, err := killAndCount(p, rec)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		t.Logf("run %d: the answers showed up to line %d, %d lines on disk (%d bytes of journal, %d of screen)",
			run, seen, kept, len(j), len(sc))
		if kept < seen {
			t.Errorf("run %d: %d lines on disk, but an answer before the kill showed line %d", run, kept, seen)
		}
		os.RemoveAll(rec.ShellDir)
	}
}

// killAndCount SIGKILLs the guardian p, ends what it left running, and
// counts the first lines of seq's output its journal and screen sidecar
// hold (onDisk), which it returns with them.
func killAndCount(p *Process, rec Record) (kept int, journal, screen []byte, err error) {
	syscall.Kill(p.PID, syscall.SIGKILL)
	<-p.Done()
	KillTagged(rec.Tag)
	path := filepath.Join(rec.ShellDir, "output-1.txt")
	journal, _ = os.ReadFile(path)
	screen, _ = os.ReadFile(path + ".screen")
	kept, err = onDisk(journal, screen)
	return kept, journal, screen, err
}

// lastLineShown is the highest of seq's lines complete in o's text; the
// open line at the cursor may be only part of its number.
func lastLineShown(o *guardian.Outcome) int {
	lines := strings.Split(o.Output.Text, "\n")
	if o.Output.Open {
		lines = lines[:len(lines)-1]
	}
	top := 0
	for _, l := range lines {
		if n, err := strconv.Atoi(strings.TrimSpace(l)); err == nil {
			top = max(top, n)
		}
	}
	return top
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

// BenchmarkKilledGuardianLostAge measures on the wall clock what
// TestKilledGuardianKeepsPrintedOutput bounds through answers: a guardian
// is killed 100 to 1,000 ms into a flood nobody polls (seq through tee,
// which writes each line to a progress file after the terminal), and the
// age at the kill of the oldest line it lost is reported: printed, not on
// disk. It is the persist delay plus what the guardian had not read from
// the terminal yet and the time the machine gave it, so it belongs to a
// quiet machine's benchmark, not to an assertion.
func BenchmarkKilledGuardianLostAge(b *testing.B) {
	var ages []time.Duration
	for b.Loop() {
		p, work := spawn(b)
		r := attach(b, p.Socket)
		rec, err := ReadRecord(p.Socket)
		if err != nil || rec.ShellDir == "" {
			b.Fatalf("record: %+v, %v", rec, err)
		}
		progress := filepath.Join(work, "progress")
		if _, err := r.Run(ctxT(b), "seq 1 3000000 | tee "+progress, 50*time.Millisecond); err != nil {
			b.Fatal(err)
		}
		type sample struct {
			at   time.Time
			size int64
		}
		var samples []sample
		killAt := time.Now().Add(time.Duration(100+rand.IntN(900)) * time.Millisecond)
		for time.Now().Before(killAt) {
			if fi, err := os.Stat(progress); err == nil {
				// Taken after the size: a line seems printed later, not
				// earlier, than it was.
				samples = append(samples, sample{time.Now(), fi.Size()})
			}
			time.Sleep(2 * time.Millisecond)
		}
		killed := time.Now() // before the kill: a lost line seems younger, not older
		kept, _, _, err := killAndCount(p, rec)
		if err != nil {
			b.Fatal(err)
		}
		// The first lost line ends at byte end of the progress file; it was
		// printed no later than the first sample that holds it.
		printed, _ := os.ReadFile(progress)
		end, n := -1, 0
		for i, c := range printed {
			if c == '\n' {
				if n++; n == kept+1 {
					end = i + 1
					break
				}
			}
		}
		age := time.Duration(0)
		for _, s := range samples {
			if end > 0 && s.size >= int64(end) {
				age = killed.Sub(s.at)
				break
			}
		}
		ages = append(ages, age)
		os.RemoveAll(rec.ShellDir)
	}
	slices.Sort(ages)
	b.ReportMetric(float64(ages[len(ages)/2])/float64(time.Millisecond), "p50-lost-age-ms")
	b.ReportMetric(float64(ages[len(ages)-1])/float64(time.Millisecond), "max-lost-age-ms")
}
