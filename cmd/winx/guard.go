package main

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Admission limits of the HTTP front door, in front of every route but the
// health probes. Each refusal answers at once with a status a client can act
// on and never reaches the MCP handler.
type guardOptions struct {
	maxConcurrency    int           // 503 + Retry-After beyond it
	requestsPerMinute int           // per source IP; 429 + Retry-After beyond it
	requestTimeout    time.Duration // 408 when no answer has started by then
	now               func() time.Time
}

// maxRateEntries bounds the per-IP table; the oldest idle entries go first.
const maxRateEntries = 4096

type guard struct {
	opts  guardOptions
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

// bucket is a token bucket refilled continuously at requestsPerMinute.
type bucket struct {
	tokens float64
	last   time.Time
}

func newGuard(o guardOptions) *guard {
	if o.now == nil {
		o.now = time.Now
	}
	return &guard{opts: o, slots: make(chan struct{}, o.maxConcurrency), rates: map[string]*bucket{}}
}

func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, msg, status)
}

// wrap applies drain, rate, concurrency and timeout limits to next.
func (g *guard) wrap(next http.Handler) http.Handler {
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
// requestTimeout with 408. A streaming answer that has started (SSE,
// subscriptions) is not cut: its client is waiting on the stream itself.
func (g *guard) withTimeout(next http.Handler, w http.ResponseWriter, r *http.Request) {
	if g.opts.requestTimeout <= 0 {
		next.ServeHTTP(w, r)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	tw := &timeoutWriter{ResponseWriter: w}
	timer := time.AfterFunc(g.opts.requestTimeout, func() {
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
func (g *guard) allow(ip string) bool {
	if g.opts.requestsPerMinute <= 0 {
		return true
	}
	now := g.opts.now()
	rate := float64(g.opts.requestsPerMinute) / 60 // tokens per second
	capacity := float64(g.opts.requestsPerMinute)
	g.mu.Lock()
	defer g.mu.Unlock()
	b, ok := g.rates[ip]
	if !ok {
		if len(g.rates) >= maxRateEntries {
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
func (g *guard) evictLocked(now time.Time, capacity, rate float64) {
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
	if len(g.rates) >= maxRateEntries && oldest != "" {
		delete(g.rates, oldest)
	}
}

// isStream reports requests that stay open by design: legacy standalone
// GET streams and 2026-07-28 subscription streams (Mcp-Method is checked
// against the body by the MCP handler, so it can be trusted for this).
func isStream(r *http.Request) bool {
	return r.Method == http.MethodGet || r.Header.Get("Mcp-Method") == "subscriptions/listen"
}

// drain stops admission and waits until no ordinary request runs, or ctx
// ends. Streams are left to the caller to end.
func (g *guard) drain(ctx context.Context) {
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
