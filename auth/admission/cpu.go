package admission

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// cpuShare is each principal's share of the server's CPU.
//
// A request computes (decodes its body, runs a tool that computes, encodes
// its answer) only while it holds one of its principal's run slots: half
// the cores (at least one) when more than one principal is configured, so
// that a principal's heavy requests queue behind its own, in arrival
// order, and never take every core from the others. The others' latency,
// not the heavy principal's throughput, is what this keeps. There is no
// global limit: a principal that computes little never waits for another's
// slots, and the Go scheduler shares the cores between the principals that
// compute at once.
//
// A request gives its slot back while it waits rather than computes (its
// body arriving, its answer leaving, a tool that waits on a shell): see
// Ticket.
type cpuShare struct {
	slots principalSlots
}

func newCPUShare(slots, principals int) *cpuShare {
	c := slots
	if principals > 1 {
		c = max(1, slots/2)
	}
	return &cpuShare{slots: newPrincipalSlots(c)}
}

// acquire takes a slot of principal, waiting behind its earlier requests
// (a channel's senders wait in order); false when ctx ends first.
func (s *cpuShare) acquire(ctx context.Context, principal string) bool {
	select {
	case s.slots.of(principal) <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// release gives back a slot of principal.
func (s *cpuShare) release(principal string) { <-s.slots.of(principal) }

// principalSlots are each principal's slots: a channel of capacity size,
// made on first use. Principals are the configured ones (a request that
// failed authentication never takes a slot), so the map stays small.
type principalSlots struct {
	size int

	mu  sync.Mutex // guards per
	per map[string]chan struct{}
}

func newPrincipalSlots(size int) principalSlots {
	return principalSlots{size: size, per: map[string]chan struct{}{}}
}

func (p *principalSlots) of(principal string) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.per[principal]
	if !ok {
		c = make(chan struct{}, p.size)
		p.per[principal] = c
	}
	return c
}

// Ticket is one request's hold on its principal's CPU share. The gate takes
// it before the handler runs and gives it back when the handler returns;
// code that is about to wait rather than compute calls Pause, and Resume
// when it computes again, so that waiting never holds a slot. After the
// request ends both are no-ops (a task the request started may outlive it).
// A Ticket is safe for concurrent use.
type Ticket struct {
	share     *cpuShare
	principal string

	mu   sync.Mutex // guards held and done; held across Resume's wait
	held bool
	done bool
}

// Pause gives the slot back while the caller waits.
func (t *Ticket) Pause() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held {
		t.held = false
		t.share.release(t.principal)
	}
}

// Resume waits for the principal's turn to compute again. It returns
// without a slot when ctx ends first (the request is being torn down) or
// the request is over.
func (t *Ticket) Resume(ctx context.Context) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held || t.done {
		return
	}
	t.held = t.share.acquire(ctx, t.principal)
}

// end gives the slot back for good.
func (t *Ticket) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	if t.held {
		t.held = false
		t.share.release(t.principal)
	}
}

type ticketKey struct{}

// TicketOf returns the CPU ticket of the request of ctx; nil (whose methods
// do nothing) when the request runs under no CPU share.
func TicketOf(ctx context.Context) *Ticket {
	t, _ := ctx.Value(ticketKey{}).(*Ticket)
	return t
}

// pausingBody gives the request's slot back while its body is read: the
// bytes arrive at the client's pace (or wait for the body budget), which is
// not the server's CPU.
type pausingBody struct {
	io.ReadCloser
	t   *Ticket
	ctx context.Context
}

func (b pausingBody) Read(p []byte) (int, error) {
	b.t.Pause()
	defer b.t.Resume(b.ctx)
	return b.ReadCloser.Read(p)
}

// pausingWriter gives the slot back while the answer is written: a client
// that reads slowly holds nobody's CPU.
type pausingWriter struct {
	http.ResponseWriter
	t   *Ticket
	ctx context.Context
}

func (w pausingWriter) Write(p []byte) (int, error) {
	w.t.Pause()
	defer w.t.Resume(w.ctx)
	return w.ResponseWriter.Write(p)
}

// Flush lets SSE answers through the wrapper; it may wait on the client
// as a write does.
func (w pausingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		w.t.Pause()
		defer w.t.Resume(w.ctx)
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w pausingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
