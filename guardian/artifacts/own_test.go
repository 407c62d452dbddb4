package artifacts

import (
	"path/filepath"
	"testing"
	"time"
)

// TestReclaimSessionOwnStaleHelpers: at ReclaimLevel a session's stale
// helpers go oldest first until ReclaimTarget; another session's stale
// helpers and the session's young ones stay; below the level nothing goes.
func TestReclaimSessionOwnStaleHelpers(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	own, other := SessionDir(root, idA), SessionDir(root, idB)
	for _, h := range []struct {
		dir  string
		size int64
		age  time.Duration
	}{
		{filepath.Join(own, "a"), 24 << 20, 50 * time.Hour},
		{filepath.Join(own, "b"), 16 << 20, 40 * time.Hour},
		{filepath.Join(own, "c"), 2 << 20, 30 * time.Hour},
		{filepath.Join(own, "d"), 8 << 20, time.Hour},
		{filepath.Join(other, "x"), 1 << 20, 90 * time.Hour},
	} {
		sparse(t, filepath.Join(h.dir, "f"), h.size)
		touchTree(t, h.dir, now.Add(-h.age))
	}
	// 50 MiB of 64: 78%.
	res, err := ReclaimSession(root, idB, now, nil)
	if err != nil || len(res.Removed) != 0 {
		t.Fatalf("ReclaimSession of a session below the level = %v, %v", res.Removed, err)
	}
	res, err = ReclaimSession(root, idA, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(own, "a")} // 26 MiB left: 40.6%
	if len(res.Removed) != 1 || res.Removed[0] != want[0] || res.Bytes != 24<<20 || len(res.Sizes) != 1 {
		t.Errorf("removed %v (%d bytes), want %v", res.Removed, res.Bytes, want)
	}
	for _, p := range []string{filepath.Join(own, "b"), filepath.Join(own, "c"), filepath.Join(own, "d"), filepath.Join(other, "x")} {
		if !exists(p) {
			t.Errorf("%s was removed", p)
		}
	}
	if p := res.Usage.SessionPressure(idA, nil); p > ReclaimTarget {
		t.Errorf("pressure after = %.2f", p)
	}
}

// TestMonitorCountsFreed: the monitor's audit reclaims and counts, per
// session and per workspace.
func TestMonitorCountsFreed(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	dir := filepath.Join(SessionDir(root, idA), "h")
	sparse(t, filepath.Join(dir, "f"), 60<<20)
	touchTree(t, dir, now.Add(-25*time.Hour))
	var m Monitor
	u, err := m.Audit(root, idA, now, func() map[string]bool { return nil })
	if err != nil || u.Session(idA).Bytes != 0 {
		t.Fatalf("Audit = %v, session bytes %d", err, u.Session(idA).Bytes)
	}
	s, w := m.Freed(root, idA)
	want := Freed{Dirs: 1, Files: 1, Bytes: 60 << 20}
	if s != want || w != want {
		t.Errorf("Freed = %+v, %+v; want %+v", s, w, want)
	}
	if s, _ := m.Freed(root, idB); s != (Freed{}) {
		t.Errorf("another session's counters = %+v", s)
	}
}
