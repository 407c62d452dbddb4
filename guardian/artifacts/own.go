package artifacts

import (
	"path/filepath"
	"time"
)

// An active session that reaches ReclaimLevel of a budget frees its own
// stale helpers before it is refused: a sub-agent's area left idle for the
// full StaleAfter is deleted, oldest first, until the session is back at
// ReclaimTarget. Unlike Reclaim it does not wait for the workspace's
// high-water mark, and it never touches another session's directory or
// anything younger than StaleAfter.
const (
	ReclaimLevel  = 0.75
	ReclaimTarget = 0.5
)

// SessionPressure is the highest fraction of a budget that session id
// uses: its bytes, its files, its largest helper and the workspace's bytes
// (the budgets its own helpers count against).
func (u *Usage) SessionPressure(id string, lim *Limits) float64 {
	l := lim.orDefaults()
	s := u.Session(id)
	p := max(
		float64(s.Bytes)/float64(l.SessionBytes),
		float64(s.Files)/float64(l.SessionFiles),
		float64(u.Bytes)/float64(l.WorkspaceBytes),
	)
	if h := s.largestHelper(); h != nil {
		p = max(p, float64(h.Bytes)/float64(l.HelperBytes))
	}
	return p
}

// ReclaimSession scans the workspace at root and, when session id is at
// ReclaimLevel or more of a budget (SessionPressure), deletes its helper
// directories whose newest modification is at least lim.StaleAfter before
// now, oldest first, until it is at ReclaimTarget or below. Reclaimed.Usage
// is the scan with the deletions taken out. A truncated scan reclaims
// nothing (its totals say too little to stop at the target).
func ReclaimSession(root, id string, now time.Time, lim *Limits) (*Reclaimed, error) {
	u, err := Scan(root)
	if err != nil {
		return nil, err
	}
	return reclaimSession(u, id, now, lim)
}

// reclaimSession is ReclaimSession on the scan u, which it updates.
func reclaimSession(u *Usage, id string, now time.Time, lim *Limits) (*Reclaimed, error) {
	l := lim.orDefaults()
	res := &Reclaimed{Usage: u}
	if u.Truncated || u.SessionPressure(id, &l) < ReclaimLevel {
		return res, nil
	}
	s, ok := u.Sessions[id]
	if !ok {
		return res, nil
	}
	var cands []candidate
	for hn, h := range s.Helpers {
		if now.Sub(h.Newest) >= l.StaleAfter {
			cands = append(cands, candidate{rel: filepath.Join(SessionPrefix+id, hn), session: id, helper: hn, Tally: h.Tally})
		}
	}
	return u.removeOldest(cands, res, func() bool { return u.SessionPressure(id, &l) <= ReclaimTarget })
}
