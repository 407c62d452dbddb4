package remote

import (
	"context"
	"sync"
	"time"
)

// gateOwner says who holds the generation gate.
type gateOwner int

const (
	ownerNone      gateOwner = iota
	ownerLaunch              // a run is starting its command
	ownerExclusive           // a cancel, input or reset targets a generation
)

// gate orders launches against the operations that target a generation, so
// that an operation naming generation N can never reach N+1:
//
//   - A launch holds the gate from before the session starts its command
//     until the new generation is published (or the launch failed and no
//     command started). A second launch meanwhile is refused at once.
//   - An operation that targets a generation (cancel, input, reset) waits
//     for a launch in flight to settle, at most the settle timeout, then
//     holds the gate while it checks the generation and acts. A launch
//     meanwhile is refused at once: a command is running or being
//     interrupted.
//
// The gate holds no session: the server calls it around session calls.
type gate struct {
	mu sync.Mutex // guards the fields below
	// owner is who holds the gate; free is non-nil exactly while someone
	// does and is closed when they release it.
	owner gateOwner
	free  chan struct{}
	// gen is the newest published generation, 0 before the first.
	gen uint64
}

// tryLaunch takes the gate for a launch, or reports false if it is held.
func (g *gate) tryLaunch() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.owner != ownerNone {
		return false
	}
	g.owner, g.free = ownerLaunch, make(chan struct{})
	return true
}

// endLaunch publishes gen (0 when no command started) and releases the gate.
func (g *gate) endLaunch(gen uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.owner != ownerLaunch {
		panic("remote: endLaunch without a launch holding the gate")
	}
	if gen > g.gen {
		g.gen = gen
	}
	g.releaseLocked()
}

// acquire takes the gate for an exclusive operation and returns the newest
// generation. It waits while another holds the gate, until ctx ends; when
// the holder is a launch that does not settle within settle it returns
// ErrLaunchUnsettled (the caller decides whether that ends the session).
func (g *gate) acquire(ctx context.Context, settle time.Duration) (uint64, error) {
	for {
		g.mu.Lock()
		if g.owner == ownerNone {
			g.owner, g.free = ownerExclusive, make(chan struct{})
			gen := g.gen
			g.mu.Unlock()
			return gen, nil
		}
		owner, free := g.owner, g.free
		g.mu.Unlock()
		var expired <-chan time.Time
		var timer *time.Timer
		if owner == ownerLaunch {
			timer = time.NewTimer(settle)
			expired = timer.C
		}
		select {
		case <-free:
		case <-expired:
			return 0, ErrLaunchUnsettled
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return 0, ctx.Err()
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// release ends an exclusive operation.
func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.owner != ownerExclusive {
		panic("remote: release without an exclusive operation holding the gate")
	}
	g.releaseLocked()
}

func (g *gate) releaseLocked() {
	g.owner = ownerNone
	close(g.free)
	g.free = nil
}

// current returns the newest published generation.
func (g *gate) current() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gen
}
