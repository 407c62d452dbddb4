// Package httpserve assembles winx's Streamable HTTP server: the listener
// (loopback unless allowed otherwise), the admission gate in front of /mcp
// (and of the REST tool API under /api/ when it is on),
// the health probes /healthz and /readyz, bearer-token and principal
// authentication, and the drain on shutdown. It does not speak the protocol
// (package mcp does) and does not know the tool catalog: profiles come from
// the caller as values.
package httpserve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"time"

	"winx/auth/admission"
	"winx/mcp"
)

// HTTP server limits against slow or abusive clients.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
)

// ShutdownGrace is how long Serve lets running requests finish once its
// context ends.
const ShutdownGrace = 30 * time.Second

// Options are how Serve serves its listener.
type Options struct {
	// Bind is the host:port the listener was opened on as the user named
	// it (--bind): a host name there is accepted in Host and Origin when it
	// is not loopback, which the listener's address (an IP) cannot say.
	// Empty means the listener's address.
	Bind             string
	AllowNonLoopback bool     // allow a listener whose host is not loopback
	AllowedHosts     []string // extra names accepted in Host and Origin
	MaxBodyBytes     int64    // largest request body; larger gets 413
	// Admission are the admission limits; Identify and Principals are
	// filled from the authenticator, a zero BodyBudget means
	// max(MaxBodyBytes, mcp.DefaultMaxBodyBytes), and zero byte rates and
	// heavy-body limits take their defaults (see fairShare).
	Admission admission.Options
	Logger    *slog.Logger // nil discards
	// REST mounts the REST tool API (mcp.RESTHandler) under /api/, behind
	// the same authentication and admission gate as /mcp; off, /api/
	// paths answer 404.
	REST bool
	// Wrap, when set, wraps the whole handler (every path, before
	// admission): the operational log's per-request record.
	Wrap func(http.Handler) http.Handler
}

// Listen opens the TCP listener Serve takes for bind (host:port, what
// --bind names). It refuses a host that is not loopback unless
// allowNonLoopback, before anything listens.
func Listen(bind string, allowNonLoopback bool) (net.Listener, error) {
	if err := checkBind(bind, allowNonLoopback); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, fmt.Errorf("winx: listen: %w", err)
	}
	return ln, nil
}

// checkBind refuses a bind address without a port, or whose host is not
// loopback unless allowNonLoopback.
func checkBind(bind string, allowNonLoopback bool) error {
	host, _, err := net.SplitHostPort(bind)
	if err != nil {
		return fmt.Errorf("winx: --bind %q: %w", bind, err)
	}
	if !IsLoopback(host) && !allowNonLoopback {
		return fmt.Errorf("winx: refusing to bind %s: not a loopback address (use --allow-non-loopback behind an authenticating proxy)", bind)
	}
	return nil
}

// Serve serves srv on ln until ctx ends, then drains: new requests get
// 503 while the running ones finish (at most 30 s), streams are ended and
// the server shuts down. It returns nil after a clean drain. Serve owns ln
// from the call on and closes it, also when it refuses it: a listener whose
// host is not loopback is refused unless o.AllowNonLoopback, as Listen
// refuses such an address. The listener comes first, as with net/http and
// httptest, so that a caller (a test) holds its port from the start.
func Serve(ctx context.Context, ln net.Listener, srv *mcp.Server, authn mcp.Authenticator, o *Options) error {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	bind := o.Bind
	if bind == "" {
		bind = ln.Addr().String()
	}
	if err := checkBind(bind, o.AllowNonLoopback); err != nil {
		ln.Close()
		return err
	}
	if err := checkBind(ln.Addr().String(), o.AllowNonLoopback); err != nil {
		ln.Close()
		return err
	}
	host, _, _ := net.SplitHostPort(bind)
	allowed := append([]string(nil), o.AllowedHosts...)
	if ip := net.ParseIP(host); host != "" && !IsLoopback(host) && (ip == nil || !ip.IsUnspecified()) {
		allowed = append(allowed, host)
	}
	ao := o.Admission
	principals := 1
	if c, ok := authn.(interface{ Principals() int }); ok {
		principals = c.Principals()
	}
	ao.Principals = principals
	if authn != nil {
		// The gate authenticates once, before any limit is spent, so that
		// failed authentication is limited apart from valid tokens; the
		// handler reads the result instead of authenticating again.
		ao.Identify = func(r *http.Request) admission.Identity {
			c, err := authn.Authenticate(r)
			return admission.Identity{Principal: c.Principal, Err: err, Value: c}
		}
		authn = identified{authn}
	}
	if ao.BodyBudget == 0 {
		ao.BodyBudget = max(o.MaxBodyBytes, mcp.DefaultMaxBodyBytes)
	}
	fairShare(&ao, o.MaxBodyBytes)
	hopts := &mcp.HTTPOptions{
		Auth:         authn,
		AllowedHosts: allowed,
		MaxBodyBytes: o.MaxBodyBytes,
	}
	if principals > 1 {
		// One principal may hold at most half of the legacy sessions.
		hopts.MaxSessionsPerPrincipal = mcp.DefaultMaxSessions / 2
	}
	handler := mcp.NewHTTPHandler(srv, hopts)
	g := admission.New(ao)
	mux := http.NewServeMux()
	mux.Handle("/mcp", g.Wrap(withCPUShare(handler)))
	if o.REST {
		// One gate for both doors: limits, shares and drain are shared.
		mux.Handle("/api/", g.Wrap(withCPUShare(mcp.NewRESTHandler(srv, hopts))))
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if g.Draining() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	})
	// Streams (subscriptions, legacy GET streams) live as long as their
	// request context; cancelling the base context on shutdown ends them so
	// that Shutdown can drain the rest.
	streamCtx, endStreams := context.WithCancel(context.WithoutCancel(ctx))
	defer endStreams()
	var root http.Handler = mux
	if o.Wrap != nil {
		root = o.Wrap(mux)
	}
	hs := &http.Server{
		Handler:           root,
		BaseContext:       func(net.Listener) context.Context { return streamCtx },
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("serving Streamable HTTP", "addr", ln.Addr().String(), "endpoint", "/mcp", "rest", o.REST)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Drain: new requests get 503 while the running ones finish; then the
	// streams are ended and the server shuts down.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	logger.Info("draining", "active", g.Active())
	g.Drain(shutdownCtx)
	hs.RegisterOnShutdown(endStreams)
	if err := hs.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("winx: shutdown: %w", err)
	}
	return nil
}

// fairShare fills the byte rates and heavy slots of ao left at zero with
// their defaults (a negative value turns one off): a principal spends
// admission.DefaultBytesPerSecond with a burst of one largest body, failed
// authentication its smaller allowance per IP, a principal's answers
// admission.DefaultAnswerBytesPerSecond, and bodies over
// admission.DefaultHeavyBytes are decoded one at a time per principal (and
// so are all requests of a principal whose recent answers average over
// admission.DefaultHeavyAnswerBytes), so that one principal's large bodies
// and answers leave CPU for the others' requests, and
// as many at once as there are cores (at least 2, so that one principal
// holding its slot with a slow body never holds them all).
func fairShare(ao *admission.Options, maxBody int64) {
	orDefault(&ao.BytesPerSecond, admission.DefaultBytesPerSecond)
	if ao.BytesBurst <= 0 {
		ao.BytesBurst = max(maxBody, mcp.DefaultMaxBodyBytes)
	}
	orDefault(&ao.UnauthBytesPerSecond, admission.DefaultUnauthBytesPerSecond)
	if ao.UnauthBytesBurst <= 0 {
		ao.UnauthBytesBurst = admission.DefaultUnauthBytesBurst
	}
	orDefault(&ao.HeavyBytes, admission.DefaultHeavyBytes)
	orDefault(&ao.AnswerBytesPerSecond, admission.DefaultAnswerBytesPerSecond)
	if ao.HeavyBytes > 0 {
		// Large answers take the large bodies' slots; without those, no default.
		orDefault(&ao.HeavyAnswerBytes, admission.DefaultHeavyAnswerBytes)
	} else {
		ao.HeavyAnswerBytes = max(ao.HeavyAnswerBytes, 0)
	}
	if ao.HeavySlots <= 0 {
		ao.HeavySlots = max(2, runtime.GOMAXPROCS(0))
	}
	orDefault(&ao.RefusalDelay, admission.DefaultRefusalDelay)
	orDefault(&ao.CPUSlots, max(2, runtime.GOMAXPROCS(0)))
}

// orDefault sets a limit left at zero to its default and turns a negative
// one off (zero).
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	switch {
	case *v == 0:
		*v = def
	case *v < 0:
		*v = 0
	}
}

// withCPUShare hands the gate's CPU ticket to the protocol, whose tools
// that wait give it back while they wait.
func withCPUShare(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t := admission.TicketOf(r.Context()); t != nil {
			r = r.WithContext(mcp.WithCPUShare(r.Context(), t))
		}
		h.ServeHTTP(w, r)
	})
}

// identified hands the handler the caller the admission gate authenticated.
type identified struct{ authn mcp.Authenticator }

func (a identified) Authenticate(r *http.Request) (mcp.Caller, error) {
	id, ok := admission.IdentityOf(r.Context())
	if !ok {
		return a.authn.Authenticate(r)
	}
	if id.Err != nil {
		return mcp.Caller{}, id.Err
	}
	return id.Value.(mcp.Caller), nil
}

// IsLoopback reports a host name or address that only this machine reaches:
// "localhost" or a loopback IP, bracketed or not.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
