package evidence

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

var (
	revA = RevisionOf([]byte("a"))
	revB = RevisionOf([]byte("b"))
)

func TestLedgerMissing(t *testing.T) {
	tests := []struct {
		name    string
		records []Range // all at revA of "p"
		want    Range
		missing []Range
	}{
		{"nothing recorded but rev", []Range{{}}, Range{1, 10}, []Range{{1, 10}}},
		{"covered exactly", []Range{{1, 10}}, Range{1, 10}, nil},
		{"covered inside", []Range{{1, 10}}, Range{3, 4}, nil},
		{"tail missing", []Range{{1, 10}}, Range{5, 15}, []Range{{11, 15}}},
		{"head missing", []Range{{5, 10}}, Range{1, 7}, []Range{{1, 4}}},
		{"hole", []Range{{1, 3}, {7, 10}}, Range{1, 10}, []Range{{4, 6}}},
		{"adjacent merge", []Range{{1, 3}, {4, 6}}, Range{1, 6}, nil},
		{"overlap merge", []Range{{5, 8}, {1, 6}}, Range{1, 8}, nil},
		{"bridge merges three", []Range{{1, 2}, {8, 9}, {3, 7}}, Range{1, 9}, nil},
		{"many holes", []Range{{2, 2}, {4, 4}, {6, 6}}, Range{1, 7}, []Range{{1, 1}, {3, 3}, {5, 5}, {7, 7}}},
		{"open record covers open want", []Range{{5, 0}}, Range{7, 0}, nil},
		{"open record, want before", []Range{{5, 0}}, Range{1, 0}, []Range{{1, 4}}},
		{"open want, tail missing", []Range{{1, 10}}, Range{1, 0}, []Range{{11, 0}}},
		{"open want, hole and tail", []Range{{1, 3}, {6, 8}}, Range{2, 0}, []Range{{4, 5}, {9, 0}}},
		{"open record merges later", []Range{{10, 12}, {3, 0}}, Range{1, 100}, []Range{{1, 2}}},
		{"closed record adjacent to open", []Range{{5, 0}, {1, 4}}, Range{1, 0}, nil},
		{"want start below 1", []Range{{2, 3}}, Range{-5, 3}, []Range{{1, 1}}},
		{"want start 0", []Range{{2, 3}}, Range{0, 3}, []Range{{1, 1}}},
		{"zero want", []Range{{2, 3}}, Range{}, nil},
		{"empty want", []Range{{1, 3}}, Range{5, 4}, nil},
		{"want past coverage", []Range{{1, 3}}, Range{20, 30}, []Range{{20, 30}}},
		{"invalid record ignored", []Range{{5, 2}}, Range{1, 5}, []Range{{1, 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Ledger
			for _, r := range tt.records {
				l.Record("p", revA, r)
			}
			missing, known, seen := l.Missing("p", revA, tt.want)
			if !slices.Equal(missing, tt.missing) || !known || seen != revA {
				t.Errorf("Missing(%v) after %v = %v, %v, %.15s, want %v, true, revA", tt.want, tt.records, missing, known, seen, tt.missing)
			}
			if got := l.Covers("p", revA, tt.want); got != (len(tt.missing) == 0) {
				t.Errorf("Covers(%v) = %v, want %v", tt.want, got, len(tt.missing) == 0)
			}
		})
	}
}

func TestLedgerRevisions(t *testing.T) {
	var l Ledger
	missing, known, seen := l.Missing("p", revA, Range{1, 5})
	if !slices.Equal(missing, []Range{{1, 5}}) || known || seen != "" {
		t.Errorf("Missing(never read) = %v, %v, %q, want [1-5], false, empty", missing, known, seen)
	}
	l.Record("p", revA, Range{1, 10})
	missing, known, seen = l.Missing("p", revB, Range{1, 5})
	if !slices.Equal(missing, []Range{{1, 5}}) || !known || seen != revA {
		t.Errorf("Missing(other rev) = %v, %v, %.15s, want [1-5], true, revA", missing, known, seen)
	}
	if l.Covers("p", revB, Range{1, 5}) {
		t.Error("Covers at another revision = true")
	}
	// A new revision replaces the old coverage entirely.
	l.Record("p", revB, Range{3, 4})
	if l.Covers("p", revA, Range{1, 1}) {
		t.Error("old revision still covered after a new one was recorded")
	}
	missing, _, seen = l.Missing("p", revB, Range{1, 5})
	if !slices.Equal(missing, []Range{{1, 2}, {5, 5}}) || seen != revB {
		t.Errorf("Missing after new revision = %v, %.15s, want [1-2 5-5], revB", missing, seen)
	}
	// A zero record registers the revision (an empty file was read).
	l.Record("e", revA, Range{})
	missing, known, seen = l.Missing("e", revA, Range{})
	if missing != nil || !known || seen != revA {
		t.Errorf("Missing(empty file, zero want) = %v, %v, %.15s, want nil, true, revA", missing, known, seen)
	}
	l.Forget("p")
	if _, known, _ := l.Missing("p", revB, Range{1, 1}); known {
		t.Error("Forget left the path known")
	}
}

func TestLedgerEviction(t *testing.T) {
	l := NewLedger(3)
	for i := range 5 {
		l.Record(fmt.Sprint(i), revA, All)
	}
	// 0 and 1 are evicted. Re-recording 2 makes it newest, so 3 goes next.
	l.Record("2", revA, Range{1, 1})
	l.Record("5", revA, All)
	for i, want := range []bool{false, false, true, false, true, true} {
		if _, known, _ := l.Missing(fmt.Sprint(i), revA, All); known != want {
			t.Errorf("path %d known = %v, want %v", i, known, want)
		}
	}
	if l.Len() != 3 {
		t.Errorf("Len() = %d, want 3", l.Len())
	}
	var zero Ledger
	for i := range DefaultLedgerPaths + 10 {
		zero.Record(fmt.Sprint(i), revA, All)
	}
	if zero.Len() != DefaultLedgerPaths {
		t.Errorf("zero Ledger Len() = %d, want %d", zero.Len(), DefaultLedgerPaths)
	}
}

func TestLedgerConcurrent(t *testing.T) {
	l := NewLedger(16)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				p := fmt.Sprint(i % 20)
				l.Record(p, revA, Range{i%50 + 1, i%50 + 3})
				l.Missing(p, revA, Range{1, 60})
				if g == 0 && i%100 == 0 {
					l.Forget(p)
				}
			}
		})
	}
	wg.Wait()
	if l.Len() > 16 {
		t.Errorf("Len() = %d, over the limit", l.Len())
	}
}

// TestLedgerChangesFollowEncode checks that Changes moves exactly when
// Encode's output may differ: every step below either changes the encoding
// and the count, or neither.
func TestLedgerChangesFollowEncode(t *testing.T) {
	l := NewLedger(0)
	steps := []struct {
		name string
		do   func()
	}{
		{"new path", func() { l.Record("/p", revA, Range{1, 10}) }},
		{"same lines again", func() { l.Record("/p", revA, Range{1, 10}) }},
		{"lines inside", func() { l.Record("/p", revA, Range{3, 4}) }},
		{"more lines", func() { l.Record("/p", revA, Range{11, 20}) }},
		{"second path", func() { l.Record("/q", revA, Range{}) }},
		{"first path to the front", func() { l.Record("/p", revA, Range{1, 2}) }},
		{"front path again", func() { l.Record("/p", revA, Range{1, 2}) }},
		{"new revision", func() { l.Record("/p", revB, Range{1, 2}) }},
		{"forget unknown", func() { l.Forget("/none") }},
		{"forget", func() { l.Forget("/q") }},
		{"decode nothing new", func() { l.Decode(l.Encode()) }},
		{"decode a path", func() {
			other := NewLedger(0)
			other.Record("/r", revA, Range{1, 1})
			l.Decode(other.Encode())
		}},
	}
	enc, at := l.Encode(), l.Changes()
	for _, s := range steps {
		s.do()
		nenc, nat := l.Encode(), l.Changes()
		if encChanged, countChanged := string(nenc) != string(enc), nat != at; encChanged != countChanged {
			t.Errorf("%s: encoding changed %v, count changed %v (%d -> %d)", s.name, encChanged, countChanged, at, nat)
		}
		enc, at = nenc, nat
	}
}
