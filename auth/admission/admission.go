// Package admission owns the HTTP front door's admission limits: how many
// requests run at once and how many of them one principal may hold, how many
// one source may send per minute (failed authentication counted apart), how
// long a request may take to read its body and start its answer, how many
// body bytes all requests may buffer at once, each principal's share of the
// CPU (cpu.go), the pause before a refusal (tarpit.go), and the drain on
// shutdown. It does not check credentials itself (Options.Identify does)
// and does not know the protocol behind the handler it wraps.
//
// Each refusal answers with a status a client can act on (503 or 429 with
// Retry-After, 408) and never reaches the wrapped handler.
//
// Shares: when more than one principal is configured, one principal may hold
// at most half (rounded up) of the concurrency slots, subscription and
// legacy streams included, so that no principal can starve the others.
package admission

import (
	"context"
	"errors"
	"io"
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
	RequestTimeout    time.Duration // 408 when no answer has started by then (body read included); 0 means none
	Now               func() time.Time

	// Identify authenticates a request before any limit is spent, so that
	// failed authentication is limited apart from authenticated traffic:
	// a request Identify refuses spends a per-IP failure allowance
	// (RequestsPerMinute), takes no slot and reaches the handler (which
	// answers 401) with its Identity in the context; an authenticated one
	// spends the allowance of its principal at its IP. nil identifies every
	// request as the principal "".
	Identify func(*http.Request) Identity
	// Principals is how many principals are configured; above one, each
	// principal may hold at most a share (half, rounded up) of the slots.
	Principals int
	// BodyBudget bounds the body bytes of all admitted requests at once;
	// a request that would exceed it waits up to BodyWait, then gets 503
	// with Retry-After. 0 means no bound.
	BodyBudget int64
	// BodyWait is how long a body waits for BodyBudget (default 1 s).
	BodyWait time.Duration

	// BytesPerSecond is the body byte rate of one principal (all its
	// source addresses together), with a burst of BytesBurst (at least
	// BytesPerSecond): a declared length over what is left gets 429 with
	// Retry-After before its body is read, one over the burst 413; a
	// chunked body spends as it is read and fails with 429 when it runs
	// out. 0 means no byte rate.
	BytesPerSecond int64
	BytesBurst     int64
	// UnauthBytesPerSecond and UnauthBytesBurst are the same allowance for
	// requests that failed authentication, per source IP: their bodies are
	// never read, but a client that sends them still spends it. 0 means
	// none.
	UnauthBytesPerSecond int64
	UnauthBytesBurst     int64
	// HeavyBytes: a body larger than this, or of unknown length, is read
	// and handled under its principal's single heavy slot and one of
	// HeavySlots global ones (until its answer starts), waiting at most
	// HeavyWait (default 10 s) before 503. 0 means no such slots.
	HeavyBytes int64
	HeavySlots int // default 1
	HeavyWait  time.Duration
	// HeavyAnswerBytes: while a principal's recent answers average more
	// than this (a moving average), all its requests take the heavy slots
	// too: producing and encoding large answers is CPU as well, and the
	// size of the next answer is not known before it is produced. 0 means
	// answers are not counted.
	HeavyAnswerBytes int64
	// AnswerBytesPerSecond is the answer byte rate of one principal, with
	// a burst of BytesBurst: an answer's bytes are charged once written
	// (the bucket may go into debt), and while a principal is in debt its
	// requests get 429 with Retry-After, so that producing large answers
	// for one principal cannot take the CPU the others need. 0 means none.
	AnswerBytesPerSecond int64
	// RefusalDelay: a request refused for its source's own limits (its
	// request rate, its byte rate, its answer bytes, its share of the
	// concurrency slots) is
	// answered after the wait its Retry-After names, at most this long,
	// with its body still unread, so that a client that ignores
	// Retry-After and sends again at once spends its own time waiting, not
	// the cores on connections and copies; a bounded number of
	// connections per source wait at once (see tarpit), the others are
	// refused at once. 0 means none.
	RefusalDelay time.Duration
	// CPUSlots is how many admitted requests compute at once, about one
	// per core; a principal holds at most half of them when more than one
	// principal is configured, and a freed slot goes to the waiting
	// principals in turn (see Ticket). 0 means no CPU share.
	CPUSlots int
}

// DefaultRefusalDelay is the longest pause before a byte-rate refusal that
// the HTTP server sets by default (Options.RefusalDelay).
const DefaultRefusalDelay = time.Second

// DefaultHeavyWait is the default of Options.HeavyWait.
const DefaultHeavyWait = 10 * time.Second

// Identity is who Options.Identify found a request to come from.
type Identity struct {
	Principal string
	// Err is non-nil when authentication failed.
	Err error
	// Value is what the identifier hands to the wrapped handler (the
	// authenticated caller), so that it need not authenticate again.
	Value any
}

type identityKey struct{}

// IdentityOf returns the Identity the gate found for the request of ctx;
// false when the request did not pass a gate with Options.Identify.
func IdentityOf(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// ErrBodyBudget is the read error of a body that found no room in
// Options.BodyBudget within Options.BodyWait; the gate answers 503.
var ErrBodyBudget = errors.New("admission: request bodies over the byte budget")

// ErrByteRate is the read error of a body of unknown length that ran out
// of its principal's byte rate (Options.BytesPerSecond); the gate answers
// 429 with Retry-After.
var ErrByteRate = errors.New("admission: request body over the principal's byte rate")

// DefaultBodyWait is the default of Options.BodyWait.
const DefaultBodyWait = time.Second

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

	mu    sync.Mutex // guards rates and held
	rates map[string]*bucket
	held  map[string]int // slots held per principal
	// answers is each principal's moving average of answer bytes, for
	// HeavyAnswerBytes; it has an entry per principal that was answered.
	answers map[string]float64

	bodies budget

	bytes  *byteBuckets // per principal; nil without a byte rate
	answer *byteBuckets // answer bytes per principal; nil without a rate
	unauth *byteBuckets // per source IP of failed authentication; nil without
	heavy  *heavy       // nil when HeavyBytes is 0
	cpu    *cpuShare    // nil when CPUSlots is 0
	tarpit tarpit
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
	if o.BodyWait <= 0 {
		o.BodyWait = DefaultBodyWait
	}
	if o.HeavySlots <= 0 {
		o.HeavySlots = 1
	}
	if o.HeavyWait <= 0 {
		o.HeavyWait = DefaultHeavyWait
	}
	g := &Gate{opts: o, slots: make(chan struct{}, o.MaxConcurrency), rates: map[string]*bucket{}, held: map[string]int{}, answers: map[string]float64{}}
	g.bytes = newByteBuckets(o.BytesPerSecond, o.BytesBurst, o.Now)
	g.answer = newByteBuckets(o.AnswerBytesPerSecond, max(o.BytesBurst, o.AnswerBytesPerSecond), o.Now)
	g.unauth = newByteBuckets(o.UnauthBytesPerSecond, o.UnauthBytesBurst, o.Now)
	if o.HeavyBytes > 0 {
		g.heavy = newHeavy(o.HeavySlots)
	}
	if o.CPUSlots > 0 {
		g.cpu = newCPUShare(o.CPUSlots, o.Principals)
	}
	g.tarpit = tarpit{delay: o.RefusalDelay, held: map[string]int{}}
	g.bodies.free = o.BodyBudget
	g.bodies.held = map[string]int64{}
	g.bodies.changed = make(chan struct{})
	g.bodies.share = o.BodyBudget
	if o.Principals > 1 {
		g.bodies.share = (o.BodyBudget + 1) / 2
	}
	return g
}

// share is how many slots one principal may hold.
func (g *Gate) share() int {
	if g.opts.Principals <= 1 {
		return g.opts.MaxConcurrency
	}
	return max(1, (g.opts.MaxConcurrency+1)/2)
}

// hold takes a slot share of principal; false when its share is used up.
func (g *Gate) hold(principal string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held[principal] >= g.share() {
		return false
	}
	g.held[principal]++
	return true
}

func (g *Gate) unhold(principal string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held[principal]--; g.held[principal] <= 0 {
		delete(g.held, principal)
	}
}

// Draining reports whether Drain has begun: new requests get 503.
func (g *Gate) Draining() bool { return g.draining.Load() }

// Active is the number of admitted requests that are not long-lived streams.
func (g *Gate) Active() int64 { return g.active.Load() }

func refuse(w http.ResponseWriter, status int, msg string) {
	refuseAfter(w, status, msg, "1")
}

// refuseAfter refuses with a Retry-After of retry seconds. The connection
// is closed after the answer: the body was not read, and reading it only
// to throw it away would spend what the refusal saves.
func refuseAfter(w http.ResponseWriter, status int, msg, retry string) {
	w.Header().Set("Retry-After", retry)
	w.Header().Set("Connection", "close")
	http.Error(w, msg, status)
}

// spend takes a declared body length from the bucket of key; false when
// the request was refused (429 with the wait, or 413 over the burst). A 429
// is answered after a pause (see tarpit).
func (g *Gate) spend(w http.ResponseWriter, r *http.Request, b *byteBuckets, key string) bool {
	wait, never := b.take(key, r.ContentLength)
	switch {
	case never:
		refuse(w, http.StatusRequestEntityTooLarge, "request body over the byte burst")
		return false
	case wait > 0:
		g.refuseHeld(w, r, key, wait, http.StatusTooManyRequests, "too many request body bytes")
		return false
	}
	return true
}

// refuseHeld refuses a request for its source's own limits, with a
// Retry-After of wait, after holding it (see tarpit): resending at once
// costs the sender its time, not the server's cores.
func (g *Gate) refuseHeld(w http.ResponseWriter, r *http.Request, source string, wait time.Duration, status int, msg string) {
	g.tarpit.pause(r.Context(), source, wait)
	refuseAfter(w, status, msg, retryAfter(wait))
}

// Wrap applies drain, authentication-aware rate, concurrency (with
// per-principal shares), body budget and timeout limits to next.
func (g *Gate) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.draining.Load() {
			refuse(w, http.StatusServiceUnavailable, "server is shutting down")
			return
		}
		var id Identity
		if g.opts.Identify != nil {
			id = g.opts.Identify(r)
			r = r.WithContext(context.WithValue(r.Context(), identityKey{}, id))
		}
		ip := clientIP(r)
		if id.Err != nil {
			// Failed authentication has its own allowance per IP and takes
			// no slot: the handler answers 401 without reading the body.
			if !g.allow("fail\x00" + ip) {
				g.refuseHeld(w, r, ip, time.Second, http.StatusTooManyRequests, "too many requests")
				return
			}
			if !g.spend(w, r, g.unauth, ip) {
				return
			}
			g.active.Add(1)
			defer g.active.Add(-1)
			next.ServeHTTP(w, r)
			return
		}
		if !g.allow("ok\x00" + id.Principal + "\x00" + ip) {
			g.refuseHeld(w, r, id.Principal, time.Second, http.StatusTooManyRequests, "too many requests")
			return
		}
		if !g.spend(w, r, g.bytes, id.Principal) {
			return
		}
		if wait := g.answer.owed(id.Principal); wait > 0 {
			g.refuseHeld(w, r, id.Principal, wait, http.StatusTooManyRequests, "too many answer bytes")
			return
		}
		if !g.hold(id.Principal) {
			g.refuseHeld(w, r, id.Principal, time.Second, http.StatusServiceUnavailable, "too many concurrent requests for this principal")
			return
		}
		defer g.unhold(id.Principal)
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
		g.serve(next, w, r, id.Principal)
	})
}

// serve runs next under the body budget and the request timeout. A request
// that has not started its answer within RequestTimeout gets 408, and a
// body still being read then fails its read, so a slow body frees its slot.
// A streaming answer that has started (SSE, subscriptions) is not cut: its
// client is waiting on the stream itself.
func (g *Gate) serve(next http.Handler, w http.ResponseWriter, r *http.Request, principal string) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	r = r.WithContext(ctx)
	tw := &timeoutWriter{ResponseWriter: w}
	body := &budgetBody{ReadCloser: r.Body, g: g, ctx: ctx, tw: tw, left: r.ContentLength, done: r.ContentLength == 0, principal: principal}
	if g.heavy != nil && !isStream(r) && (r.ContentLength > g.opts.HeavyBytes || r.ContentLength < 0 || g.answersHeavy(principal)) {
		// Decoding a large body is the CPU one principal can take from the
		// others: it waits for its principal's heavy slot (behind that
		// principal's own large bodies) and a global one, and holds them
		// until its answer starts.
		release, ok := g.heavy.acquire(ctx, principal, g.opts.HeavyWait)
		if !ok {
			refuse(w, http.StatusServiceUnavailable, "too many large request bodies for this principal")
			return
		}
		defer release()
		tw.onStart = release
	}
	defer body.release()
	if g.opts.BodyBudget > 0 && r.ContentLength > g.opts.BodyBudget {
		// It could never fit: refuse it before it holds any of the budget.
		refuse(w, http.StatusRequestEntityTooLarge, "request body over the server's byte budget")
		return
	}
	if g.opts.BodyBudget > 0 && r.ContentLength > 0 {
		// A declared length is reserved before the first byte is read, so
		// partly read bodies never hold the budget waiting for each other.
		n := r.ContentLength
		if !g.bodies.acquire(ctx, principal, n, g.opts.BodyWait) {
			refuse(w, http.StatusServiceUnavailable, "request bodies over the server's byte budget")
			return
		}
		body.reserved, body.prepaid = n, n
	}
	// A declared length is paid in full; only chunked bodies pay as they
	// are read.
	body.paid = g.opts.BodyBudget <= 0 || r.ContentLength >= 0
	r.Body = body
	if g.opts.RequestTimeout > 0 {
		rc := http.NewResponseController(w)
		timer := time.AfterFunc(g.opts.RequestTimeout, func() {
			if tw.expire(http.StatusRequestTimeout, "request timed out") {
				cancel()
				if !body.finished() {
					// The handler may be blocked reading a slow body;
					// only the connection deadline ends that read.
					rc.SetReadDeadline(time.Now())
				}
			}
		})
		defer timer.Stop()
	}
	var out http.ResponseWriter = tw
	computing := true
	if g.cpu != nil && !isStream(r) {
		// The request computes under its principal's CPU share (waiting
		// its turn, within the request timeout), and gives its slot back
		// while its body arrives and its answer leaves.
		t := &Ticket{share: g.cpu, principal: principal}
		t.Resume(ctx)
		defer t.end()
		computing = t.held
		ctx = context.WithValue(ctx, ticketKey{}, t)
		r = r.WithContext(ctx)
		r.Body = pausingBody{ReadCloser: body, t: t, ctx: ctx}
		out = pausingWriter{ResponseWriter: tw, t: t, ctx: ctx}
	}
	if computing {
		next.ServeHTTP(out, r)
	} else {
		tw.expire(http.StatusServiceUnavailable, "request ended waiting for its turn")
	}
	if !isStream(r) {
		g.noteAnswer(principal, tw.bytes())
		g.answer.charge(principal, tw.bytes())
	}
	if status, msg := tw.failure(); status != 0 {
		if status != http.StatusRequestTimeout {
			w.Header().Set("Retry-After", tw.retryAfter())
		}
		http.Error(w, msg, status)
	}
}

// answerWeight is the weight of the latest answer in a principal's moving
// average of answer sizes: a few small answers end a run of large ones.
const answerWeight = 0.25

// answersHeavy reports whether principal's recent answers are large.
func (g *Gate) answersHeavy(principal string) bool {
	if g.opts.HeavyAnswerBytes <= 0 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.answers[principal] > float64(g.opts.HeavyAnswerBytes)
}

func (g *Gate) noteAnswer(principal string, n int64) {
	if g.opts.HeavyAnswerBytes <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.answers[principal] = (1-answerWeight)*g.answers[principal] + answerWeight*float64(n)
}

// timeoutWriter drops the handler's writes once the request failed (timed
// out, or its body found no budget), so the gate's answer is the only one.
type timeoutWriter struct {
	http.ResponseWriter
	mu      sync.Mutex // guards started, status and msg
	started bool
	status  int // the gate's answer once failed; 0 while not
	msg     string
	retry   string // Retry-After of a failure; "" means 1
	written int64  // answer bytes written
	// onStart, when set, runs once when the answer starts (it releases
	// the heavy slots, which guard decoding, not the tool's run).
	onStart func()
}

// expireAfter is expire with a Retry-After of retry seconds.
func (t *timeoutWriter) expireAfter(status int, msg, retry string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started || t.status != 0 {
		return false
	}
	t.status, t.msg, t.retry = status, msg, retry
	return true
}

func (t *timeoutWriter) retryAfter() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.retry == "" {
		return "1"
	}
	return t.retry
}

// expire fails the request with status unless its answer started or it
// already failed.
func (t *timeoutWriter) expire(status int, msg string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started || t.status != 0 {
		return false
	}
	t.status, t.msg = status, msg
	return true
}

func (t *timeoutWriter) failure() (int, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.msg
}

func (t *timeoutWriter) expired() bool {
	status, _ := t.failure()
	return status != 0
}

func (t *timeoutWriter) begin() bool {
	t.mu.Lock()
	if t.status != 0 {
		t.mu.Unlock()
		return false
	}
	first := !t.started
	t.started = true
	start := t.onStart
	t.mu.Unlock()
	if first && start != nil {
		start()
	}
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
	n, err := t.ResponseWriter.Write(b)
	t.mu.Lock()
	t.written += int64(n)
	t.mu.Unlock()
	return n, err
}

func (t *timeoutWriter) bytes() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.written
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

// budget is a pool of body bytes shared by all requests. One principal may
// hold at most share of it, unless it holds nothing else (so that a single
// body of the largest size still fits): without the share, one principal's
// bodies could hold the whole pool and every other principal's smallest
// request would wait for it.
type budget struct {
	share   int64
	mu      sync.Mutex // guards free, held and changed
	free    int64
	held    map[string]int64 // bytes held per principal; absent when none
	changed chan struct{}    // closed and replaced on every release
}

// acquire takes n bytes for principal, waiting at most wait (or until ctx
// ends).
func (b *budget) acquire(ctx context.Context, principal string, n int64, wait time.Duration) bool {
	var timeout <-chan time.Time
	for {
		b.mu.Lock()
		own := b.held[principal]
		if b.free >= n && (own == 0 || own+n <= b.share) {
			b.free -= n
			b.held[principal] = own + n
			b.mu.Unlock()
			return true
		}
		changed := b.changed
		b.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (b *budget) release(principal string, n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	if b.held[principal] -= n; b.held[principal] <= 0 {
		delete(b.held, principal)
	}
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// maxBudgetStep bounds what one Read of a body of unknown length reserves.
const maxBudgetStep = 1 << 20

// budgetBody is a request body whose bytes are paid from the gate's budget:
// a declared length is prepaid at admission, a chunked body pays as it is
// read. It also records whether the body was read to its end.
type budgetBody struct {
	io.ReadCloser
	g        *Gate
	ctx      context.Context
	tw       *timeoutWriter
	mu       sync.Mutex // guards reserved and done
	reserved int64      // bytes held from the budget, returned by release
	prepaid  int64      // bytes still covered by the admission reservation
	paid     bool       // the whole body is covered: reads pay nothing
	left     int64      // declared bytes not read yet; negative when unknown
	done     bool       // read to its end
	// principal spends the byte rate of a body of unknown length as it
	// is read (a declared length was spent at admission).
	principal string
}

// spendRate takes n bytes of a chunked body from its principal's byte
// rate; false (and the request fails with 429) when they are not there.
func (b *budgetBody) spendRate(n int) bool {
	if b.left >= 0 {
		return true
	}
	wait, never := b.g.bytes.take(b.principal, int64(n))
	if wait > 0 || never {
		b.tw.expireAfter(http.StatusTooManyRequests, "too many request body bytes", retryAfter(max(wait, time.Second)))
		return false
	}
	return true
}

func (b *budgetBody) Read(p []byte) (int, error) {
	if b.left < 0 && len(p) > maxBudgetStep {
		p = p[:maxBudgetStep]
	}
	if b.paid {
		n, err := b.ReadCloser.Read(p)
		if n > 0 && !b.spendRate(n) {
			return 0, ErrByteRate
		}
		b.finish(n, err)
		return n, err
	}
	if b.prepaid <= 0 {
		if len(p) > maxBudgetStep {
			p = p[:maxBudgetStep]
		}
		want := min(int64(len(p)), b.g.opts.BodyBudget)
		if want > 0 && !b.g.bodies.acquire(b.ctx, b.principal, want, b.g.opts.BodyWait) {
			b.tw.expire(http.StatusServiceUnavailable, "request bodies over the server's byte budget")
			return 0, ErrBodyBudget
		}
		b.mu.Lock()
		b.reserved += want
		b.mu.Unlock()
		b.prepaid = want
	}
	if int64(len(p)) > b.prepaid {
		p = p[:b.prepaid]
	}
	n, err := b.ReadCloser.Read(p)
	b.prepaid -= int64(n)
	if n > 0 && !b.spendRate(n) {
		return 0, ErrByteRate
	}
	b.finish(n, err)
	return n, err
}

// finish records n bytes read; a body is done at EOF or, with a declared
// length, once that many bytes arrived (readers that read exactly the
// declared length never see EOF).
func (b *budgetBody) finish(n int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left > 0 {
		b.left -= int64(n)
	}
	if err == io.EOF || b.left == 0 {
		b.done = true
	}
}

func (b *budgetBody) finished() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done
}

// release returns the body's bytes to the budget when its request ends.
func (b *budgetBody) release() {
	b.mu.Lock()
	n := b.reserved
	b.reserved = 0
	b.mu.Unlock()
	b.g.bodies.release(b.principal, n)
}
