package guardian

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestPrintedOutputPersistedWithinDelay: output the guardian read is on
// disk (journal and screen sidecar together) persistDelay after it was
// read, while the command keeps printing (a flood must not push the flush
// back) and once it falls silent. The bubble's clock is the guardian's: a
// machine too busy to run the guardian delays the reading, not this bound.
// TestKilledGuardianKeepsPrintedOutput (guardian/remote) kills real
// guardians.
func TestPrintedOutputPersistedWithinDelay(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "output-1.txt")
	synctest.Test(t, func(t *testing.T) {
		s := &Shell{}
		c := newCommand(1, "seq", outputConfig{rows: 5, cols: 40, journal: journal, tailBytes: 1 << 20})
		var readAt []time.Time // readAt[i]: when line i+1 was read
		print := func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			c.write([]byte(strconv.Itoa(len(readAt)+1) + "\r\n"))
			readAt = append(readAt, time.Now())
			s.markPrintedLocked(c)
		}
		check := func() {
			synctest.Wait() // a due flush has run
			due := 0
			for i, at := range readAt {
				if time.Since(at) >= persistDelay {
					due = i + 1
				}
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if missing := missingLines(journal, due); missing != "" {
				t.Fatalf("%v after the first line: line %s of %d read at least %v ago is not on disk", time.Since(readAt[0]), missing, due, persistDelay)
			}
		}
		// A flood: a line every 3 ms for ten delays.
		for range 10 * persistDelay / (3 * time.Millisecond) {
			print()
			time.Sleep(3 * time.Millisecond)
			check()
		}
		// Silence.
		time.Sleep(persistDelay)
		check()
	})
}

// missingLines names the first of lines 1..n that neither the journal nor
// its screen sidecar holds, "" when they hold all.
func missingLines(journal string, n int) string {
	j, _ := os.ReadFile(journal)
	sc, _ := os.ReadFile(journal + ScreenSuffix)
	held := map[string]bool{}
	for _, l := range strings.Fields(string(j) + "\n" + string(sc)) {
		held[l] = true
	}
	for i := 1; i <= n; i++ {
		if !held[strconv.Itoa(i)] {
			return strconv.Itoa(i)
		}
	}
	return ""
}
