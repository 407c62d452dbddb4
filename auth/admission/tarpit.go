package admission

import (
	"context"
	"sync"
	"time"
)

// Bounds of the connections a tarpit holds: per source (a principal, or an
// IP that failed authentication) and in all. Beyond them a refusal is
// answered at once, so holding can never take the server's descriptors.
const (
	tarpitPerSource = 128
	tarpitTotal     = 512
)

// tarpit delays byte-rate refusals. A client that sends its next large
// body the moment it is refused would otherwise turn each refusal into a
// new connection and megabytes copied into socket buffers, hundreds of
// times a second: CPU the other principals need. Held, its connection
// waits (unread, so its writes block) for the time Retry-After names, at
// most delay.
type tarpit struct {
	delay time.Duration

	mu    sync.Mutex // guards held and total
	held  map[string]int
	total int
}

// pause waits min(wait, delay), or until ctx ends, when source may hold
// one more connection; otherwise it returns at once.
func (t *tarpit) pause(ctx context.Context, source string, wait time.Duration) {
	d := min(wait, t.delay)
	if d <= 0 || !t.enter(source) {
		return
	}
	defer t.leave(source)
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

func (t *tarpit) enter(source string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.total >= tarpitTotal || t.held[source] >= tarpitPerSource {
		return false
	}
	t.held[source]++
	t.total++
	return true
}

func (t *tarpit) leave(source string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total--
	if t.held[source]--; t.held[source] <= 0 {
		delete(t.held, source)
	}
}
