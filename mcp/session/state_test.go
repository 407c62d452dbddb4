package session

import (
	"fmt"
	"slices"
	"testing"

	"winx/evidence"
)

func TestImageCacheBoundsThreads(t *testing.T) {
	var c ImageCache
	for i := 0; i < MaxImageThreads+10; i++ {
		c.Remember(string(rune(0x100+i)), ShownImage{Path: "/p", Revision: "r"})
		if i == MaxImageThreads-1 { // thread 0 is used again just before evictions start
			c.Lookup(string(rune(0x100)), "/p", "r")
		}
	}
	if len(c.threads) != MaxImageThreads {
		t.Errorf("%d threads cached, want %d", len(c.threads), MaxImageThreads)
	}
	if _, ok := c.Lookup(string(rune(0x100)), "/p", "r"); !ok {
		t.Errorf("the recently used thread was evicted")
	}
	if _, ok := c.Lookup(string(rune(0x101)), "/p", "r"); ok {
		t.Errorf("the least recently used thread was kept")
	}
}

func TestNavigationBounds(t *testing.T) {
	var n Navigation
	for i := 0; i < MaxRecentFiles+5; i++ {
		n.NoteRecent(fmt.Sprintf("/w/f%02d.go", i))
	}
	n.NoteRecent("/w/f10.go") // outlined again: moves to the front, not duplicated
	recent := n.Recent()
	if len(recent) != MaxRecentFiles || recent[0] != "/w/f10.go" || recent[1] != fmt.Sprintf("/w/f%02d.go", MaxRecentFiles+4) {
		t.Errorf("Recent() = %d files starting %q, want %d starting /w/f10.go", len(recent), recent[:2], MaxRecentFiles)
	}
	for i := 0; i < MaxMapChains+1; i++ {
		n.StoreChain(fmt.Sprint(i), &MapChain{Priority: []string{fmt.Sprint(i)}})
	}
	if n.Chain("0") != nil || n.Chain("1") == nil || n.Chain(fmt.Sprint(MaxMapChains)) == nil || len(n.chains) != MaxMapChains {
		t.Errorf("after %d chains: %d kept, oldest kept %v; want the oldest dropped", MaxMapChains+1, len(n.chains), n.Chain("0") != nil)
	}
}

func TestMarkResumeShown(t *testing.T) {
	var a, b Session
	if a.MarkResumeShown("task") {
		t.Error("a first showing was reported as seen")
	}
	if !a.MarkResumeShown("task") {
		t.Error("a second showing to the same session was not reported as seen")
	}
	if b.MarkResumeShown("task") {
		t.Error("another session's showing counted for this one")
	}
	for i := 0; i < maxResumeRecords; i++ {
		a.MarkResumeShown(fmt.Sprint(i))
	}
	if len(a.resume.shown) > maxResumeRecords {
		t.Errorf("%d records kept, over %d", len(a.resume.shown), maxResumeRecords)
	}
}

// TestMapRankingFreezesFirstPage: a map's first page ranks the recently
// outlined files and what the ledger knows; once kept, its cursor pages
// rank the same, whatever the session reads or outlines in between.
func TestMapRankingFreezesFirstPage(t *testing.T) {
	s := &Session{Ledger: evidence.NewLedger(0)}
	s.Navigation().NoteRecent("/w/recent.go")
	s.Ledger.Record("/w/read.go", "sha256:a", evidence.Range{Start: 1, End: 3})

	priority, touched, keep := s.MapRanking("k", "/w", false)
	if !slices.Equal(priority, []string{"/w/recent.go"}) || !touched("read.go") || touched("other.go") {
		t.Fatalf("first page: priority %q, touched(read.go) %v, touched(other.go) %v", priority, touched("read.go"), touched("other.go"))
	}
	keep()
	s.Navigation().NoteRecent("/w/later.go")
	s.Ledger.Record("/w/other.go", "sha256:b", evidence.Range{Start: 1, End: 1})

	priority, touched, _ = s.MapRanking("k", "/w", true)
	if !slices.Equal(priority, []string{"/w/recent.go"}) || !touched("read.go") || touched("other.go") {
		t.Errorf("next page: priority %q, touched(read.go) %v, touched(other.go) %v; want the first page's", priority, touched("read.go"), touched("other.go"))
	}
	// A first page, or a cursor whose map is not remembered, starts fresh.
	for _, tc := range []struct {
		key       string
		continued bool
	}{{"k", false}, {"unknown", true}} {
		priority, touched, _ = s.MapRanking(tc.key, "/w", tc.continued)
		if !slices.Equal(priority, []string{"/w/later.go", "/w/recent.go"}) || !touched("other.go") {
			t.Errorf("MapRanking(%q, continued %v): priority %q, touched(other.go) %v; want fresh inputs", tc.key, tc.continued, priority, touched("other.go"))
		}
	}
}
