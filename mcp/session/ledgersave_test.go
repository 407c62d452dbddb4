package session

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"winx/evidence"
)

// A ledger that did not change since it was saved is not written again
// (reading the same file twice costs no file creation); a changed one is.
func TestSaveLedgerSkipsUnchanged(t *testing.T) {
	revA := evidence.Revision("sha256:" + strings.Repeat("a", 64))
	revB := evidence.Revision("sha256:" + strings.Repeat("b", 64))
	s := &Session{Ledger: evidence.NewLedger(0)}
	s.ledgerFile.path = filepath.Join(t.TempDir(), "ledgers", "s.json")
	inode := func() uint64 {
		t.Helper()
		fi, err := os.Stat(s.ledgerFile.path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	s.Ledger.Record("/w/a.go", revA, evidence.Range{Start: 1, End: 3})
	s.SaveLedger()
	first := inode()
	s.Ledger.Record("/w/a.go", revA, evidence.Range{Start: 1, End: 3})
	s.SaveLedger()
	if got := inode(); got != first {
		t.Errorf("an unchanged ledger was written again (inode %d, then %d)", first, got)
	}
	s.Ledger.Record("/w/b.go", revB, evidence.Range{Start: 1, End: 1})
	s.SaveLedger()
	if got := inode(); got == first {
		t.Error("a changed ledger was not written")
	}
	b, _ := os.ReadFile(s.ledgerFile.path)
	l := evidence.NewLedger(0)
	if err := l.Decode(b); err != nil || l.Len() != 2 {
		t.Errorf("saved ledger: %d entries, %v", l.Len(), err)
	}
}
