package daemon

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"winx/guardian/remote"
	"winx/guardian/wire"
)

// Defaults of a Policy and of the sweep.
const (
	// DefaultMaxGuardians is the quota when WINX_MAX_GUARDIANS is unset.
	DefaultMaxGuardians = 32
	// DefaultNeverUsedTTL ends a guardian that never ran a command.
	DefaultNeverUsedTTL = 30 * time.Minute
	// DefaultUsedTTL ends a guardian that ran a command.
	DefaultUsedTTL = 24 * time.Hour
	// DefaultSweepInterval is how often winxd looks for expired guardians.
	DefaultSweepInterval = 60 * time.Second
)

// PruneCommand is what an operator runs to free guardians by hand; the
// quota error names it.
const PruneCommand = "winx prune --idle-seconds 0"

// ErrQuota: the quota is reached and no guardian may be reclaimed.
var ErrQuota = errors.New("daemon: guardian quota reached")

// QuotaError is a session refused at the quota, or at its principal's
// share of it (Share > 0). Every guardian that counted has run a command or
// runs one, so none is reclaimed behind its user's back.
type QuotaError struct {
	Max   int // the quota
	Live  int // guardians alive when the request came
	Share int // the principal's share when that was reached; 0 for the quota itself
	Held  int // guardians the principal held, with Share
}

func (e *QuotaError) Error() string {
	if e.Share > 0 {
		return fmt.Sprintf("daemon: this principal holds %d guardians, its share of the quota (%d of %d), and none of them is reclaimable: each has run a command or runs one; "+
			"end one of its sessions (`winx kill <thread>`, or `%s`), or raise WINX_MAX_GUARDIANS", e.Held, e.Share, e.Max, PruneCommand)
	}
	return fmt.Sprintf("daemon: guardian quota reached (%d live, at most %d) and none is reclaimable: each has run a command or runs one; "+
		"free idle sessions with `%s` (or `winx kill <thread>`), or raise WINX_MAX_GUARDIANS", e.Live, e.Max, PruneCommand)
}

func (e *QuotaError) Unwrap() error { return ErrQuota }

// Guardian is a live guardian as discovery saw it: its hello and status.
type Guardian struct {
	Socket string        `json:"socket"`
	PID    int           `json:"pid"` // the guardian process, from its hello
	Epoch  string        `json:"epoch"`
	Build  wire.Build    `json:"build"`
	Status remote.Status `json:"status"`
}

// Session is the parsed key; ok is false for a key of another layout.
func (g Guardian) Session() (SessionKey, bool) { return ParseSessionKey(g.Status.Key) }

// Policy decides which guardians end; it is pure (no processes, no clock of
// its own), so every decision is tested with fixed statuses and times.
type Policy struct {
	Max          int           // quota; 0 means DefaultMaxGuardians
	NeverUsedTTL time.Duration // 0 means DefaultNeverUsedTTL
	UsedTTL      time.Duration // 0 means DefaultUsedTTL
}

func (p Policy) withDefaults() Policy {
	if p.Max <= 0 {
		p.Max = DefaultMaxGuardians
	}
	if p.NeverUsedTTL <= 0 {
		p.NeverUsedTTL = DefaultNeverUsedTTL
	}
	if p.UsedTTL <= 0 {
		p.UsedTTL = DefaultUsedTTL
	}
	return p
}

// Busy reports an active foreground or background command: such a
// guardian is never removed by a sweep, a prune or the quota.
func Busy(s remote.Status) bool { return s.Running || s.BackgroundRunning > 0 }

// IdleSince is when the guardian was last used: the latest of its creation,
// its last activity and its last command.
func IdleSince(s remote.Status) time.Time {
	t := s.Created
	for _, u := range []time.Time{s.LastActivity, s.LastCommand} {
		if u.After(t) {
			t = u
		}
	}
	return t
}

// TTL is the idle time after which s expires under p.
func (p Policy) TTL(s remote.Status) time.Duration {
	p = p.withDefaults()
	if s.EverRanCommand {
		return p.UsedTTL
	}
	return p.NeverUsedTTL
}

// Expired reports whether the sweep removes s at now.
func (p Policy) Expired(s remote.Status, now time.Time) bool {
	return !Busy(s) && now.Sub(IdleSince(s)) >= p.TTL(s)
}

// IdleFor reports whether a prune with an explicit idle time removes s: not
// busy and idle for at least d (0 removes every idle guardian).
func IdleFor(s remote.Status, now time.Time, d time.Duration) bool {
	return !Busy(s) && now.Sub(IdleSince(s)) >= d
}

// Share is how many guardians one named principal may hold: half the
// quota, rounded up, so that no caller of a principals file can take every
// guardian from the others. The unnamed caller (stdio, a single token) is
// held to the quota only.
func (p Policy) Share() int {
	p = p.withDefaults()
	return (p.Max + 1) / 2
}

// Reclaim returns the guardians to end so that one more, for principal,
// fits under the quota and under a named principal's share: none when
// there is room; otherwise the oldest never-used idle guardians, as few as
// needed (at the share, the principal's own). When too few qualify it
// returns a *QuotaError and nothing is to be ended.
func (p Policy) Reclaim(live []Guardian, principal string) ([]Guardian, error) {
	p = p.withDefaults()
	var victims []Guardian
	if principal != "" {
		var own []Guardian
		for _, g := range live {
			if k, ok := g.Session(); ok && k.Principal == principal {
				own = append(own, g)
			}
		}
		share := p.Share()
		if need := len(own) - share + 1; need > 0 {
			cands := reclaimable(own)
			if len(cands) < need {
				return nil, &QuotaError{Max: p.Max, Live: len(live), Share: share, Held: len(own)}
			}
			victims = cands[:need]
		}
	}
	rest := slices.DeleteFunc(slices.Clone(live), func(g Guardian) bool {
		return slices.ContainsFunc(victims, func(v Guardian) bool { return v.Socket == g.Socket })
	})
	need := len(rest) - p.Max + 1
	if need <= 0 {
		return victims, nil
	}
	cands := reclaimable(rest)
	if len(cands) < need {
		return nil, &QuotaError{Max: p.Max, Live: len(live)}
	}
	return append(victims, cands[:need]...), nil
}

// reclaimable returns the never-used idle guardians of gs, oldest first.
func reclaimable(gs []Guardian) []Guardian {
	var cands []Guardian
	for _, g := range gs {
		if !g.Status.EverRanCommand && !Busy(g.Status) {
			cands = append(cands, g)
		}
	}
	slices.SortStableFunc(cands, func(a, b Guardian) int {
		if c := a.Status.Created.Compare(b.Status.Created); c != 0 {
			return c
		}
		return IdleSince(a.Status).Compare(IdleSince(b.Status))
	})
	return cands
}
