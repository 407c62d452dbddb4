package artifacts

import (
	"errors"
	"fmt"
	"time"
)

// Budgets of temporary artifacts (see the package doc for what counts).
const (
	MaxSessionBytes   = 64 << 20
	MaxSessionFiles   = 128
	MaxHelperBytes    = 32 << 20
	MaxWorkspaceBytes = 256 << 20 // the high-water mark of Reclaim
	// StaleAfter is how long a session or helper directory must have been
	// untouched before Reclaim may delete it.
	StaleAfter = 24 * time.Hour
)

// Limits are the budgets a check or reclaim applies; nil or a zero field
// means the default above. Tests and embedders may lower them.
type Limits struct {
	SessionBytes   int64
	SessionFiles   int
	HelperBytes    int64
	WorkspaceBytes int64
	StaleAfter     time.Duration
}

// orDefaults returns l with every zero field set to its default.
func (l *Limits) orDefaults() Limits {
	var v Limits
	if l != nil {
		v = *l
	}
	if v.SessionBytes <= 0 {
		v.SessionBytes = MaxSessionBytes
	}
	if v.SessionFiles <= 0 {
		v.SessionFiles = MaxSessionFiles
	}
	if v.HelperBytes <= 0 {
		v.HelperBytes = MaxHelperBytes
	}
	if v.WorkspaceBytes <= 0 {
		v.WorkspaceBytes = MaxWorkspaceBytes
	}
	if v.StaleAfter <= 0 {
		v.StaleAfter = StaleAfter
	}
	return v
}

// Limit names one budget.
type Limit string

// The budgets an OverBudgetError can name.
const (
	LimitSessionBytes     Limit = "session_bytes"
	LimitSessionFiles     Limit = "session_files"
	LimitHelperBytes      Limit = "helper_bytes"
	LimitWorkspaceBytes   Limit = "workspace_bytes"
	LimitWorkspaceEntries Limit = "workspace_entries" // the scan cap, MaxScanEntries
)

// ErrOverBudget is wrapped by every *OverBudgetError.
var ErrOverBudget = errors.New("artifacts: temporary artifacts over budget")

// OverBudgetError is one exceeded budget: which one, where, how much is
// used and what is allowed (bytes, or files or entries for the counting
// limits).
type OverBudgetError struct {
	Limit Limit
	Dir   string // the session, helper or workspace directory
	Usage int64
	Max   int64
}

func (e *OverBudgetError) Error() string {
	unit := "bytes"
	if e.Limit == LimitSessionFiles {
		unit = "files"
	} else if e.Limit == LimitWorkspaceEntries {
		unit = "entries"
	}
	return fmt.Sprintf("%v: %s holds %d %s, over the %s limit of %d", ErrOverBudget, e.Dir, e.Usage, unit, e.Limit, e.Max)
}

func (e *OverBudgetError) Unwrap() error { return ErrOverBudget }

// Check reports the first budget that session id or the workspace exceeds,
// as an *OverBudgetError, in this order: the scan cap, the session's bytes,
// its files, its largest helper, the workspace's bytes. A session with
// nothing on disk is checked against the workspace budgets only.
func (u *Usage) Check(id string, lim *Limits) error {
	l := lim.orDefaults()
	if u.Truncated {
		return &OverBudgetError{Limit: LimitWorkspaceEntries, Dir: u.Dir, Usage: int64(u.Entries), Max: MaxScanEntries}
	}
	s := u.Session(id)
	if s.Bytes > l.SessionBytes {
		return &OverBudgetError{Limit: LimitSessionBytes, Dir: s.Dir, Usage: s.Bytes, Max: l.SessionBytes}
	}
	if s.Files > l.SessionFiles {
		return &OverBudgetError{Limit: LimitSessionFiles, Dir: s.Dir, Usage: int64(s.Files), Max: int64(l.SessionFiles)}
	}
	if h := s.largestHelper(); h != nil && h.Bytes > l.HelperBytes {
		return &OverBudgetError{Limit: LimitHelperBytes, Dir: s.Dir + "/" + h.Name, Usage: h.Bytes, Max: l.HelperBytes}
	}
	if u.Bytes > l.WorkspaceBytes {
		return &OverBudgetError{Limit: LimitWorkspaceBytes, Dir: u.Dir, Usage: u.Bytes, Max: l.WorkspaceBytes}
	}
	return nil
}

// Pressure is the highest fraction of any budget that session id or the
// workspace uses (1 means exactly at a limit); the tool layer warns above
// 0.8.
func (u *Usage) Pressure(id string, lim *Limits) float64 {
	l := lim.orDefaults()
	s := u.Session(id)
	p := max(
		float64(s.Bytes)/float64(l.SessionBytes),
		float64(s.Files)/float64(l.SessionFiles),
		float64(u.Bytes)/float64(l.WorkspaceBytes),
		float64(u.Entries)/float64(MaxScanEntries),
	)
	if h := s.largestHelper(); h != nil {
		p = max(p, float64(h.Bytes)/float64(l.HelperBytes))
	}
	return p
}

// largestHelper is the helper of the most bytes, nil if there is none; ties
// go to the smaller name so the answer is stable.
func (s *Session) largestHelper() *Helper {
	var best *Helper
	for _, h := range s.Helpers {
		if best == nil || h.Bytes > best.Bytes || (h.Bytes == best.Bytes && h.Name < best.Name) {
			best = h
		}
	}
	return best
}

// Blocking reports the budget that should stop session id's ordinary
// commands (cleanup commands always run), nil if none: the budget Check
// reports, except that a workspace budget does not block a session with
// nothing on disk, which cannot help free the workspace.
func (u *Usage) Blocking(id string, lim *Limits) *OverBudgetError {
	var over *OverBudgetError
	if !errors.As(u.Check(id, lim), &over) {
		return nil
	}
	if over.Limit == LimitWorkspaceBytes || over.Limit == LimitWorkspaceEntries {
		if s := u.Session(id); s.Files == 0 && len(s.Helpers) == 0 {
			return nil
		}
	}
	return over
}
