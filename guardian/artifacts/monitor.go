package artifacts

import (
	"path/filepath"
	"sync"
	"time"
)

// ScanReuse is how long Monitor reuses a workspace scan on which the
// asking session is below WarnLevel; a scan at or above it is never reused,
// so a cleanup shows at once. Within the window a command may have written
// more than the scan saw; the next check after it catches that.
const ScanReuse = time.Second

// WarnLevel is the fraction of a budget (see Usage.Pressure) from which a
// session is warned and its scans are always fresh.
const WarnLevel = 0.8

// Monitor keeps the last scan of each workspace's .winx/tmp, so the checks
// before every command do not walk the tree again within ScanReuse. Its
// zero value is ready to use; it is safe for concurrent use.
type Monitor struct {
	mu    sync.Mutex         // guards scans
	scans map[string]scanned // by canonical root; entries older than ScanReuse are dropped by the next Usage
}

type scanned struct {
	at    time.Time
	usage *Usage
}

// Usage returns a scan of the workspace at root fresh enough for session
// id at now: the remembered one when it is younger than ScanReuse and id's
// pressure on it is below WarnLevel; otherwise a new one, taken by Reclaim
// (which frees stale directories first when the workspace is over the
// high-water mark; live names the sessions it must spare and is asked only
// then) and, when Reclaim's scan was truncated and it deleted something,
// by a second Scan, since truncated totals are lower bounds. A scan stamped
// after now (a clock that went back) is not reused.
func (m *Monitor) Usage(root, id string, now time.Time, live func() map[string]bool) (*Usage, error) {
	m.mu.Lock()
	for r, s := range m.scans {
		if now.Sub(s.at) >= ScanReuse || s.at.After(now) {
			delete(m.scans, r)
		}
	}
	if s, ok := m.scans[root]; ok && s.usage.Pressure(id, nil) < WarnLevel {
		m.mu.Unlock()
		return s.usage, nil
	}
	m.mu.Unlock()

	res, err := Reclaim(root, now, live(), nil)
	if err != nil {
		return nil, err
	}
	u := res.Usage
	if u.Truncated && len(res.Removed) > 0 {
		if u, err = Scan(root); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	if m.scans == nil {
		m.scans = make(map[string]scanned)
	}
	m.scans[root] = scanned{at: now, usage: u}
	m.mu.Unlock()
	return u, nil
}

// Warning reports the pressure of session id on the last scan of root, and
// whether it is at WarnLevel or more: the session should hear of the limit
// before its commands are refused. ok is false, too, when no scan of root
// is remembered.
func (m *Monitor) Warning(root, id string) (pressure float64, ok bool) {
	m.mu.Lock()
	s, found := m.scans[root]
	m.mu.Unlock()
	if !found {
		return 0, false
	}
	p := s.usage.Pressure(id, nil)
	return p, p >= WarnLevel
}

// LiveIDs returns the session ids named by session directories (as
// SessionDir makes them); other directories are left out. It turns the
// directories of live sessions into the set Reclaim spares.
func LiveIDs(dirs []string) map[string]bool {
	live := make(map[string]bool)
	for _, dir := range dirs {
		if id, ok := SessionID(filepath.Base(dir)); ok {
			live[id] = true
		}
	}
	return live
}
