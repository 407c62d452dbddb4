package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"winx/guardian/remote"
	"winx/guardian/wire"
)

// DefaultProbeTimeout bounds the hello and status of one guardian probed
// alone (an ensure of its key, the sweep deciding about it).
const DefaultProbeTimeout = 2 * time.Second

// DefaultDiscoverTimeout bounds each probe of a discovery: a guardian that
// takes longer (stopped, hung, starting) is reported unresponsive, not
// counted live. Probes run in parallel, so such guardians cost a discovery
// this much once, not each.
const DefaultDiscoverTimeout = time.Second

// maxProbes bounds the guardians dialed at once during discovery.
const maxProbes = 8

// guardianGlob matches guardian sockets in a socket directory (see
// wire.GuardianSocket).
const guardianGlob = "g-*.sock"

// Fleet is the guardians of one socket directory, seen through their
// sockets. It is what winxd and the operator CLI share: it holds no state
// besides its configuration.
type Fleet struct {
	Dir     string     // the socket directory
	Hello   wire.Hello // said to every guardian
	Timeout time.Duration
}

// Unreachable is a guardian socket that did not answer. Stale is set when
// nothing listens on it (the guardian died without removing it);
// otherwise the guardian is unresponsive (stopped, hung or still
// starting). Key and PID come from the record the guardian left beside
// its socket, when there is one.
type Unreachable struct {
	Socket string `json:"socket"`
	Stale  bool   `json:"stale"`
	Err    string `json:"error"`
	Key    string `json:"key,omitempty"`
	PID    int    `json:"pid,omitempty"`
}

// Sockets lists the guardian sockets in the directory, sorted.
func (f *Fleet) Sockets() ([]string, error) {
	m, err := filepath.Glob(filepath.Join(f.Dir, guardianGlob))
	if err != nil {
		return nil, err
	}
	slices.Sort(m)
	return m, nil
}

func (f *Fleet) timeout() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return DefaultProbeTimeout
}

func (f *Fleet) discoverTimeout() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return DefaultDiscoverTimeout
}

// Probe says hello to the guardian on socket and asks its status, which
// does not count as activity. A socket nobody listens on gives an error
// wrapping wire.ErrNoServer.
func (f *Fleet) Probe(ctx context.Context, socket string) (Guardian, error) {
	return f.probe(ctx, socket, f.timeout())
}

func (f *Fleet) probe(ctx context.Context, socket string, timeout time.Duration) (Guardian, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := wire.Dial(ctx, socket, f.Hello)
	if err != nil {
		return Guardian{}, unresponsive(ctx, socket, timeout, err)
	}
	defer c.Close()
	peer := c.Peer()
	if peer.Role != wire.RoleGuardian {
		return Guardian{}, fmt.Errorf("daemon: %s answers as %q, not a guardian", socket, peer.Role)
	}
	var st remote.Status
	if err := c.Call(ctx, remote.MethodStatus, struct{}{}, &st); err != nil {
		return Guardian{}, unresponsive(ctx, socket, timeout, err)
	}
	return Guardian{Socket: socket, PID: peer.PID, Epoch: peer.Epoch, Build: peer.Build, Status: st}, nil
}

// unresponsive types a probe that ran out of time as an
// *remote.UnresponsiveError.
func unresponsive(ctx context.Context, socket string, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &remote.UnresponsiveError{Socket: socket, Method: remote.MethodStatus, After: timeout}
	}
	return err
}

// Discover probes every guardian socket of the directory. A guardian whose
// session is closed (it is exiting) is neither live nor unreachable.
func (f *Fleet) Discover(ctx context.Context) (live []Guardian, bad []Unreachable, err error) {
	socks, err := f.Sockets()
	if err != nil {
		return nil, nil, err
	}
	live, bad = f.ProbeAll(ctx, socks)
	return live, bad, nil
}

// ProbeAll probes sockets in parallel (at most maxProbes at once), each
// within the probe timeout.
func (f *Fleet) ProbeAll(ctx context.Context, socks []string) (live []Guardian, bad []Unreachable) {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, maxProbes)
	)
	for _, s := range socks {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			g, err := f.probe(ctx, s, f.discoverTimeout())
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && g.Status.Closed:
			case err == nil:
				live = append(live, g)
			default:
				u := Unreachable{Socket: s, Stale: errors.Is(err, wire.ErrNoServer), Err: err.Error()}
				if r, err := remote.ReadRecord(s); err == nil {
					u.Key, u.PID = r.Key, r.PID
				}
				bad = append(bad, u)
			}
		})
	}
	wg.Wait()
	slices.SortFunc(live, func(a, b Guardian) int { return a.Status.Created.Compare(b.Status.Created) })
	slices.SortFunc(bad, func(a, b Unreachable) int { return strings.Compare(a.Socket, b.Socket) })
	return live, bad
}

// Cleanup removes what the dead guardian of socket left and keeps the
// evidence of its lost session (see remote.CleanupDead); the caller has
// found nothing listening there.
func (f *Fleet) Cleanup(socket string, loss remote.Loss) error {
	return remote.CleanupDead(socket, loss)
}

// ExpireLost removes the lost-session records of the directory that are
// past remote.LostTTL at now, with the journals and jobs records they kept,
// and returns their sockets.
func (f *Fleet) ExpireLost(now time.Time) ([]string, error) { return remote.ExpireLost(f.Dir, now) }

// CleanupStale cleans up after every guardian in bad found dead (nothing
// listens on its socket) and returns the sockets it removed.
func (f *Fleet) CleanupStale(ctx context.Context, bad []Unreachable) ([]string, error) {
	var (
		done []string
		errs []error
	)
	for _, u := range bad {
		if !u.Stale {
			continue
		}
		// Look again: a guardian may have taken the socket since.
		if alive, err := wire.Probe(ctx, u.Socket); err != nil || alive {
			continue
		}
		if err := f.Cleanup(u.Socket, remote.Loss{Reason: remote.LostGuardianDied}); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, u.Socket)
	}
	return done, errors.Join(errs...)
}

// Close ends the session of g: the guardian kills its shell and background
// commands and exits. A guardian already gone is not an error; a new
// incarnation at the same socket (another epoch) is left alone.
func (f *Fleet) Close(ctx context.Context, g Guardian) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout())
	defer cancel()
	c, err := wire.Dial(ctx, g.Socket, f.Hello)
	if errors.Is(err, wire.ErrNoServer) {
		return nil
	}
	if err != nil {
		return err
	}
	defer c.Close()
	if g.Epoch != "" && c.Peer().Epoch != g.Epoch {
		return nil
	}
	var st remote.Status
	err = c.Call(ctx, remote.MethodClose, struct{}{}, &st)
	if err != nil && !errors.Is(err, wire.ErrConnectionLost) { // lost: it exited before answering
		return err
	}
	// Answered is not gone: a session reported closed must be missing
	// from the next listing too.
	if err := WaitExit(ctx, g.PID, f.timeout()); err != nil {
		return fmt.Errorf("guardian pid %d did not exit after closing its session: %w", g.PID, err)
	}
	return nil
}
