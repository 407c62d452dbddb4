// Package admission owns the HTTP front door's admission limits: how many
// requests run at once, how many one source address may send per minute, how
// long a request may take to start its answer, and the drain on shutdown. It
// does not authenticate callers or know the protocol behind the handler it
// wraps.
//
// Each refusal answers at once with a status a client can act on (503 or 429
// with Retry-After: 1, 408) and never reaches the wrapped handler.
package admission

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Options are the admission limits, in front of every route but the health
// probes.
type Options struct {
	MaxConcurrency    int           // 503 + Retry-After beyond it; must be at least 1
	RequestsPerMinute int           // per source IP; 429 + Retry-After beyond it; 0 means no limit
	RequestTimeout    time.Duration // 408 when no answer has started by then; 0 means none
	Now               func() time.Time
}

// MaxRateEntries bounds the per-IP table; the oldest idle entries go first.
const MaxRateEntries = 4096

// Gate applies the limits of Options to the handlers it wraps. It is safe
// for concurrent use.
type Gate struct {
	opts  Options
	slots chan struct{}
	// draining is set on shutdown: new requests get 503 while running
	// ones finish.
	draining atomic.Bool
	// active counts admitted requests that are not long-lived streams;
	// drain waits for it to reach zero.
	active atomic.Int64

	mu    sync.Mutex // guards rates
	rates map[string]*bucket
}

// bucket is a token bucket refilled continuously at RequestsPerMinute.
type bucket struct {
	tokens float64
	last   time.Time
}

// New returns a gate with the limits of o.
func New(o Options) *Gate {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Gate{opts: o, slots: make(chan struct{}, o.MaxConcurrency), rates: map[string]*bucket{}}
}

// Draining reports whether Drain has begun: new requests get 503.
func (g *Gate) Draining() bool { return g.draining.Load() }

// Active is the number of admitted requests that are not long-lived streams.
func (g *Gate) Active() int64 { return g.active.Load() }

func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, msg, status)
}

// Wrap applies drain, rate, concurrency and timeout limits to next.
func (g *Gate) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.draining.Load() {
			refuse(w, http.StatusServiceUnavailable, "server is shutting down")
			return
		}
		if !g.allow(clientIP(r)) {
			refuse(w, http.StatusTooManyRequests, "too many requests")
			return
		}
		select {
		case g.slots <- struct{}{}:
			defer func() { <-g.slots }()
		default:
			refuse(w, http.StatusServiceUnavailable, "too many concurrent requests")
			return
		}
		if !isStream(r) {
			g.active.Add(1)
			defer g.active.Add(-1)
		}
		g.withTimeout(next, w, r)
	})
}

// withTimeout ends a request that has not started its answer within
// RequestTimeout with 408. A streaming answer that has started (SSE,
// subscriptions) is not cut: its client is waiting on the stream itself.
func (g *Gate) withTimeout(next http.Handler, w http.ResponseWriter, r *http.Request) {
	if g.opts.RequestTimeout <= 0 {
		next.ServeHTTP(w, r)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	tw := &timeoutWriter{ResponseWriter: w}
	timer := time.AfterFunc(g.opts.RequestTimeout, func() {
		if tw.expire() {
			cancel()
		}
	})
	defer timer.Stop()
	next.ServeHTTP(tw, r.WithContext(ctx))
	if tw.expired() {
		http.Error(w, "request timed out", http.StatusRequestTimeout)
	}
}

// timeoutWriter drops the handler's writes once the request timed out, so
// the 408 is the only answer.
type timeoutWriter struct {
	http.ResponseWriter
	mu       sync.Mutex // guards started and timedOut
	started  bool
	timedOut bool
}

// expire marks the request timed out unless its answer started.
func (t *timeoutWriter) expire() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		return false
	}
	t.timedOut = true
	return true
}

func (t *timeoutWriter) expired() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.timedOut
}

func (t *timeoutWriter) begin() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timedOut {
		return false
	}
	t.started = true
	return true
}

func (t *timeoutWriter) WriteHeader(code int) {
	if t.begin() {
		t.ResponseWriter.WriteHeader(code)
	}
}

func (t *timeoutWriter) Write(b []byte) (int, error) {
	if !t.begin() {
		return 0, http.ErrHandlerTimeout
	}
	return t.ResponseWriter.Write(b)
}

// Flush lets SSE answers through the wrapper.
func (t *timeoutWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok && !t.expired() {
		f.Flush()
	}
}

// allow spends one request token of ip.
func (g *Gate) allow(ip string) bool {
	if g.opts.RequestsPerMinute <= 0 {
		return true
	}
	now := g.opts.Now()
	rate := float64(g.opts.RequestsPerMinute) / 60 // tokens per second
	capacity := float64(g.opts.RequestsPerMinute)
	g.mu.Lock()
	defer g.mu.Unlock()
	b, ok := g.rates[ip]
	if !ok {
		if len(g.rates) >= MaxRateEntries {
			g.evictLocked(now, capacity, rate)
		}
		b = &bucket{tokens: capacity, last: now}
		g.rates[ip] = b
	}
	b.tokens = min(capacity, b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// evictLocked drops buckets that have refilled (they carry no state), and
// if none has, the least recently used one.
func (g *Gate) evictLocked(now time.Time, capacity, rate float64) {
	var oldest string
	for ip, b := range g.rates {
		if b.tokens+now.Sub(b.last).Seconds()*rate >= capacity {
			delete(g.rates, ip)
			continue
		}
		if oldest == "" || b.last.Before(g.rates[oldest].last) {
			oldest = ip
		}
	}
	if len(g.rates) >= MaxRateEntries && oldest != "" {
		delete(g.rates, oldest)
	}
}

// isStream reports requests that stay open by design: legacy standalone
// GET streams and 2026-07-28 subscription streams (Mcp-Method is checked
// against the body by the MCP handler, so it can be trusted for this).
func isStream(r *http.Request) bool {
	return r.Method == http.MethodGet || r.Header.Get("Mcp-Method") == "subscriptions/listen"
}

// Drain stops admission and waits until no ordinary request runs, or ctx
// ends. Streams are left to the caller to end.
func (g *Gate) Drain(ctx context.Context) {
	g.draining.Store(true)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for g.active.Load() > 0 {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// clientIP is the connection's source address; forwarded headers are not
// trusted, since any client can set them.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
