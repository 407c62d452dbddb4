package artifacts

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
)

func noLive() map[string]bool { return nil }

// TestMonitorScanReuse checks the scan cache on a fake clock: a scan
// below the warning level is reused within ScanReuse, a later one or one
// near a limit is taken again.
func TestMonitorScanReuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		const id = idA
		var m Monitor
		u, err := m.Usage(root, id, time.Now(), noLive)
		if err != nil || u.Bytes != 0 {
			t.Fatalf("usage = %+v, %v", u, err)
		}
		sparse(t, filepath.Join(SessionDir(root, id), "f"), 60<<20) // 94% of the session budget
		if u, _ = m.Usage(root, id, time.Now(), noLive); u.Bytes != 0 {
			t.Errorf("usage within %v = %d bytes, want the reused scan (0)", ScanReuse, u.Bytes)
		}
		time.Sleep(ScanReuse)
		if u, _ = m.Usage(root, id, time.Now(), noLive); u.Bytes != 60<<20 {
			t.Errorf("usage after %v = %d, want a new scan", ScanReuse, u.Bytes)
		}
		// Near a limit nothing is reused.
		if err := os.Remove(filepath.Join(SessionDir(root, id), "f")); err != nil {
			t.Fatal(err)
		}
		if u, _ = m.Usage(root, id, time.Now(), noLive); u.Bytes != 0 {
			t.Errorf("usage near a limit = %d bytes, want a new scan (0)", u.Bytes)
		}
		time.Sleep(10 * ScanReuse)
		m.Usage(root+"/other", id, time.Now(), noLive)
		m.mu.Lock()
		n := len(m.scans)
		m.mu.Unlock()
		if n != 1 {
			t.Errorf("cache holds %d workspaces, want old ones dropped", n)
		}
	})
}

// TestMonitorWarning: the warning reads the last scan, from WarnLevel on.
func TestMonitorWarning(t *testing.T) {
	root := t.TempDir()
	var m Monitor
	if _, ok := m.Warning(root, idA); ok {
		t.Errorf("Warning before any scan = ok, want none")
	}
	sparse(t, filepath.Join(SessionDir(root, idA), "f"), MaxSessionBytes*9/10)
	sparse(t, filepath.Join(SessionDir(root, idB), "f"), MaxSessionBytes/2)
	if _, err := m.Usage(root, idA, time.Now(), noLive); err != nil {
		t.Fatal(err)
	}
	if p, ok := m.Warning(root, idA); !ok || math.Round(p*100) != 90 {
		t.Errorf("Warning(A) = %v, %v; want 0.9, true", p, ok)
	}
	if p, ok := m.Warning(root, idB); ok || p != 0.5 {
		t.Errorf("Warning(B) = %v, %v; want 0.5, false", p, ok)
	}
}

// TestBlocking: a session budget blocks its session; a workspace budget
// blocks only sessions that hold something.
func TestBlocking(t *testing.T) {
	root := t.TempDir()
	sparse(t, filepath.Join(SessionDir(root, idA), "f"), MaxSessionBytes+1)
	sparse(t, filepath.Join(Dir(root), "other", "f"), MaxWorkspaceBytes)
	sparse(t, filepath.Join(SessionDir(root, idB), "h", "f"), 0)
	u, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id   string
		want Limit
	}{
		{idA, LimitSessionBytes},
		{idB, LimitWorkspaceBytes}, // holds a helper
		{idC, ""},                  // holds nothing
	}
	for _, tt := range tests {
		var got Limit
		if over := u.Blocking(tt.id, nil); over != nil {
			got = over.Limit
		}
		if got != tt.want {
			t.Errorf("Blocking(%s) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestLiveIDs(t *testing.T) {
	got := LiveIDs([]string{SessionDir("/w", idA), "/w/.winx/tmp/other", SessionDir("/v", idB)})
	if len(got) != 2 || !got[idA] || !got[idB] {
		t.Errorf("LiveIDs = %v, want %s and %s", got, idA, idB)
	}
}
