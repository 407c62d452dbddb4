package artifacts

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Reclaimed is what one Reclaim did.
type Reclaimed struct {
	// Removed lists the deleted directories, absolute, oldest first.
	Removed []string
	// Sizes holds what each directory of Removed held, in its order.
	Sizes []Tally
	Bytes int64 // apparent bytes they held
	Files int
	// Usage is the scan Reclaim started from with the deletions taken
	// out; it is exact unless the scan was Truncated.
	Usage *Usage
}

// candidate is a directory Reclaim may delete.
type candidate struct {
	rel     string // relative to .winx/tmp
	session string // its session id
	helper  string // "" for a whole session directory
	Tally
}

// Reclaim frees space in the workspace at root when its .winx/tmp is over
// the high-water mark (lim.WorkspaceBytes): it deletes, oldest first, the
// directories of sessions not in live and the helper directories of any
// session whose newest modification is at least lim.StaleAfter before now,
// until the workspace is at or under the mark. A truncated scan cannot tell
// how much a deletion frees, so then every eligible directory goes. It never
// deletes anything younger than StaleAfter, a live session's own
// directory, or anything in .winx/tmp that is not a session directory.
// Deletions go through an os.Root of .winx/tmp: a symlink is removed, never
// followed. The first deletion error stops it; what was removed before is
// still reported.
func Reclaim(root string, now time.Time, live map[string]bool, lim *Limits) (*Reclaimed, error) {
	l := lim.orDefaults()
	u, err := Scan(root)
	if err != nil {
		return nil, err
	}
	res := &Reclaimed{Usage: u}
	if u.Bytes <= l.WorkspaceBytes && !u.Truncated {
		return res, nil
	}
	stale := func(t Tally) bool { return now.Sub(t.Newest) >= l.StaleAfter }
	var cands []candidate
	for id, s := range u.Sessions {
		name := SessionPrefix + id
		if !live[id] && stale(s.Tally) {
			cands = append(cands, candidate{rel: name, session: id, Tally: s.Tally})
			continue // its helpers go with it
		}
		for hn, h := range s.Helpers {
			if stale(h.Tally) {
				cands = append(cands, candidate{rel: filepath.Join(name, hn), session: id, helper: hn, Tally: h.Tally})
			}
		}
	}
	return u.removeOldest(cands, res, func() bool { return u.Bytes <= l.WorkspaceBytes && !u.Truncated })
}

// removeOldest deletes cands oldest first, counting each in res and taking
// it out of the usage, until enough() holds.
func (u *Usage) removeOldest(cands []candidate, res *Reclaimed, enough func() bool) (*Reclaimed, error) {
	if len(cands) == 0 {
		return res, nil
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(a.Newest.Compare(b.Newest), cmp.Compare(a.rel, b.rel))
	})
	r, err := os.OpenRoot(u.Dir)
	if err != nil {
		return nil, &ScanError{Path: u.Dir, Err: err}
	}
	defer r.Close()
	for _, c := range cands {
		if enough() {
			break
		}
		if err := r.RemoveAll(c.rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, &ScanError{Path: filepath.Join(u.Dir, c.rel), Err: err}
		}
		res.Removed = append(res.Removed, filepath.Join(u.Dir, c.rel))
		res.Sizes = append(res.Sizes, c.Tally)
		res.Bytes += c.Bytes
		res.Files += c.Files
		u.forget(c)
	}
	return res, nil
}

// forget takes a deleted candidate out of the usage.
func (u *Usage) forget(c candidate) {
	u.Bytes -= c.Bytes
	u.Files -= c.Files
	s := u.Sessions[c.session]
	if c.helper == "" {
		delete(u.Sessions, c.session)
		return
	}
	delete(s.Helpers, c.helper)
	s.Bytes -= c.Bytes
	s.Files -= c.Files
	if s.Largest == c.helper {
		s.Largest, s.LargestBytes = "", 0
	}
}
