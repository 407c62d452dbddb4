package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"winx/guardian"
	"winx/guardian/wire"
)

// DefaultCallTimeout bounds the calls that cannot report a failure (Cwd,
// Screen, Healthy) within their caller's context, and Close, when
// ClientOptions gives none. It is also the grace every call gets on top of
// the wait it asks for (see callBudget).
const DefaultCallTimeout = 5 * time.Second

// resetBudget bounds a reset, which starts a new shell; a loaded machine
// may take seconds for that.
const resetBudget = 30 * time.Second

// cwdFresh bounds how long Cwd reuses an answer when no action intervenes:
// a tool call that reads the cwd twice before acting asks the guardian once.
const cwdFresh = 200 * time.Millisecond

// ClientOptions configure a RemoteShell; nil means defaults.
type ClientOptions struct {
	// Build is this process's identity, sent in every hello.
	Build wire.Build
	// Role is this process's role in the hello; "" means wire.RoleAdapter.
	Role string
	// Timeout: see DefaultCallTimeout.
	Timeout time.Duration
	// Secret is the wire secret, said in every hello (guardians refuse a
	// hello without it).
	Secret string
	// Meta is stored by the guardian on the first attach that carries one
	// (the adapter keeps the session mode there) and returned to every
	// later attach in Snapshot.Meta.
	Meta json.RawMessage
}

// RemoteShell is a session served by a guardian process, seen from the
// adapter. It implements guardian.Terminal exactly as the embedded
// *guardian.Shell does, with the same sentinel errors; a Terminal method
// that finds the guardian gone fails with a *guardian.ShellLostError
// wrapping the *GuardianGoneError.
//
// Actions share one persistent connection (dial and hello once, calls
// multiplexed by request id, so a status poll runs while a run waits). A
// call cancelled by its context is abandoned: the guardian finishes it and
// its answer is dropped unacknowledged, so its output is delivered again
// to the next reader; a foreground command keeps running and stays
// pollable by generation. A connection that ended (the guardian closed it,
// or a call on it found the guardian unresponsive) is replaced by a new
// one on the next call, after checking that the same incarnation answers.
//
// Input and cancel name the newest generation this client learned (from
// attach, runs and polls), never "whatever runs now": an action meant for
// generation N fails with ErrStaleGeneration instead of reaching N+1
// started by another client. Poll(ctx, 0, ...) only reads and follows the
// guardian's newest command.
//
// Every call has a deadline (callBudget): a guardian that does not answer
// within its wait plus a grace gives an *UnresponsiveError.
//
// Once the guardian is found gone (nothing listens, or another incarnation
// answers at the socket) every call fails with a *GuardianGoneError and
// Healthy reports false; a new guardian needs a new RemoteShell.
type RemoteShell struct {
	socket  string
	local   wire.Hello
	timeout time.Duration

	mu sync.Mutex // guards the fields below
	// peer is the guardian's hello at attach; its Epoch identifies the
	// incarnation every later connection must reach.
	peer wire.Hello
	// gen is the newest foreground generation learned; ack the newest
	// delivery received.
	gen, ack uint64
	snap     Snapshot // the last attach or status
	// cwd is the last cwd seen; cwdAt, when Cwd last asked for it (zero
	// once an action may have changed it).
	cwd   string
	cwdAt time.Time
	gone  error // sticky *GuardianGoneError
	// conn is the shared connection; nil before the first call and after
	// it was dropped.
	conn *sharedConn
}

// sharedConn is a connection and the calls using it; it is closed once it
// is dropped and its last call ended. Its fields are guarded by
// RemoteShell.mu.
type sharedConn struct {
	c       *wire.Client
	calls   int  // calls in flight on c
	dropped bool // no new call may use c
}

var (
	_ guardian.Terminal  = (*RemoteShell)(nil)
	_ guardian.Historian = (*RemoteShell)(nil)
)

// Attach connects to the guardian on socket and returns a client holding
// the session's authoritative snapshot (Snapshot): cwd, the running command
// and its generation, output no client acknowledged, activity clocks. A
// socket nobody answers on gives a *GuardianGoneError.
func Attach(ctx context.Context, socket string, opts *ClientOptions) (*RemoteShell, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	if o.Role == "" {
		o.Role = wire.RoleAdapter
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultCallTimeout
	}
	r := &RemoteShell{socket: socket, local: wire.NewHello(o.Role, o.Build, nil).WithSecret(o.Secret), timeout: o.Timeout}
	if _, err := r.attach(ctx, o.Meta); err != nil {
		return nil, err
	}
	return r, nil
}

// Reattach fetches a fresh snapshot, as an adapter does after a restart.
func (r *RemoteShell) Reattach(ctx context.Context) (Snapshot, error) {
	return r.attach(ctx, nil)
}

// Meta returns the opaque value the guardian kept for its adapters as of
// the attach (the session mode an earlier adapter recorded).
func (r *RemoteShell) Meta(context.Context) json.RawMessage {
	return r.Snapshot().Meta
}

// SetMeta replaces the opaque value the guardian keeps for its adapters
// (the session mode, which a later adapter restores).
func (r *RemoteShell) SetMeta(ctx context.Context, meta json.RawMessage) error {
	// An older guardian would ignore the replace flag; say so instead.
	if !r.Peer().Has(CapReplaceMeta) {
		return errors.Join(ErrUnsupported, errors.New("remote: "+CapReplaceMeta))
	}
	var snap Snapshot
	return lost(r.call(ctx, MethodAttach, &attachParams{Meta: meta, ReplaceMeta: true}, &snap))
}

// lost types a guardian found gone for the Terminal methods.
func lost(err error) error {
	if errors.Is(err, ErrGuardianGone) {
		return &guardian.ShellLostError{Err: err}
	}
	return err
}

// acted forgets the cwd Cwd reuses: an action may have changed it.
func (r *RemoteShell) acted() {
	r.mu.Lock()
	r.cwdAt = time.Time{}
	r.mu.Unlock()
}

// act runs one Terminal action: it forgets the reusable cwd once the
// action is over and types a guardian found gone.
func act[T any](r *RemoteShell, fn func() (T, error)) (T, error) {
	defer r.acted()
	v, err := fn()
	return v, lost(err)
}

// actForeground is act for an action on the foreground command. An
// outcome of a finished command carries the cwd the shell reported at its
// prompt, taken under the same lock that finished the command: it is as
// fresh as a status answer, so Cwd reuses it for cwdFresh instead of
// asking the guardian again (the next tool call's cwd check costs no round
// trip). A command still running may change the cwd: then it is
// forgotten, as act does.
func (r *RemoteShell) actForeground(fn func() (*guardian.Outcome, error)) (*guardian.Outcome, error) {
	o, err := fn()
	r.mu.Lock()
	if err == nil && o != nil && !o.Running && o.Cwd != "" {
		r.cwd, r.cwdAt = o.Cwd, time.Now()
	} else {
		r.cwdAt = time.Time{}
	}
	r.mu.Unlock()
	return o, lost(err)
}

func (r *RemoteShell) attach(ctx context.Context, meta json.RawMessage) (Snapshot, error) {
	var snap Snapshot
	if err := r.call(ctx, MethodAttach, &attachParams{Meta: meta}, &snap); err != nil {
		return Snapshot{}, err
	}
	r.mu.Lock()
	r.snap, r.cwd = snap, snap.Cwd
	// The snapshot's cwd is a status answer: the session start that
	// attached reads it without another round trip, unless a command runs
	// (it may change the cwd).
	r.cwdAt = time.Time{}
	if !snap.Running {
		r.cwdAt = time.Now()
	}
	if snap.Generation > r.gen {
		r.gen = snap.Generation
	}
	r.mu.Unlock()
	return snap, nil
}

// Snapshot returns the snapshot of the last attach or status.
func (r *RemoteShell) Snapshot() Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snap
}

// Peer returns the guardian's hello: its build, epoch, pid and capabilities.
// Capability checks use this hello, never the adapter's own version.
func (r *RemoteShell) Peer() wire.Hello {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peer
}

// Socket is the guardian's socket path.
func (r *RemoteShell) Socket() string { return r.socket }

// Generation is the newest foreground generation this client learned.
func (r *RemoteShell) Generation() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gen
}

// ackable is a result that may carry a delivery number.
type ackable interface{ delivery() uint64 }

func (o *Outcome) delivery() uint64 { return o.Seq }

// setAck is implemented by every params struct through reqBase.
type setAcker interface {
	setAck(uint64)
	setExpires(time.Time)
}

func (b *reqBase) setAck(seq uint64)       { b.Ack = seq }
func (b *reqBase) setExpires(at time.Time) { b.ExpiresMS = at.UnixMilli() }

// waiter is a params struct that asks the guardian to wait.
type waiter interface{ waitFor() time.Duration }

func (p *runParams) waitFor() time.Duration       { return millis(p.WaitMS) }
func (p *pollParams) waitFor() time.Duration      { return millis(p.WaitMS) }
func (p *sendTextParams) waitFor() time.Duration  { return millis(p.WaitMS) }
func (p *sendKeysParams) waitFor() time.Duration  { return millis(p.WaitMS) }
func (p *sendBytesParams) waitFor() time.Duration { return millis(p.WaitMS) }
func (p *cancelParams) waitFor() time.Duration    { return millis(p.WaitMS) }
func (p *waitTurnParams) waitFor() time.Duration  { return millis(p.TimeoutMS) }
func (p *bgPollParams) waitFor() time.Duration    { return millis(p.WaitMS) }
func (p *bgSendTextParams) waitFor() time.Duration {
	return millis(p.WaitMS)
}

// callBudget is the deadline of one call: the wait it asks for plus the
// client's timeout as grace, plus the settle timeout for the methods that
// may wait for a launch in flight (a cancel or an input), and a shell's
// start for a reset. A guardian that does not answer within it (stopped,
// hung) gets an *UnresponsiveError, so no caller blocks on it for longer.
func (r *RemoteShell) callBudget(method string, params setAcker) time.Duration {
	d := r.timeout
	if w, ok := params.(waiter); ok {
		d += min(w.waitFor(), maxWait)
	}
	switch method {
	case MethodCancel, MethodSendText, MethodSendKeys, MethodSendBytes:
		d += DefaultSettleTimeout
	case MethodReset:
		d += resetBudget
	}
	return d
}

// call runs one action on the shared connection, within callBudget.
func (r *RemoteShell) call(ctx context.Context, method string, params setAcker, result any) error {
	r.mu.Lock()
	gone, ack := r.gone, r.ack
	r.mu.Unlock()
	if gone != nil {
		return gone
	}
	params.setAck(ack)
	budget := r.callBudget(method, params)
	outer := ctx
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	if dl, ok := ctx.Deadline(); ok {
		params.setExpires(dl)
	}
	sc, err := r.acquire(ctx)
	if err != nil {
		if errors.Is(err, ErrGuardianGone) {
			return err
		}
		return r.fail(outer, ctx, method, budget, err)
	}
	if !sc.c.Peer().Has(method) {
		r.release(sc, false)
		return errors.Join(ErrUnsupported, errors.New("remote: "+method))
	}
	err = sc.c.Request(ctx, method, params, result)
	// A guardian that did not answer within the budget, or a connection
	// that ended, is not used again: the next call dials afresh.
	r.release(sc, err != nil && (errors.Is(err, wire.ErrConnectionLost) || (ctx.Err() != nil && outer.Err() == nil)))
	if err != nil {
		return r.fail(outer, ctx, method, budget, err)
	}
	if a, ok := result.(ackable); ok {
		if seq := a.delivery(); seq != 0 {
			// Best effort: the next request carries the ack again.
			_ = sc.c.Notify(MethodAck, ackParams{Seq: seq})
			r.mu.Lock()
			r.ack = max(r.ack, seq)
			r.mu.Unlock()
		}
	}
	return nil
}

// acquire returns the shared connection with one more call counted on it,
// dialing (hello included) when there is none or it ended. A new
// connection must reach the incarnation of the first one; another one
// answering marks the guardian gone.
func (r *RemoteShell) acquire(ctx context.Context) (*sharedConn, error) {
	r.mu.Lock()
	if sc := r.conn; sc != nil {
		select {
		case <-sc.c.Done():
			r.dropLocked(sc)
		default:
			sc.calls++
			r.mu.Unlock()
			return sc, nil
		}
	}
	r.mu.Unlock()
	c, err := wire.Dial(ctx, r.socket, r.local)
	if err != nil {
		return nil, err
	}
	peer := c.Peer()
	r.mu.Lock()
	switch {
	case r.peer.Epoch == "":
		r.peer = peer
	case peer.Epoch != r.peer.Epoch:
		r.mu.Unlock()
		c.Close()
		return nil, r.markGone(&GuardianGoneError{Socket: r.socket, Replaced: true})
	}
	sc := &sharedConn{c: c, calls: 1}
	if r.conn == nil && r.gone == nil {
		r.conn = sc
	} else {
		// Another call dialed at the same time, or the session ended:
		// this connection serves this call only.
		sc.dropped = true
	}
	r.mu.Unlock()
	return sc, nil
}

// release ends one call on sc; drop stops new calls from using it. The
// connection is closed once it is dropped and idle.
func (r *RemoteShell) release(sc *sharedConn, drop bool) {
	r.mu.Lock()
	sc.calls--
	if drop {
		r.dropLocked(sc)
	}
	closeIt := sc.dropped && sc.calls == 0
	r.mu.Unlock()
	if closeIt {
		sc.c.Close()
	}
}

// dropLocked stops new calls from using sc; r.mu is held. The caller (or
// the last call on sc) closes it.
func (r *RemoteShell) dropLocked(sc *sharedConn) {
	sc.dropped = true
	if r.conn == sc {
		r.conn = nil
	}
}

// closeConn drops the shared connection and closes it once idle.
func (r *RemoteShell) closeConn() {
	r.mu.Lock()
	sc := r.conn
	if sc == nil {
		r.mu.Unlock()
		return
	}
	r.dropLocked(sc)
	idle := sc.calls == 0
	r.mu.Unlock()
	if idle {
		sc.c.Close()
	}
}

// fail types a call's error: the caller's context ending is the caller's
// error, the call's own deadline passing is an *UnresponsiveError, and a
// socket nobody answers on marks the guardian gone for good.
func (r *RemoteShell) fail(outer, ctx context.Context, method string, budget time.Duration, err error) error {
	if outer.Err() != nil {
		return outer.Err()
	}
	if ctx.Err() != nil {
		return &UnresponsiveError{Socket: r.socket, Method: method, After: budget}
	}
	err = fromWireError(r.socket, err)
	if errors.Is(err, wire.ErrNoServer) {
		return r.markGone(err)
	}
	return err
}

func (r *RemoteShell) markGone(err error) error {
	r.mu.Lock()
	if r.gone == nil {
		r.gone = err
	}
	gone := r.gone
	sc := r.conn
	if sc != nil {
		r.dropLocked(sc)
	}
	idle := sc != nil && sc.calls == 0
	r.mu.Unlock()
	if idle {
		sc.c.Close()
	}
	return gone
}

// outcome converts a wire outcome and learns its generation.
func (r *RemoteShell) outcome(o *Outcome) *guardian.Outcome {
	r.mu.Lock()
	if o.Generation > r.gen {
		r.gen = o.Generation
	}
	if o.Cwd != "" {
		r.cwd = o.Cwd
	}
	r.mu.Unlock()
	return o.Guardian()
}

func (r *RemoteShell) outcomeCall(ctx context.Context, method string, params setAcker) (*guardian.Outcome, error) {
	var o Outcome
	if err := r.call(ctx, method, params, &o); err != nil {
		return nil, err
	}
	return r.outcome(&o), nil
}

func waitMS(d time.Duration) int64 { return max(d.Milliseconds(), 0) }

// NewLaunchID returns a fresh launch id for Launch.
func NewLaunchID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Run starts a foreground command and waits up to wait for it. A second
// command while one runs fails with guardian.ErrCommandRunning at once.
func (r *RemoteShell) Run(ctx context.Context, command string, wait time.Duration) (*guardian.Outcome, error) {
	return r.actForeground(func() (*guardian.Outcome, error) { return r.Launch(ctx, command, wait, NewLaunchID()) })
}

// Launch is Run with a caller-chosen launch id, so CancelLaunch can stop
// the command even if the caller never learned its generation (its context
// ended during the launch). A cancel that arrives before the launch makes
// the launch fail with ErrLaunchCancelled.
func (r *RemoteShell) Launch(ctx context.Context, command string, wait time.Duration, launchID string) (*guardian.Outcome, error) {
	return r.outcomeCall(ctx, MethodRun, &runParams{Command: command, LaunchID: launchID, WaitMS: waitMS(wait)})
}

// Poll waits up to wait for foreground generation gen (0: the newest the
// guardian runs, whoever started it) and returns the output not
// acknowledged yet. A poll only reads, so unlike input and cancel it may
// reach a command this client has not learned of yet: a status_check made
// while this client's own run is still launching, or by a second adapter,
// sees the running command.
func (r *RemoteShell) Poll(ctx context.Context, gen uint64, wait time.Duration) (*guardian.Outcome, error) {
	return r.actForeground(func() (*guardian.Outcome, error) {
		return r.outcomeCall(ctx, MethodPoll, &pollParams{Generation: gen, WaitMS: waitMS(wait)})
	})
}

// SendText types text into the foreground command this client knows.
func (r *RemoteShell) SendText(ctx context.Context, text string, submit bool, wait time.Duration) (*guardian.Outcome, error) {
	return r.actForeground(func() (*guardian.Outcome, error) {
		return r.outcomeCall(ctx, MethodSendText, &sendTextParams{Generation: r.Generation(), Text: text, Submit: submit, WaitMS: waitMS(wait)})
	})
}

// SendKeys sends special keys; a lone Ctrl-c is a cancel of the known
// generation.
func (r *RemoteShell) SendKeys(ctx context.Context, keys []guardian.Key, wait time.Duration) (*guardian.Outcome, error) {
	return r.actForeground(func() (*guardian.Outcome, error) {
		return r.outcomeCall(ctx, MethodSendKeys, &sendKeysParams{Generation: r.Generation(), Keys: keys, WaitMS: waitMS(wait)})
	})
}

// SendBytes sends raw bytes to the foreground command this client knows.
func (r *RemoteShell) SendBytes(ctx context.Context, b []byte, wait time.Duration) (*guardian.Outcome, error) {
	return r.actForeground(func() (*guardian.Outcome, error) {
		return r.outcomeCall(ctx, MethodSendBytes, &sendBytesParams{Generation: r.Generation(), Bytes: b, WaitMS: waitMS(wait)})
	})
}

// Cancel interrupts foreground generation gen if it is still the newest and
// running; a stale gen fails with ErrStaleGeneration and touches nothing.
func (r *RemoteShell) Cancel(ctx context.Context, gen uint64, wait time.Duration) (*guardian.Outcome, error) {
	return r.actForeground(func() (*guardian.Outcome, error) {
		if gen == 0 {
			return nil, errors.Join(guardian.ErrInvalidInput, errors.New("remote: cancel needs a generation"))
		}
		return r.outcomeCall(ctx, MethodCancel, &cancelParams{Generation: gen, WaitMS: waitMS(wait)})
	})
}

// CancelLaunch interrupts the command started by the run with launchID.
// It waits until that launch published its generation or proved that no
// command started (ErrNoLaunch); if it cannot settle in bounded time the
// guardian ends the session before answering (ErrTerminated).
func (r *RemoteShell) CancelLaunch(ctx context.Context, launchID string, wait time.Duration) (*guardian.Outcome, error) {
	if launchID == "" {
		return nil, errors.Join(guardian.ErrInvalidInput, errors.New("remote: cancel needs a launch id"))
	}
	return r.outcomeCall(ctx, MethodCancel, &cancelParams{LaunchID: launchID, WaitMS: waitMS(wait)})
}

// StartBackground runs command in its own PTY and returns its id.
func (r *RemoteShell) StartBackground(ctx context.Context, command string) (string, error) {
	return act(r, func() (string, error) {
		var res bgStartResult
		if err := r.call(ctx, MethodBgStart, &bgStartParams{Command: command}, &res); err != nil {
			return "", err
		}
		return res.ID, nil
	})
}

// PollBackground waits up to wait for background command id.
func (r *RemoteShell) PollBackground(ctx context.Context, id string, wait time.Duration) (*guardian.Outcome, error) {
	return act(r, func() (*guardian.Outcome, error) {
		return r.bgCall(ctx, MethodBgPoll, &bgPollParams{ID: id, WaitMS: waitMS(wait)})
	})
}

// SendTextBackground types into background command id.
func (r *RemoteShell) SendTextBackground(ctx context.Context, id, text string, submit bool, wait time.Duration) (*guardian.Outcome, error) {
	return act(r, func() (*guardian.Outcome, error) {
		return r.bgCall(ctx, MethodBgSendText, &bgSendTextParams{ID: id, Text: text, Submit: submit, WaitMS: waitMS(wait)})
	})
}

// History returns the session's last foreground commands, the most recent
// first, as the guardian remembers them (whoever ran them). A guardian
// that predates the method answers an error wrapping ErrUnsupported.
func (r *RemoteShell) History(ctx context.Context) ([]guardian.CommandRun, error) {
	if !r.Peer().Has(MethodHistory) {
		return nil, errors.Join(ErrUnsupported, errors.New("remote: "+MethodHistory))
	}
	var res HistoryResult
	if err := r.call(ctx, MethodHistory, &reqBase{}, &res); err != nil {
		return nil, lost(err)
	}
	if len(res.Commands) > guardian.MaxHistory {
		// A guardian sends no more; a longer answer is cut, not trusted.
		res.Commands = res.Commands[:guardian.MaxHistory]
	}
	return res.Commands, nil
}

// Jobs lists the session's background commands with their state.
func (r *RemoteShell) Jobs(ctx context.Context) ([]guardian.Job, error) {
	var res JobsResult
	if err := r.call(ctx, MethodJobs, &reqBase{}, &res); err != nil {
		return nil, lost(err)
	}
	return res.Jobs, nil
}

// bgCall is outcomeCall for a background command: its outcome teaches
// nothing about the foreground generation or the cwd.
func (r *RemoteShell) bgCall(ctx context.Context, method string, params setAcker) (*guardian.Outcome, error) {
	var o Outcome
	if err := r.call(ctx, method, params, &o); err != nil {
		return nil, err
	}
	return o.Guardian(), nil
}

// Screen returns the visible terminal; on failure (the signature has no
// error) it returns an empty snapshot and the failure shows on the next
// call that can report one. The call is bounded by the client's timeout
// within ctx.
func (r *RemoteShell) Screen(ctx context.Context, lines int, diff bool) guardian.ScreenSnapshot {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var res screenResult
	if err := r.call(ctx, MethodScreen, &screenParams{Lines: lines, Diff: diff}, &res); err != nil {
		return guardian.ScreenSnapshot{}
	}
	return res.guardian()
}

// WaitForTurn waits until the PTY has been quiet for quiet, or timeout.
func (r *RemoteShell) WaitForTurn(ctx context.Context, quiet, timeout time.Duration) (bool, error) {
	return act(r, func() (bool, error) {
		var res waitTurnResult
		err := r.call(ctx, MethodWaitForTurn, &waitTurnParams{QuietMS: waitMS(quiet), TimeoutMS: waitMS(timeout)}, &res)
		return res.Quiet, err
	})
}

// Status returns the guardian's clocks and what runs, without output.
func (r *RemoteShell) Status(ctx context.Context) (Status, error) {
	var st Status
	if err := r.call(ctx, MethodStatus, &reqBase{}, &st); err != nil {
		return Status{}, err
	}
	r.noteStatus(st)
	return st, nil
}

func (r *RemoteShell) noteStatus(st Status) {
	r.mu.Lock()
	r.snap.Status, r.cwd = st, st.Cwd
	r.mu.Unlock()
}

// Reset replaces the guardian's shell at the same cwd (the session, its
// generations and its socket stay).
func (r *RemoteShell) Reset(ctx context.Context) error {
	var st Status
	if err := r.call(ctx, MethodReset, &reqBase{}, &st); err != nil {
		return err
	}
	r.noteStatus(st)
	return nil
}

// Respawn asks the guardian for a fresh shell with profile at the same cwd
// (see guardian.Terminal). A guardian too old to know the method answers an
// error wrapping ErrUnsupported: the mode change then fails, it is never
// applied to the old shell.
func (r *RemoteShell) Respawn(ctx context.Context, profile guardian.ShellProfile) (guardian.Confinement, error) {
	var res respawnResult
	if err := r.call(ctx, MethodRespawn, &respawnParams{Profile: profile}, &res); err != nil {
		return guardian.Confinement{}, err
	}
	r.noteStatus(res.Status)
	return res.Confinement, nil
}

// PID returns the shell's process id as of the last attach or status.
func (r *RemoteShell) PID(context.Context) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snap.ShellPID
}

// ShellStartup returns the shell's start-up (spawn to first ready prompt)
// and the user's rc file, as of the last attach or status; zero from a
// guardian too old to report it.
func (r *RemoteShell) ShellStartup() (time.Duration, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Duration(r.snap.ShellStartupMS) * time.Millisecond, r.snap.ShellRC
}

// Cwd asks the guardian for the shell's working directory, falling back to
// the last one seen when it does not answer. An answer, or the outcome of
// a finished foreground command (actForeground), is reused for cwdFresh
// unless an action intervenes. The call is bounded by the client's timeout
// within ctx.
func (r *RemoteShell) Cwd(ctx context.Context) string {
	r.mu.Lock()
	if r.cwd != "" && !r.cwdAt.IsZero() && time.Since(r.cwdAt) < cwdFresh {
		defer r.mu.Unlock()
		return r.cwd
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	st, err := r.Status(ctx) // a status answer updates r.cwd
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.cwd = st.Cwd
	}
	r.cwdAt = time.Now()
	return r.cwd
}

// Healthy reports whether the guardian answers and its session is open.
// The call is bounded by the client's timeout within ctx.
func (r *RemoteShell) Healthy(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	st, err := r.Status(ctx)
	return err == nil && !st.Closed
}

// Release detaches: the guardian outlives the adapter, and ends by winxd's
// idle TTLs, `winx kill` or `winx prune`. Release closes the shared
// connection (once its calls ended); a later call dials again.
func (r *RemoteShell) Release(context.Context) error {
	r.closeConn()
	return nil
}

// Close ends the session: the guardian kills the shell and its background
// commands and exits. A guardian already gone is not an error.
func (r *RemoteShell) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	var st Status
	err := r.call(ctx, MethodClose, &reqBase{}, &st)
	if errors.Is(err, ErrGuardianGone) {
		return nil
	}
	if err == nil {
		r.markGone(&GuardianGoneError{Socket: r.socket, Err: ErrTerminated})
	}
	return err
}
