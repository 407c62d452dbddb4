package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"winx/guardian/remote"
	"winx/guardian/wire"
	"winx/jsonrpc"
)

// DefaultSpawnTimeout bounds starting one guardian (its socket and its
// shell's first prompt).
const DefaultSpawnTimeout = 15 * time.Second

// Guardians is a fleet seen through its sockets; *Fleet implements it for
// real processes, and the policy tests use a fake inside synctest bubbles.
type Guardians interface {
	Discover(ctx context.Context) ([]Guardian, []Unreachable, error)
	Close(ctx context.Context, g Guardian) error
}

// fleetOps adds what only winxd does: listing and probing sockets, and
// spawning.
type fleetOps interface {
	Guardians
	Sockets() ([]string, error)
	ProbeAll(ctx context.Context, sockets []string) ([]Guardian, []Unreachable)
	Probe(ctx context.Context, socket string) (Guardian, error)
	Spawn(ctx context.Context, p *EnsureParams, socket string) (Guardian, error)
	// Cleanup removes what a dead guardian left at socket: its descendants,
	// its record and the socket; it keeps the evidence of the lost session
	// (see remote.CleanupDead), with loss.
	Cleanup(socket string, loss remote.Loss) error
}

// Options configure a Server; zero fields mean defaults.
type Options struct {
	Dir           string // socket directory (required)
	GuardianBin   string // winx-guardian (required to spawn)
	Policy        Policy
	SweepInterval time.Duration // 0 means DefaultSweepInterval
	SpawnTimeout  time.Duration // 0 means DefaultSpawnTimeout
	Build         wire.Build
	// Secret is the wire secret: required of every peer's hello, and said
	// to every guardian (which is handed it when spawned).
	Secret string
	Logger *slog.Logger
	// OnRequest, when set, is told of every call winxd answered, after
	// it answered: the hook of the operational log, which this package
	// cannot format (that is the binary's). It is called on the serving
	// goroutine and must not block.
	OnRequest func(Request)
	// Now is the clock of TTL decisions; nil means time.Now.
	Now func() time.Time
}

// Server is winxd: it answers MethodEnsure, MethodList and MethodShutdown
// (a jsonrpc.Handler for wire.Serve) and sweeps expired guardians.
type Server struct {
	opts  Options
	ops   fleetOps
	hello wire.Hello
	log   *slog.Logger

	// sockets serializes ensure, the sweep and clean-up per guardian
	// socket: two requests for one key never spawn twice, and a sweep
	// never ends a guardian an ensure is handing out. Different keys spawn
	// in parallel.
	sockets socketLocks

	// quotaMu serializes quota decisions: one is made on the fleet plus
	// the spawns admitted before it, which nobody changes meanwhile.
	quotaMu sync.Mutex
	// spawning holds the socket and key of every admitted spawn not yet
	// finished (guarded by quotaMu); each counts as a busy guardian.
	spawning map[string]string
	// shutdown receives the reason of a requested shutdown (buffered: the
	// first request wins).
	shutdown chan string
	// guards watches the guardians' processes while Run runs (watch.go).
	guards *watcher
	// table is the method table (methods.go); read-only after newServer.
	table map[string]*method
}

// NewServer returns winxd for real guardian processes.
func NewServer(opts Options) *Server {
	hello := wire.NewHello(wire.RoleDaemon, opts.Build, methodNames())
	pf := &processFleet{
		Fleet:   Fleet{Dir: opts.Dir, Hello: hello.WithSecret(opts.Secret)},
		bin:     opts.GuardianBin,
		timeout: opts.SpawnTimeout,
	}
	s := newServer(opts, pf, hello)
	pf.spawned = s.watchSpawned
	return s
}

func newServer(opts Options, ops fleetOps, hello wire.Hello) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SweepInterval <= 0 {
		opts.SweepInterval = DefaultSweepInterval
	}
	opts.Policy = opts.Policy.withDefaults()
	s := &Server{
		opts: opts, ops: ops, hello: hello, log: opts.Logger, shutdown: make(chan string, 1), spawning: map[string]string{},
		table: methodTable(methods()),
	}
	s.guards = newWatcher(opts.Logger)
	s.guards.exited = s.guardianExited
	return s
}

// Hello is what the server says in the wire hello.
func (s *Server) Hello() wire.Hello { return s.hello }

// Request is one call winxd answered, as its operational log sees it. It
// holds no parameter: not the key (which names a workspace), the
// directories or the environment of an ensure; only hashes of the key and
// the principal's name, which the log hashes again before writing it.
type Request struct {
	Method string // as the peer sent it: the log clips it
	// Peer is the role the peer said in its hello (adapter, operator).
	Peer string
	// KeyHash names the session key of an ensure without its text: the
	// first 12 hex digits of its SHA-256, which also begin the hash that
	// names the guardian's socket. "" for other methods.
	KeyHash string
	// Principal is the principal the ensure's key names ("" when the key
	// has another layout or the method has no key); never log it unhashed.
	Principal string
	// Outcome is OutcomeOK, OutcomeSpawned, OutcomeReused or OutcomeError.
	Outcome string
	// Code is the JSON-RPC error code of a failed call, else 0.
	Code     int64
	Duration time.Duration
	Bytes    int // size of the JSON result
}

// Outcomes of a Request.
const (
	OutcomeOK      = "ok"
	OutcomeSpawned = "spawned" // an ensure started a guardian
	OutcomeReused  = "reused"  // an ensure found the key's guardian running
	OutcomeError   = "error"
)

// Handle answers one call and reports it to Options.OnRequest; it
// implements jsonrpc.Handler.
func (s *Server) Handle(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	m := s.table[req.Method] // nil: an unknown method
	if s.opts.OnRequest == nil {
		b, _, err := s.handle(ctx, m, req)
		return b, err
	}
	start := time.Now()
	b, spawned, err := s.handle(ctx, m, req)
	r := Request{Method: req.Method, Outcome: OutcomeOK, Duration: time.Since(start), Bytes: len(b)}
	if peer, ok := wire.PeerFrom(ctx); ok {
		r.Peer = peer.Hello.Role
	}
	if m != nil && m.keyed {
		var p struct {
			Key string `json:"key"`
		}
		if json.Unmarshal(req.Params, &p) == nil && p.Key != "" {
			sum := sha256.Sum256([]byte(p.Key))
			r.KeyHash = hex.EncodeToString(sum[:6])
			if k, ok := ParseSessionKey(p.Key); ok {
				r.Principal = k.Principal
			}
		}
		if spawned {
			r.Outcome = OutcomeSpawned
		} else {
			r.Outcome = OutcomeReused
		}
	}
	if err != nil {
		r.Outcome, r.Code = OutcomeError, jsonrpc.CodeInternalError
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			r.Code = we.Code
		}
	}
	s.opts.OnRequest(r)
	return b, err
}

// handle answers one call by its row m (nil for an unknown method);
// spawned reports an ensure that started a guardian.
func (s *Server) handle(ctx context.Context, m *method, req *jsonrpc.Request) (_ json.RawMessage, spawned bool, _ error) {
	if m == nil {
		return nil, false, unknownMethod(req.Method)
	}
	res, err := m.call(s, ctx, req)
	if err != nil {
		return nil, false, toWireError(err)
	}
	if er, ok := res.(*EnsureResult); ok {
		spawned = er.Spawned
	}
	b, err := json.Marshal(res)
	return b, spawned, err
}

func decode(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "daemon: "+err.Error())
	}
	return nil
}

// Ensure returns the guardian of p.Key, spawning it when none answers. At
// the quota it first reclaims the oldest never-used idle guardians, or
// fails with a *QuotaError. Requests for different keys run in parallel;
// the quota decision alone is serialized, and it probes no guardian while
// the fleet is clearly under the quota.
func (s *Server) Ensure(ctx context.Context, p *EnsureParams) (*EnsureResult, error) {
	socket := wire.GuardianSocket(s.opts.Dir, p.Key)
	unlock, err := s.sockets.lock(ctx, socket)
	if err != nil {
		return nil, err
	}
	defer unlock()
	g, err := s.ops.Probe(ctx, socket)
	switch {
	case err == nil && g.Status.Key != p.Key:
		return nil, fmt.Errorf("daemon: the guardian on %s serves another key", socket)
	case err == nil && !g.Status.Closed:
		return &EnsureResult{Guardian: g}, nil
	case err != nil && !errors.Is(err, wire.ErrNoServer):
		// Something answers but not well (busy, stopped, another uid):
		// starting a second guardian there would fail anyway.
		return nil, err
	case err != nil:
		// A socket nobody listens on: a guardian died there. What it left
		// goes before a new one takes the socket.
		if cerr := s.ops.Cleanup(socket, remote.Loss{Reason: remote.LostGuardianDied}); cerr != nil {
			s.log.Warn("clean up after a dead guardian", "socket", socket, "err", cerr)
		}
	}
	victims, err := s.admit(ctx, socket, p.Key)
	if err != nil {
		return nil, err
	}
	defer s.admitted(socket)
	for _, v := range victims {
		if err := s.ops.Close(ctx, v); err != nil {
			return nil, fmt.Errorf("daemon: reclaim %s: %w", v.Socket, err)
		}
		s.log.Info("reclaimed never-used idle guardian", "pid", v.PID, "socket", v.Socket)
	}
	g, err = s.ops.Spawn(ctx, p, socket)
	if err != nil {
		return nil, err
	}
	s.log.Info("spawned guardian", "pid", g.PID, "shell_pid", g.Status.ShellPID, "socket", socket)
	return &EnsureResult{Guardian: g, Spawned: true, Reclaimed: victims}, nil
}

// admit decides whether one more guardian, for key at socket, fits under
// the quota, and returns the guardians to reclaim first; the spawn counts
// until admitted is called. When the sockets present plus the spawns in
// flight are fewer than the limit no reclaim can be needed, and no
// guardian is probed: a stopped or starting guardian slows nobody then.
func (s *Server) admit(ctx context.Context, socket, key string) ([]Guardian, error) {
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	sk, _ := ParseSessionKey(key)
	limit := s.opts.Policy.Max
	if sk.Principal != "" {
		limit = min(limit, s.opts.Policy.Share())
	}
	socks, err := s.ops.Sockets()
	if err != nil {
		return nil, err
	}
	if len(socks)+len(s.spawning) < limit {
		s.spawning[socket] = key
		return nil, nil
	}
	// Near the quota: look at the guardians, except those being spawned
	// (they would not answer yet), which count as busy ones.
	socks = slices.DeleteFunc(socks, func(so string) bool { _, ok := s.spawning[so]; return ok })
	live, _ := s.ops.ProbeAll(ctx, socks)
	for so, k := range s.spawning {
		live = append(live, Guardian{Socket: so, Status: remote.Status{Key: k, Running: true}})
	}
	victims, err := s.opts.Policy.Reclaim(live, sk.Principal)
	if err != nil {
		s.log.Warn("quota reached", "live", len(live), "max", s.opts.Policy.Max)
		return nil, err
	}
	s.spawning[socket] = key
	return victims, nil
}

// admitted ends the count of an admitted spawn: its guardian now answers
// on its socket, or it failed.
func (s *Server) admitted(socket string) {
	s.quotaMu.Lock()
	delete(s.spawning, socket)
	s.quotaMu.Unlock()
}

// Sweep ends the guardians past their TTL tier and those whose workspace
// directory was removed, and returns them; it cleans up after the
// guardians that died (stale sockets), removes the lost-session records
// past remote.LostTTL, and watches the live guardians not watched yet.
// Each guardian is decided under its socket's lock and probed again there,
// so an ensure handing it out meanwhile keeps it.
func (s *Server) Sweep(ctx context.Context) ([]Guardian, error) {
	socks, err := s.ops.Sockets()
	if err != nil {
		return nil, err
	}
	live, bad := s.ops.ProbeAll(ctx, socks)
	var (
		ended []Guardian
		errs  []error
	)
	for _, g := range live {
		if s.guards.running() && !s.guards.watching(g.Socket, g.PID) {
			s.watchFound(ctx, g.Socket, g.PID)
		}
		if r, err := remote.ReadRecord(g.Socket); err == nil && r.PID == g.PID && workspaceGone(r, g) {
			removed, err := s.sweepRemovedWorkspace(ctx, g)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", g.Socket, err))
			}
			if removed {
				ended = append(ended, g)
				s.log.Info("ended the session of a removed workspace", "pid", g.PID, "socket", g.Socket)
				continue
			}
		}
		if !s.opts.Policy.Expired(g.Status, s.opts.Now()) {
			continue
		}
		closed, err := s.sweepOne(ctx, g)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", g.Socket, err))
		}
		if closed {
			ended = append(ended, g)
			s.log.Info("swept idle guardian", "pid", g.PID, "socket", g.Socket, "ever_ran_command", g.Status.EverRanCommand)
		}
	}
	for _, u := range bad {
		if !u.Stale {
			continue
		}
		if err := s.sweepStale(ctx, u.Socket); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", u.Socket, err))
		}
	}
	if s.opts.Dir != "" {
		expired, err := remote.ExpireLost(s.opts.Dir, s.opts.Now())
		for _, so := range expired {
			s.log.Info("removed an expired lost-session record", "socket", so)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return ended, errors.Join(errs...)
}

// sweepOne ends g if it is the same incarnation and still expired.
func (s *Server) sweepOne(ctx context.Context, g Guardian) (bool, error) {
	unlock, err := s.sockets.lock(ctx, g.Socket)
	if err != nil {
		return false, err
	}
	defer unlock()
	now, err := s.ops.Probe(ctx, g.Socket)
	if err != nil || now.Epoch != g.Epoch || !s.opts.Policy.Expired(now.Status, s.opts.Now()) {
		return false, nil
	}
	return true, s.ops.Close(ctx, now)
}

// sweepStale cleans up after the dead guardian of socket, if nothing
// listens there still.
func (s *Server) sweepStale(ctx context.Context, socket string) error {
	unlock, err := s.sockets.lock(ctx, socket)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := s.ops.Probe(ctx, socket); !errors.Is(err, wire.ErrNoServer) {
		return nil
	}
	s.log.Info("cleaning up after a dead guardian", "socket", socket)
	return s.ops.Cleanup(socket, remote.Loss{Reason: remote.LostGuardianDied})
}

// sweepLoop runs Sweep every SweepInterval until ctx ends.
func (s *Server) sweepLoop(ctx context.Context) {
	t := time.NewTicker(s.opts.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("sweep", "err", err)
			}
		}
	}
}

// Run serves ln, watches the guardians and sweeps until ctx ends or a
// shutdown is requested, and returns why it stopped. Guardians keep running
// either way.
//
// While it runs, this process is the child subreaper of the guardians it
// spawns (watch.go): it must start no child of its own other than through
// remote.Spawn (package pty's StartCommand), or that child may be reaped
// before its Wait and killed as an orphan when a guardian dies.
func (s *Server) Run(ctx context.Context, ln *net.UnixListener) (reason string, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if err := becomeSubreaper(sctx); err != nil {
		s.log.Warn("not the subreaper of the guardians' sessions", "err", err)
	}
	if err := s.guards.start(sctx); err != nil {
		s.log.Warn("guardians are not watched; the sweep cleans up after dead ones", "err", err)
	}
	wg.Go(func() { s.guards.loop(sctx) })
	wg.Go(func() { s.rediscover(sctx) })
	wg.Go(func() { s.sweepLoop(sctx) })
	reason = "context ended"
	wg.Go(func() {
		select {
		case r := <-s.shutdown:
			reason = r
			cancel()
		case <-sctx.Done():
		}
	})
	adm := s.newAdmission()
	err = wire.Serve(sctx, ln, s.hello, s, &wire.ServeOptions{Logger: s.log, Secret: s.opts.Secret, Admit: adm.admit})
	cancel()
	wg.Wait()
	return reason, err
}

// Prune ends the guardians of f that are idle: with idle nil those past
// their TTL tier under p, otherwise those idle for at least *idle. A busy
// guardian is never ended. It returns the ended guardians; a failure to end
// one does not stop the others.
func Prune(ctx context.Context, f Guardians, p Policy, now time.Time, idle *time.Duration) ([]Guardian, error) {
	live, _, err := f.Discover(ctx)
	if err != nil {
		return nil, err
	}
	var (
		ended []Guardian
		errs  []error
	)
	for _, g := range live {
		expired := p.Expired(g.Status, now)
		if idle != nil {
			expired = IdleFor(g.Status, now, *idle)
		}
		if !expired {
			continue
		}
		if err := f.Close(ctx, g); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", g.Socket, err))
			continue
		}
		ended = append(ended, g)
	}
	return ended, errors.Join(errs...)
}

// processFleet spawns real winx-guardian processes.
type processFleet struct {
	Fleet
	bin     string
	timeout time.Duration
	// spawned, when set, is told of every guardian started (to watch it).
	spawned func(*remote.Process)
}

func (pf *processFleet) Spawn(ctx context.Context, p *EnsureParams, socket string) (Guardian, error) {
	if pf.bin == "" {
		return Guardian{}, fmt.Errorf("%w: no winx-guardian binary configured", ErrSpawnFailed)
	}
	timeout := pf.timeout
	if timeout <= 0 {
		timeout = DefaultSpawnTimeout
	}
	// The spawn outlives the request that asked for it: an adapter that
	// gives up waiting must not leave a half-started guardian behind, and a
	// started one is found again by the next ensure.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	env := p.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(append([]string(nil), env...), NetworkEnv(p.Key)...)
	cfg := remote.Config{
		Key: p.Key, Socket: socket, Dir: p.Dir, Workspace: p.Workspace, Shell: p.Shell,
		NoCompress: p.NoCompress, NoRedact: p.NoRedact, Sandbox: p.Sandbox,
		Secret: pf.Hello.Secret,
	}
	proc, err := remote.Spawn(sctx, pf.bin, cfg, env)
	if err != nil {
		return Guardian{}, fmt.Errorf("%w: %v", ErrSpawnFailed, err)
	}
	if pf.spawned != nil {
		pf.spawned(proc)
	}
	return pf.Probe(sctx, socket)
}

// socketLocks is one mutex per guardian socket, held while an ensure or
// the sweep decides about that socket's guardian.
type socketLocks struct {
	mu   sync.Mutex // guards held
	held map[string]*socketLock
}

// socketLock is one socket's lock: a one-slot channel (so a waiter can
// give up with its context) and the number of its holders and waiters.
type socketLock struct {
	ch   chan struct{}
	refs int
}

// lock takes the lock of socket, waiting until ctx ends, and returns its
// release.
func (l *socketLocks) lock(ctx context.Context, socket string) (func(), error) {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[string]*socketLock{}
	}
	sl := l.held[socket]
	if sl == nil {
		sl = &socketLock{ch: make(chan struct{}, 1)}
		l.held[socket] = sl
	}
	sl.refs++
	l.mu.Unlock()
	drop := func() {
		l.mu.Lock()
		if sl.refs--; sl.refs == 0 {
			delete(l.held, socket)
		}
		l.mu.Unlock()
	}
	select {
	case sl.ch <- struct{}{}:
		return func() { <-sl.ch; drop() }, nil
	case <-ctx.Done():
		drop()
		return nil, ctx.Err()
	}
}
