package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"winx/guardian"
	"winx/jsonrpc"
)

// Limits of a server.
const (
	// DefaultSettleTimeout bounds how long a cancel or input waits for a
	// launch in flight when ServerOptions gives no timeout.
	DefaultSettleTimeout = 10 * time.Second
	// maxMetaBytes bounds the opaque meta an attach may store.
	maxMetaBytes = 64 << 10
	// maxLaunches bounds the launch ids remembered for cancel.
	maxLaunches = 256
	// maxWait bounds any wait a call asks for.
	maxWait = time.Hour
)

// ServerOptions configure a Server; nil means defaults.
type ServerOptions struct {
	Logger *slog.Logger
	// SettleTimeout: see DefaultSettleTimeout. A cancel whose launch does
	// not settle in time terminates the session before it is answered.
	SettleTimeout time.Duration
}

// Server answers the session methods for one guardian.Shell. It is a
// jsonrpc.Handler meant to be served by wire.Serve, which has checked the
// peer and the hello before any call reaches it.
type Server struct {
	sess   *guardian.Shell
	key    string
	logger *slog.Logger
	settle time.Duration
	gate   gate
	out    deliveries
	done   chan struct{}     // closed once the session ended
	table  map[string]method // set by NewServer, read-only after

	mu sync.Mutex // guards the fields below
	// Activity clocks, for winxd's TTLs.
	created, lastActivity, lastCommand time.Time
	everRan                            bool
	meta                               json.RawMessage // set by the first attach that carries one
	// launches remembers launch ids (bounded, oldest first in order) so a
	// cancel can name a run whose generation its caller never learned.
	launches map[string]*launch
	order    []string
	bg       []string // background ids started through this server
	ended    bool
	// readOnly: the shell's profile is read-only (LevelReadOnly), or
	// becoming so. It starts false: RunGuardian starts every session
	// unrestricted, and only respawn changes a profile.
	readOnly bool
}

// launch is one run's launch id and what became of it.
type launch struct {
	settled chan struct{} // closed when the launch published or failed
	// started and gen are written before settled is closed.
	started bool
	gen     uint64
	// cancelled marks a cancel that came before the run: the run is
	// refused when it arrives.
	cancelled bool
}

// NewServer serves sess under key. The server owns sess from now on: it
// closes it on session.close or when a launch cannot settle.
func NewServer(sess *guardian.Shell, key string, opts *ServerOptions) *Server {
	var o ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = DefaultSettleTimeout
	}
	now := time.Now()
	s := &Server{
		sess: sess, key: key, logger: o.Logger, settle: o.SettleTimeout, done: make(chan struct{}),
		created: now, lastActivity: now, launches: make(map[string]*launch),
	}
	s.table = s.methods()
	return s
}

// Done is closed when the session has ended; the guardian then exits.
func (s *Server) Done() <-chan struct{} { return s.done }

// Handle answers one call; it implements jsonrpc.Handler.
func (s *Server) Handle(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	res, err := s.handle(ctx, req)
	if err != nil {
		return nil, toWireError(err)
	}
	if res == nil {
		return nil, nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("remote: encode %s result: %w", req.Method, err)
	}
	return b, nil
}

// methodFunc answers one method: it decodes req's params, calls, and
// returns the result to encode (nil for none).
type methodFunc func(ctx context.Context, req *jsonrpc.Request) (any, error)

// method is one entry of the method table.
type method struct {
	fn methodFunc
	// passive methods are answered to notifications too and do not count
	// as activity: a sweep looking at status must not keep a session alive.
	passive bool
}

// handler adapts fn to a methodFunc: params decode into a fresh P (an
// invalid-params error when they do not), their acknowledgement applies
// before fn runs, and fn's result is the answer.
func handler[P any, PP interface {
	*P
	acker
}, R any](s *Server, fn func(context.Context, PP) (R, error)) methodFunc {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		p := PP(new(P))
		if err := s.params(req, p); err != nil {
			return nil, err
		}
		if exp := p.expires(); exp != 0 && time.Now().UnixMilli() > exp {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "remote: "+req.Method+": the caller stopped waiting before the request was read")
		}
		res, err := fn(ctx, p)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

// methods is the server's method table: one entry per method it serves.
func (s *Server) methods() map[string]method {
	return map[string]method{
		MethodAck:         {fn: s.ackNotify, passive: true},
		MethodStatus:      {fn: handler(s, s.statusCall), passive: true},
		MethodAttach:      {fn: handler(s, s.attach)},
		MethodRun:         {fn: handler(s, s.run)},
		MethodPoll:        {fn: handler(s, s.poll)},
		MethodSendText:    {fn: handler(s, s.sendText)},
		MethodSendKeys:    {fn: handler(s, s.sendKeys)},
		MethodSendBytes:   {fn: handler(s, s.sendBytes)},
		MethodCancel:      {fn: handler(s, s.cancel)},
		MethodScreen:      {fn: handler(s, s.screen)},
		MethodWaitForTurn: {fn: handler(s, s.waitForTurn)},
		MethodReset:       {fn: handler(s, s.reset)},
		MethodClose:       {fn: handler(s, s.closeSession)},
		MethodRespawn:     {fn: handler(s, s.respawn)},
		MethodBgStart:     {fn: handler(s, s.bgStart)},
		MethodBgPoll:      {fn: handler(s, s.bgPoll)},
		MethodBgSendText:  {fn: handler(s, s.bgSendText)},
		// Listing jobs is a look, like status: `winx jobs` must not keep
		// a session alive.
		MethodJobs: {fn: handler(s, s.jobs), passive: true},
		// So is reading the history (a ContextSave, a look by winx).
		MethodHistory: {fn: handler(s, s.history), passive: true},
		// A person's terminal: these count as activity, as the agent's
		// calls do (a person at work keeps the session alive).
		MethodPersonAttach: {fn: handler(s, s.personAttach)},
		MethodPersonRead:   {fn: handler(s, s.personRead)},
		MethodPersonWrite:  {fn: handler(s, s.personWrite)},
		MethodPersonResize: {fn: handler(s, s.personResize)},
		MethodPersonDetach: {fn: handler(s, s.personDetach)},
	}
}

func (s *Server) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m, ok := s.table[req.Method]
	if ok && m.passive {
		return m.fn(ctx, req)
	}
	if !req.IsCall() {
		return nil, nil
	}
	s.touch()
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "remote: unknown method "+req.Method)
	}
	return m.fn(ctx, req)
}

// ackNotify applies an acknowledgement; malformed ones are ignored, as a
// notification has nobody to answer.
func (s *Server) ackNotify(_ context.Context, req *jsonrpc.Request) (any, error) {
	p, err := decode[ackParams](req)
	if err == nil {
		s.out.ack(p.Seq)
	}
	return nil, nil
}

func (s *Server) statusCall(context.Context, *reqBase) (Status, error) { return s.status(), nil }

func (s *Server) sendText(ctx context.Context, p *sendTextParams) (*Outcome, error) {
	return s.input(ctx, p.Generation, p.WaitMS, func(ctx context.Context) (*guardian.Outcome, error) {
		return s.sess.SendText(ctx, p.Text, p.Submit, 0)
	})
}

func (s *Server) sendKeys(ctx context.Context, p *sendKeysParams) (*Outcome, error) {
	if len(p.Keys) == 1 && p.Keys[0] == "Ctrl-c" {
		// The session's interrupt logic, behind the generation check.
		return s.cancel(ctx, &cancelParams{Generation: p.Generation, WaitMS: p.WaitMS})
	}
	return s.input(ctx, p.Generation, p.WaitMS, func(ctx context.Context) (*guardian.Outcome, error) {
		return s.sess.SendKeys(ctx, p.Keys, 0)
	})
}

func (s *Server) sendBytes(ctx context.Context, p *sendBytesParams) (*Outcome, error) {
	return s.input(ctx, p.Generation, p.WaitMS, func(ctx context.Context) (*guardian.Outcome, error) {
		return s.sess.SendBytes(ctx, p.Bytes, 0)
	})
}

func (s *Server) screen(ctx context.Context, p *screenParams) (screenResult, error) {
	return screenToWire(s.sess.Screen(ctx, p.Lines, p.Diff)), nil
}

func (s *Server) waitForTurn(ctx context.Context, p *waitTurnParams) (waitTurnResult, error) {
	quiet, err := s.sess.WaitForTurn(ctx, millis(p.QuietMS), millis(p.TimeoutMS))
	if err != nil {
		return waitTurnResult{}, err
	}
	return waitTurnResult{Quiet: quiet}, nil
}

func (s *Server) closeSession(context.Context, *reqBase) (Status, error) {
	s.terminate("closed by a client")
	return s.status(), nil
}

func (s *Server) bgStart(ctx context.Context, p *bgStartParams) (bgStartResult, error) {
	id, err := s.sess.StartBackground(ctx, p.Command)
	if err != nil {
		return bgStartResult{}, err
	}
	s.mu.Lock()
	s.bg = append(s.bg, id)
	s.noteCommandLocked()
	s.mu.Unlock()
	return bgStartResult{ID: id}, nil
}

func (s *Server) bgPoll(ctx context.Context, p *bgPollParams) (*Outcome, error) {
	o, err := s.sess.PollBackground(ctx, p.ID, millis(p.WaitMS))
	if err != nil {
		return nil, err
	}
	return s.noted(toWire(o, s.out.take(bgStream(p.ID), o))), nil
}

func (s *Server) bgSendText(ctx context.Context, p *bgSendTextParams) (*Outcome, error) {
	o, err := s.sess.SendTextBackground(ctx, p.ID, p.Text, p.Submit, millis(p.WaitMS))
	if err != nil {
		return nil, err
	}
	return s.noted(toWire(o, s.out.take(bgStream(p.ID), o))), nil
}

func (s *Server) jobs(ctx context.Context, _ *reqBase) (JobsResult, error) {
	jobs, err := s.sess.Jobs(ctx)
	if err != nil {
		return JobsResult{}, err
	}
	return JobsResult{Jobs: jobs}, nil
}

func (s *Server) history(ctx context.Context, _ *reqBase) (HistoryResult, error) {
	runs, err := s.sess.History(ctx)
	if err != nil {
		return HistoryResult{}, err
	}
	return HistoryResult{Commands: runs}, nil
}

// acker is a params struct; its Ack is applied before the call runs.
type acker interface {
	acked() uint64
	expires() int64
}

func (b *reqBase) acked() uint64  { return b.Ack }
func (b *reqBase) expires() int64 { return b.ExpiresMS }

// params decodes req's params into p and applies its acknowledgement.
func (s *Server) params(req *jsonrpc.Request, p acker) error {
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, p); err != nil {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "remote: "+req.Method+": "+err.Error())
		}
	}
	s.out.ack(p.acked())
	return nil
}

func decode[T any](req *jsonrpc.Request) (T, error) {
	var p T
	err := json.Unmarshal(req.Params, &p)
	return p, err
}

// millis converts a wire wait, clamped to [0, maxWait].
func millis(ms int64) time.Duration {
	if ms <= 0 {
		return 0
	}
	return min(time.Duration(ms)*time.Millisecond, maxWait)
}

func (s *Server) touch() {
	s.mu.Lock()
	s.lastActivity = time.Now()
	s.mu.Unlock()
}

func (s *Server) noteCommandLocked() {
	s.lastCommand, s.everRan = time.Now(), true
}

// run launches a command under the gate, publishes its generation, then
// waits for it like a poll.
func (s *Server) run(ctx context.Context, p *runParams) (*Outcome, error) {
	l, err := s.registerLaunch(p.LaunchID)
	if err != nil {
		return nil, err
	}
	if !s.gate.tryLaunch() {
		s.settleLaunch(l, 0)
		return nil, guardian.ErrCommandRunning
	}
	// The launch must settle whatever the caller does: a caller that left
	// still started a command (it keeps running, pollable by generation).
	o, err := s.sess.Run(context.WithoutCancel(ctx), p.Command, 0)
	var gen uint64
	if err == nil {
		gen = o.Generation
	}
	s.gate.endLaunch(gen)
	s.settleLaunch(l, gen)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.noteCommandLocked()
	s.mu.Unlock()
	s.out.forgetForeground(fgStream(gen))
	return s.finish(ctx, o, millis(p.WaitMS))
}

// finish records o's output as pending, waits up to wait for a running
// command and answers with everything pending for its generation. If the
// wait fails (the caller left), what was taken stays pending.
func (s *Server) finish(ctx context.Context, o *guardian.Outcome, wait time.Duration) (*Outcome, error) {
	stream := fgStream(o.Generation)
	seq := s.out.take(stream, o)
	if !o.Running || wait <= 0 {
		return s.noted(toWire(o, seq)), nil
	}
	o2, err := s.sess.Poll(ctx, o.Generation, wait)
	if err != nil {
		return nil, err
	}
	return s.noted(toWire(o2, s.out.take(stream, o2))), nil
}

func (s *Server) poll(ctx context.Context, p *pollParams) (*Outcome, error) {
	// Generation 0 is the session's newest command, even one whose launch
	// has not published its generation yet: a poll only reads.
	o, err := s.sess.Poll(ctx, p.Generation, millis(p.WaitMS))
	if err != nil {
		return nil, s.staleOr(p.Generation, err)
	}
	return s.noted(toWire(o, s.out.take(fgStream(o.Generation), o))), nil
}

func staleGeneration(gen, cur uint64) error {
	return fmt.Errorf("%w: generation %d, newest is %d", ErrStaleGeneration, gen, cur)
}

// staleOr reports a not-running error for a named generation that is not
// the newest as a stale generation.
func (s *Server) staleOr(gen uint64, err error) error {
	if cur := s.gate.current(); errors.Is(err, guardian.ErrNotRunning) && gen != 0 && gen != cur {
		return staleGeneration(gen, cur)
	}
	return err
}

// input sends to the foreground command of generation gen under the gate,
// then waits for it outside the gate.
func (s *Server) input(ctx context.Context, gen uint64, waitMS int64, send func(context.Context) (*guardian.Outcome, error)) (*Outcome, error) {
	cur, err := s.gate.acquire(ctx, s.settle)
	if err != nil {
		return nil, err
	}
	if gen != 0 && gen != cur {
		s.gate.release()
		return nil, staleGeneration(gen, cur)
	}
	o, err := send(context.WithoutCancel(ctx))
	s.gate.release()
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, o, millis(waitMS))
}

// cancel interrupts the foreground command of the named generation (or of
// the named launch, once it settled). A generation that is not the newest
// is never touched.
func (s *Server) cancel(ctx context.Context, p *cancelParams) (*Outcome, error) {
	if p.LaunchID != "" {
		gen, err := s.awaitLaunch(ctx, p.LaunchID)
		if err != nil {
			return nil, err
		}
		p.Generation = gen
	}
	cur, err := s.gate.acquire(ctx, s.settle)
	if errors.Is(err, ErrLaunchUnsettled) {
		return nil, s.endUnsettled()
	}
	if err != nil {
		return nil, err
	}
	defer s.gate.release()
	gen := p.Generation
	if gen == 0 {
		gen = cur
	}
	if gen == 0 {
		return nil, guardian.ErrNotRunning
	}
	if gen != cur {
		return nil, staleGeneration(gen, cur)
	}
	// The cancel completes even if its caller leaves: it was asked for.
	ictx := context.WithoutCancel(ctx)
	o, err := s.sess.Poll(ictx, gen, 0)
	if err != nil {
		return nil, err
	}
	stream := fgStream(gen)
	seq := s.out.take(stream, o)
	if !o.Running {
		return s.noted(toWire(o, seq)), nil
	}
	o, err = s.sess.Interrupt(ictx, millis(p.WaitMS))
	if err != nil {
		return nil, err
	}
	return s.noted(toWire(o, s.out.take(stream, o))), nil
}

func (s *Server) reset(ctx context.Context, _ *reqBase) (*Status, error) {
	if _, err := s.gate.acquire(ctx, s.settle); err != nil {
		return nil, err
	}
	err := s.sess.Reset(context.WithoutCancel(ctx))
	s.gate.release()
	if err != nil {
		return nil, err
	}
	st := s.status()
	return &st, nil
}

// respawn starts a fresh shell with the asked profile (a mode change); a
// running command refuses it (guardian.ErrCommandRunning).
func (s *Server) respawn(ctx context.Context, p *respawnParams) (*respawnResult, error) {
	if _, err := s.gate.acquire(ctx, s.settle); err != nil {
		return nil, err
	}
	// Into read-only, the admission treats the session as read-only from
	// before the new shell starts; out of it, only once the read-only
	// shell is gone. A failed respawn keeps the old profile.
	ro := p.Profile.Level == guardian.LevelReadOnly
	s.mu.Lock()
	was := s.readOnly
	s.readOnly = was || ro
	s.mu.Unlock()
	conf, err := s.sess.Respawn(context.WithoutCancel(ctx), p.Profile)
	s.mu.Lock()
	if err != nil {
		s.readOnly = was
	} else {
		s.readOnly = ro
	}
	s.mu.Unlock()
	s.gate.release()
	if err != nil {
		return nil, err
	}
	return &respawnResult{Status: s.status(), Confinement: conf}, nil
}

// readOnlyShell reports whether the session's shell profile is read-only
// (see admission).
func (s *Server) readOnlyShell() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readOnly
}

// registerLaunch records a run's launch id; nil when it has none.
func (s *Server) registerLaunch(id string) (*launch, error) {
	if id == "" {
		return nil, nil
	}
	if len(id) > 128 {
		return nil, fmt.Errorf("%w: launch id longer than 128 bytes", guardian.ErrInvalidInput)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.launches[id]; ok {
		if l.cancelled {
			return nil, ErrLaunchCancelled
		}
		return nil, fmt.Errorf("%w: launch id %q was used before", guardian.ErrInvalidInput, id)
	}
	return s.addLaunchLocked(id), nil
}

func (s *Server) addLaunchLocked(id string) *launch {
	for len(s.order) >= maxLaunches {
		old := s.order[0]
		s.order = s.order[1:]
		delete(s.launches, old)
	}
	l := &launch{settled: make(chan struct{})}
	s.launches[id] = l
	s.order = append(s.order, id)
	return l
}

// settleLaunch records the end of l's launch; gen 0 means nothing started.
func (s *Server) settleLaunch(l *launch, gen uint64) {
	if l == nil {
		return
	}
	s.mu.Lock()
	l.started, l.gen = gen != 0, gen
	s.mu.Unlock()
	close(l.settled)
}

// awaitLaunch waits until the launch id settled and returns its generation.
// An id not seen yet is marked cancelled, so its run is refused when it
// arrives. A launch that does not settle in time ends the session.
func (s *Server) awaitLaunch(ctx context.Context, id string) (uint64, error) {
	s.mu.Lock()
	l, ok := s.launches[id]
	if !ok {
		l = s.addLaunchLocked(id)
		l.cancelled = true
		close(l.settled)
		s.mu.Unlock()
		return 0, ErrNoLaunch
	}
	s.mu.Unlock()
	timer := time.NewTimer(s.settle)
	defer timer.Stop()
	select {
	case <-l.settled:
	case <-timer.C:
		return 0, s.endUnsettled()
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	s.mu.Lock()
	started, gen := l.started, l.gen
	s.mu.Unlock()
	if !started {
		return 0, ErrNoLaunch
	}
	return gen, nil
}

// endUnsettled ends the session because a launch did not settle in time
// for a cancel.
func (s *Server) endUnsettled() error {
	s.terminate("a launch did not settle before a cancel")
	return fmt.Errorf("%w: a launch did not settle within %v", ErrTerminated, s.settle)
}

// terminate ends the session: every process of the shell and of its
// background commands is killed, and Done is closed.
func (s *Server) terminate(reason string) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	s.mu.Unlock()
	s.logger.Info("session ending", "reason", reason)
	if err := s.sess.Close(); err != nil {
		s.logger.Warn("closing the shell", "err", err)
	}
	close(s.done)
}

// status reports the clocks and what runs. Output it takes from the session
// to learn whether a command runs stays pending for the next reader.
func (s *Server) status() Status {
	st, _ := s.snapshot()
	return st
}

func (s *Server) snapshot() (Status, *Outcome) {
	s.mu.Lock()
	st := Status{
		Key: s.key, Created: s.created, LastActivity: s.lastActivity, LastCommand: s.lastCommand,
		EverRanCommand: s.everRan, Background: append([]string(nil), s.bg...), Closed: s.ended,
	}
	s.mu.Unlock()
	st.ShellPID, st.Cwd = s.sess.PID(context.Background()), s.sess.Cwd(context.Background())
	startup, rc := s.sess.ShellStartup()
	st.ShellStartupMS, st.ShellRC = startup.Milliseconds(), rc
	st.Generation = s.gate.current()
	var fg *Outcome
	if st.Generation != 0 {
		if o, err := s.sess.Poll(context.Background(), st.Generation, 0); err == nil {
			s.out.take(fgStream(o.Generation), o)
			st.Running, st.Command = o.Running, o.Command
			fg = toWire(o, 0) // a peek: its text stays pending
		}
	}
	for _, id := range st.Background {
		if o, err := s.sess.PollBackground(context.Background(), id, 0); err == nil {
			s.out.take(bgStream(id), o)
			if o.Running {
				st.BackgroundRunning++
			}
		}
	}
	return st, fg
}

func (s *Server) attach(_ context.Context, p *attachParams) (*Snapshot, error) {
	if len(p.Meta) > maxMetaBytes {
		return nil, fmt.Errorf("%w: meta of %d bytes, more than %d", guardian.ErrInvalidInput, len(p.Meta), maxMetaBytes)
	}
	s.mu.Lock()
	if len(p.Meta) > 0 && (s.meta == nil || p.ReplaceMeta) {
		s.meta = append(json.RawMessage(nil), p.Meta...)
	}
	meta := s.meta
	s.mu.Unlock()
	st, fg := s.snapshot()
	return &Snapshot{Status: st, Foreground: fg, Meta: meta}, nil
}

// screenResult is guardian.ScreenSnapshot on the wire.
type screenResult struct {
	Rows      []string `json:"rows"`
	AltScreen bool     `json:"alt_screen,omitempty"`
	Title     string   `json:"title,omitempty"`
	Changed   []int    `json:"changed,omitempty"`
}

func screenToWire(s guardian.ScreenSnapshot) screenResult {
	return screenResult{Rows: s.Rows, AltScreen: s.AltScreen, Title: s.Title, Changed: s.Changed}
}

func (r screenResult) guardian() guardian.ScreenSnapshot {
	return guardian.ScreenSnapshot{Rows: r.Rows, AltScreen: r.AltScreen, Title: r.Title, Changed: r.Changed}
}

// noted gives an answer to the agent the note of a person who typed in the
// session since the agent's last answer (taken once).
func (s *Server) noted(o *Outcome) *Outcome {
	o.PersonNote = s.sess.TakePersonNote()
	return o
}

// maxPersonWait bounds a person's read: the read renews the attachment's
// lease, so it must come back well within it.
const maxPersonWait = 5 * time.Second

func (s *Server) personAttach(ctx context.Context, p *personAttachParams) (personAttachResult, error) {
	a, err := s.sess.AttachPerson(ctx, p.Rows, p.Cols)
	if err != nil {
		return personAttachResult{}, err
	}
	s.logger.Info("a person attached to the session's terminal")
	return personAttachResult{ID: a.ID, Offset: a.Offset}, nil
}

func (s *Server) personRead(ctx context.Context, p *personReadParams) (personReadResult, error) {
	c, err := s.sess.PersonRead(ctx, p.ID, p.Offset, min(millis(p.WaitMS), maxPersonWait))
	if err != nil {
		return personReadResult{}, err
	}
	return personReadResult{Data: c.Data, Offset: c.Offset, Dropped: c.Dropped, ShellExited: c.ShellExited}, nil
}

func (s *Server) personWrite(ctx context.Context, p *personWriteParams) (struct{}, error) {
	return struct{}{}, s.sess.PersonWrite(ctx, p.ID, p.Data)
}

func (s *Server) personResize(ctx context.Context, p *personResizeParams) (struct{}, error) {
	return struct{}{}, s.sess.PersonResize(ctx, p.ID, p.Rows, p.Cols)
}

func (s *Server) personDetach(_ context.Context, p *personIDParams) (struct{}, error) {
	s.sess.DetachPerson(p.ID)
	s.logger.Info("a person detached from the session's terminal")
	return struct{}{}, nil
}
