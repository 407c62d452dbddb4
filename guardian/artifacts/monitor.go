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
// before every command do not walk the tree again within ScanReuse, and
// counts what its reclaims deleted. Its zero value is ready to use; it is
// safe for concurrent use.
type Monitor struct {
	mu    sync.Mutex         // guards scans and freed
	scans map[string]scanned // by canonical root; entries older than ScanReuse are dropped by the next Usage
	// freed counts the deletions of this monitor's reclaims: by root
	// (every stale directory) and by root+"\x00"+id (the directories of
	// session id). Bounded by maxFreedKeys.
	freed map[string]Freed
}

// maxFreedKeys bounds Monitor.freed; past it the counters start afresh.
const maxFreedKeys = 4096

// Freed counts the stale directories a Monitor's reclaims deleted and what
// they held.
type Freed struct {
	Dirs  int   `json:"dirs"`
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

type scanned struct {
	at    time.Time
	usage *Usage
}

// Usage returns a scan of the workspace at root fresh enough for session
// id at now: the remembered one when it is younger than ScanReuse and id's
// pressure on it is below WarnLevel; otherwise a new one (see Audit). A
// scan stamped after now (a clock that went back) is not reused.
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
	return m.Audit(root, id, now, live)
}

// Audit takes a new scan of the workspace at root for session id at now and
// remembers it, so what a command wrote at run time (paths no preflight
// sees) counts from the next check on. The scan is taken by Reclaim (which
// frees stale directories first when the workspace is over the high-water
// mark; live names the sessions it must spare and is asked only then) and,
// when Reclaim's scan was truncated and it deleted something, by a second
// Scan, since truncated totals are lower bounds; then, when id is at
// ReclaimLevel of a budget, its own stale helpers are reclaimed
// (ReclaimSession).
func (m *Monitor) Audit(root, id string, now time.Time, live func() map[string]bool) (*Usage, error) {
	res, err := Reclaim(root, now, live(), nil)
	if err != nil {
		return nil, err
	}
	m.count(root, id, res)
	u := res.Usage
	if u.Truncated && len(res.Removed) > 0 {
		if u, err = Scan(root); err != nil {
			return nil, err
		}
	}
	own, err := reclaimSession(u, id, now, nil)
	if own != nil {
		m.count(root, id, own)
	}
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.scans == nil {
		m.scans = make(map[string]scanned)
	}
	m.scans[root] = scanned{at: now, usage: u}
	m.mu.Unlock()
	return u, nil
}

// count adds the deletions of res to the workspace's counters and, for
// those in session id's directory, to the session's.
func (m *Monitor) count(root, id string, res *Reclaimed) {
	if len(res.Removed) == 0 {
		return
	}
	own := SessionDir(root, id)
	var mine Freed
	for i, p := range res.Removed {
		if p == own || filepath.Dir(p) == own {
			mine.Dirs++
			mine.Files += res.Sizes[i].Files
			mine.Bytes += res.Sizes[i].Bytes
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed == nil || len(m.freed) >= maxFreedKeys {
		m.freed = make(map[string]Freed)
	}
	w := m.freed[root]
	w.Dirs += len(res.Removed)
	w.Files += res.Files
	w.Bytes += res.Bytes
	m.freed[root] = w
	if mine.Dirs > 0 {
		k := root + "\x00" + id
		s := m.freed[k]
		s.Dirs += mine.Dirs
		s.Files += mine.Files
		s.Bytes += mine.Bytes
		m.freed[k] = s
	}
}

// Freed returns what this monitor's reclaims deleted in the workspace at
// root (every stale directory) and in session id's directory.
func (m *Monitor) Freed(root, id string) (session, workspace Freed) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.freed[root+"\x00"+id], m.freed[root]
}

// Session returns session id's usage on the last scan of root, and
// whether one is remembered.
func (m *Monitor) Session(root, id string) (*Session, bool) {
	m.mu.Lock()
	s, found := m.scans[root]
	m.mu.Unlock()
	if !found {
		return nil, false
	}
	return s.usage.Session(id), true
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
