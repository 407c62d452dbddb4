// Package session is the session registry of the MCP adapter: who is
// talking to which session (a principal's canonical workspace within an
// affinity scope, as a typed Key), thread ids and their bindings, workspace
// resolution, and the state each session owns between calls (read ledger,
// edit engine, navigation memory, image references, resumed contexts),
// created and released with it. It does not run commands or speak MCP: the
// shells come from a guardian/runtime Factory, and mcp/tools turns the registry's typed
// errors into result envelopes.
package session

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"winx/auth/policy"
	"winx/evidence"
	"winx/guardian"
	"winx/guardian/runtime"
)

// ResetInterval is how long after a reset a further reset of a healthy
// shell is skipped (reset_skipped_healthy) and the shell kept.
const ResetInterval = 5 * time.Minute

// Session is one logical session: a principal's workspace and its shell.
// The exported fields are set at creation and never change.
type Session struct {
	Key        Key
	ExternalID string // Key.ExternalID()
	Principal  string // Key.Principal
	Root       string // Key.Root: the canonical workspace root
	Scratch    bool   // Root is a scratch playground Winx created
	TempDir    string // TempArtifactDir(Key), created lazily by its writers
	Created    time.Time
	// Ledger records what the model was shown of each file (ReadFiles) so
	// edits can be checked against it; it is safe for concurrent use.
	Ledger *evidence.Ledger

	// State the tools keep between calls (state.go); each piece guards
	// itself and lives as long as the session.
	edits  editState
	nav    Navigation
	images ImageCache
	resume resumeState
	// history is the last foreground commands (history.go).
	history commandHistory
	// helperMaps is the helper CodeMap budget (history.go).
	helperMaps helperCodeMap
	// ledgerFile is where Ledger is kept on disk (state.go).
	ledgerFile ledgerStore
	// historyFile keeps the last command on disk; lost is the report of
	// a lost shell (lost.go).
	historyFile historyStore
	lost        lostState
	// work is the files the session read and edited, kept on disk
	// (work.go).
	work workStore

	// ready is closed when the first shell start ended; err, written once
	// before that, is its failure. A failed session is never handed out.
	ready chan struct{}
	err   error

	// resetMu serializes ResetShell, across the factory call.
	resetMu sync.Mutex

	mu        sync.Mutex // guards the fields below; taken after Sessions.mu, never before
	mode      policy.Mode
	shell     guardian.Terminal // nil until started
	lastReset time.Time         // zero until the first reset
	resumed   bool              // the first shell served this session before this adapter
	// shellState is how shell was started (its mode's profile).
	shellState ShellState
}

// Mode returns the session's current mode.
func (s *Session) Mode() policy.Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode.Clone()
}

// SetMode changes the session's mode after validating it (ValidateMode).
// When the mode's shell profile differs from the shell's (ShellProfile), a
// fresh shell is started with it at the same cwd first; if that fails (a
// command is running: guardian.ErrCommandRunning), the mode stays as it
// was. The mode and the shell's state are recorded with the shell.
func (s *Session) SetMode(ctx context.Context, m policy.Mode) error {
	if err := ValidateMode(m); err != nil {
		return err
	}
	// resetMu keeps a reset from replacing the shell in between.
	s.resetMu.Lock()
	defer s.resetMu.Unlock()
	s.mu.Lock()
	sh, st := s.shell, s.shellState
	s.mu.Unlock()
	if sh != nil {
		var err error
		if st, err = fitShell(ctx, sh, m, st); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.mode, s.shellState = m.Clone(), st
	s.mu.Unlock()
	recordShell(sh, encodeRecord(m, st))
	return nil
}

// Resumed reports whether the session's shell served it before this
// adapter started (a durable shell found running).
func (s *Session) Resumed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resumed
}

// Shell returns the session's current shell; it changes on ResetShell.
func (s *Session) Shell() guardian.Terminal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shell
}

// env is what a shell of the session exports besides its own environment.
func (s *Session) env() []string {
	return []string{"WINX_WORKSPACE_ROOT=" + s.Root, "WINX_TEMP_DIR=" + s.TempDir}
}

// threadKey names a thread: thread ids are private to their principal.
type threadKey struct{ principal, thread string }

// Sessions is the registry of sessions, keyed by Key (principal, canonical
// root and affinity scope), with each principal's thread ids pointing at one
// session. A session
// may have several threads; a thread has one session.
type Sessions struct {
	factory runtime.Factory
	now     func() time.Time

	mu       sync.Mutex // guards the fields below
	closed   bool
	sessions map[Key]*Session  // includes sessions still starting
	threads  map[threadKey]Key // thread -> its session
	// Invariant: every value of threads is a key of sessions whose session
	// started; a session is removed only when its start fails (before any
	// thread is bound to it) or on Close, which clears both maps.
}

// NewSessions returns an empty registry that starts shells with factory;
// now is the clock (nil means time.Now).
func NewSessions(factory runtime.Factory, now func() time.Time) *Sessions {
	if factory == nil {
		panic("session: NewSessions needs a shell factory")
	}
	if now == nil {
		now = time.Now
	}
	return &Sessions{
		factory:  factory,
		now:      now,
		sessions: make(map[Key]*Session),
		threads:  make(map[threadKey]Key),
	}
}

// Now reads the registry's clock.
func (s *Sessions) Now() time.Time { return s.now() }

// Attach returns the session of (principal, root), starting it (and its
// shell, in root) if it does not exist, and binds the thread to it. root
// must be canonical (ResolveWorkspace). threadID is the client's, normalized
// here; "" means the session's ExternalID. A thread already bound to
// another workspace is refused with a *ThreadBindingError wrapping
// ErrWorkspaceAlreadyBound. mode, unless zero, becomes the session's mode;
// a new session without one is wcgw. Two calls for one key always share one
// session and one shell, even when they race.
func (s *Sessions) Attach(ctx context.Context, principal, root string, mode policy.Mode, threadID string, scratch bool) (sess *Session, created bool, err error) {
	return s.attach(ctx, principal, "", root, mode, threadID, scratch, false, false)
}

// Known reports whether this registry holds the session of (principal,
// scope, root), started or starting: an Attach of it reattaches, so a
// caller need not prepare what only a new session shows.
func (s *Sessions) Known(principal, scope, root string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sessions[Key{Principal: principal, Root: root, Scope: scope}]
	return ok
}

// CheckAttach reports what AttachScoped with these arguments would refuse
// before it starts anything (the registry closed, the thread bound to
// another workspace), without binding or starting: a caller that must make
// something before the attach (a worktree) asks first, so a refused call
// leaves nothing. The answer can change before the attach, which checks
// again.
func (s *Sessions) CheckAttach(principal, scope, root, threadID string) error {
	key := Key{Principal: principal, Root: root, Scope: scope}
	tk := threadKey{principal, ThreadIDOrDefault(threadID, key.ExternalID())}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrSessionsClosed
	}
	return s.checkBindLocked(tk, key, root, false)
}

// AttachScoped is Attach with a session affinity scope: sessions of one
// principal and workspace are kept apart per scope (a conversation or a
// thread); "" is the workspace-wide session Attach uses.
func (s *Sessions) AttachScoped(ctx context.Context, principal, scope, root string, mode policy.Mode, threadID string, scratch bool) (sess *Session, created bool, err error) {
	return s.attach(ctx, principal, scope, root, mode, threadID, scratch, false, false)
}

// ChangeWorkspace is Attach for a thread that moves: the thread is bound to
// the session of root even if it was bound to another workspace, whose
// session keeps running for its other threads.
func (s *Sessions) ChangeWorkspace(ctx context.Context, principal, root string, mode policy.Mode, threadID string, scratch bool) (sess *Session, created bool, err error) {
	return s.attach(ctx, principal, "", root, mode, threadID, scratch, true, false)
}

// ChangeWorkspaceScoped is ChangeWorkspace within an affinity scope.
func (s *Sessions) ChangeWorkspaceScoped(ctx context.Context, principal, scope, root string, mode policy.Mode, threadID string, scratch bool) (sess *Session, created bool, err error) {
	return s.attach(ctx, principal, scope, root, mode, threadID, scratch, true, false)
}

// attach finds or starts the session of (principal, scope, root) and binds
// the thread to it. existing asks only for a session that runs already, in
// this registry or in a terminal an earlier adapter started
// (runtime.Spec.Existing); none is ErrNotInitialized.
func (s *Sessions) attach(ctx context.Context, principal, scope, root string, mode policy.Mode, threadID string, scratch, move, existing bool) (*Session, bool, error) {
	if !filepath.IsAbs(root) || filepath.Clean(root) != root {
		return nil, false, &WorkspaceError{Path: root, Err: ErrWorkspaceRelative}
	}
	if mode.Name != "" {
		if err := ValidateMode(mode); err != nil {
			return nil, false, err
		}
	}
	// A scoped session is its own session: its key and external id carry
	// the scope, hashed in the external id so no client text reaches it.
	key := Key{Principal: principal, Root: root, Scope: scope}
	externalID := key.ExternalID()
	tk := threadKey{principal, ThreadIDOrDefault(threadID, externalID)}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, false, ErrSessionsClosed
		}
		if err := s.checkBindLocked(tk, key, root, move); err != nil {
			s.mu.Unlock()
			return nil, false, err
		}
		sess, ok := s.sessions[key]
		if !ok {
			sess = &Session{
				Key: key, ExternalID: externalID, Principal: principal,
				Root: root, Scratch: scratch, TempDir: TempArtifactDir(key), Created: s.now(),
				Ledger: evidence.NewLedger(0), ready: make(chan struct{}),
			}
			s.sessions[key] = sess
			s.mu.Unlock()
			if err := s.start(ctx, sess, mode, existing); err != nil {
				if errors.Is(err, runtime.ErrNoSession) {
					return nil, false, ErrNotInitialized
				}
				return nil, false, err
			}
			return sess, true, s.bind(tk, sess, move)
		}
		s.mu.Unlock()
		select {
		case <-sess.ready:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		if sess.err != nil {
			continue // its starter failed and removed it: start it ourselves
		}
		// Whoever attaches to a known session is told it reattached:
		// its shell must be alive now, or be replaced (and the loss
		// reported) before that is said.
		if _, err := s.Revive(ctx, sess); err != nil {
			return nil, false, err
		}
		if mode.Name != "" {
			if err := sess.SetMode(ctx, mode); err != nil {
				return nil, false, err
			}
		}
		return sess, false, s.bind(tk, sess, move)
	}
}

// checkBindLocked refuses a thread bound to another session unless it moves.
func (s *Sessions) checkBindLocked(tk threadKey, key Key, root string, move bool) error {
	bound, ok := s.threads[tk]
	if !ok || bound == key || move {
		return nil
	}
	other := s.sessions[bound]
	return &ThreadBindingError{ThreadID: tk.thread, Bound: other.Root, Given: root, Err: ErrWorkspaceAlreadyBound}
}

// bind points the thread at sess, checking again: another call may have
// bound it while the shell started.
func (s *Sessions) bind(tk threadKey, sess *Session, move bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrSessionsClosed
	}
	if err := s.checkBindLocked(tk, sess.Key, sess.Root, move); err != nil {
		return err
	}
	s.threads[tk] = sess.Key
	return nil
}

// start runs the factory for a new session and publishes the outcome.
func (s *Sessions) start(ctx context.Context, sess *Session, mode policy.Mode, existing bool) error {
	var st *runtime.Started
	var err error
	if existing {
		st, err = s.existingShell(ctx, sess)
	} else {
		st, err = s.newShell(ctx, sess, sess.Root, nil)
	}
	var sh guardian.Terminal
	var shell ShellState
	resumed := false
	if err == nil && st.Lost != nil {
		// The session's guardian had died: this is a fresh shell.
		sess.noteLost(st.Lost, 0)
	}
	if err == nil {
		sh = st.Terminal
		var prior ShellState
		mode, resumed, prior = resumeMode(ctx, st, mode)
		if shell, err = fitShell(ctx, sh, mode, prior); err != nil {
			sh.Release(context.WithoutCancel(ctx))
			sh = nil
		} else if rec := encodeRecord(mode, shell); !resumed || !bytes.Equal(rec, sh.Meta(ctx)) {
			// A resumed shell that holds this very record (the usual
			// reattach) needs no write: one round trip less.
			recordShell(sh, rec)
		}
	}
	var orphan guardian.Terminal
	s.mu.Lock()
	if err == nil && s.closed {
		err, orphan = ErrSessionsClosed, sh
	}
	if err != nil {
		if s.sessions[sess.Key] == sess {
			delete(s.sessions, sess.Key)
		}
	} else {
		sess.mu.Lock()
		sess.shell, sess.mode, sess.resumed, sess.shellState = sh, mode.Clone(), resumed, shell
		sess.mu.Unlock()
	}
	sess.err = err
	close(sess.ready)
	s.mu.Unlock()
	if orphan != nil {
		orphan.Release(context.WithoutCancel(ctx))
	}
	return err
}

// newShell runs the factory for a shell of sess in dir; replacing is the
// shell a reset replaces, nil for the first.
func (s *Sessions) newShell(ctx context.Context, sess *Session, dir string, replacing guardian.Terminal) (*runtime.Started, error) {
	// WINX_TEMP_DIR exists when the shell starts; a failure (a read-only
	// workspace) leaves it to its first writer.
	_ = ensureTempDir(sess.Root, sess.TempDir)
	st, err := s.factory(ctx, runtime.Spec{
		Principal: sess.Key.Principal, Workspace: sess.Key.Root, Scope: sess.Key.Scope, ExternalID: sess.ExternalID,
		Dir: dir, Env: sess.env(), Replacing: replacing,
	})
	if err == nil && (st == nil || st.Terminal == nil) {
		err = errors.New("session: shell factory returned no shell")
	}
	return st, err
}

// existingShell reaches the terminal that already serves sess, if one runs.
func (s *Sessions) existingShell(ctx context.Context, sess *Session) (*runtime.Started, error) {
	st, err := s.factory(ctx, runtime.Spec{
		Principal: sess.Key.Principal, Workspace: sess.Key.Root, Scope: sess.Key.Scope, ExternalID: sess.ExternalID,
		Dir: sess.Root, Env: sess.env(), Existing: true,
	})
	if err == nil && (st == nil || st.Terminal == nil) {
		err = errors.New("session: shell factory returned no shell")
	}
	return st, err
}

// Resolve is Lookup for a session-bound call that may come to an adapter
// which never saw its session (a restarted desktop client or HTTP server):
// when the thread is not bound here, it attaches the thread to the session
// of (principal, workspaceRoot, scope) if that session runs, in this
// registry or in a terminal an earlier adapter started (a guardian of the
// daemon runtime), with its mode and shell as they were. scope is the
// call's affinity scope (Scope). Errors are Lookup's; a session that runs
// nowhere stays ErrNotInitialized.
func (s *Sessions) Resolve(ctx context.Context, principal, scope, threadID, workspaceRoot string) (*Session, error) {
	sess, err := s.Lookup(principal, threadID, workspaceRoot)
	if !errors.Is(err, ErrNotInitialized) || !filepath.IsAbs(workspaceRoot) {
		return sess, err
	}
	root, cerr := CanonicalPath(filepath.Clean(workspaceRoot))
	if cerr != nil {
		return nil, err
	}
	sess, _, aerr := s.attach(ctx, principal, scope, root, policy.Mode{}, threadID, false, false, true)
	if aerr != nil {
		return nil, aerr
	}
	return sess, nil
}

// Bind binds one more thread of sess's principal to sess, as Attach does;
// a thread bound to another session is refused (*ThreadBindingError).
func (s *Sessions) Bind(sess *Session, threadID string) error {
	return s.bind(threadKey{sess.Principal, ThreadIDOrDefault(threadID, sess.ExternalID)}, sess, false)
}

// ByThread returns the session a principal's thread is bound to; threadID is
// normalized here. It fails with ErrNotInitialized.
func (s *Sessions) ByThread(principal, threadID string) (*Session, error) {
	tid := NormalizeThreadID(threadID)
	s.mu.Lock()
	defer s.mu.Unlock()
	if key, ok := s.threads[threadKey{principal, tid}]; ok && tid != "" {
		return s.sessions[key], nil
	}
	return nil, ErrNotInitialized
}

// Lookup returns the session for a session-bound call: the principal's
// thread must be bound and its workspace must be workspaceRoot (as
// Initialize returned it, or any spelling that resolves to it). An empty
// threadID means the workspace's default thread, its ExternalID. Errors:
// ErrWorkspaceBindingRequired, ErrNotInitialized, and a *ThreadBindingError
// wrapping ErrWorkspaceThreadMismatch.
func (s *Sessions) Lookup(principal, threadID, workspaceRoot string) (*Session, error) {
	if workspaceRoot == "" {
		return nil, ErrWorkspaceBindingRequired
	}
	given := filepath.Clean(workspaceRoot)
	tid := NormalizeThreadID(threadID)
	if tid == "" {
		root := given
		if c, err := CanonicalPath(given); err == nil {
			root = c
		}
		tid = ExternalSessionID(principal, root)
	}
	sess, err := s.ByThread(principal, tid)
	if err != nil {
		return nil, err
	}
	if given == sess.Root {
		return sess, nil
	}
	if c, err := CanonicalPath(given); err == nil && c == sess.Root {
		return sess, nil
	}
	return nil, &ThreadBindingError{ThreadID: tid, Bound: sess.Root, Given: workspaceRoot, Err: ErrWorkspaceThreadMismatch}
}

// Find returns the session a call about an existing session (a mode change,
// a shell reset) names, and the thread id to answer with: by threadID,
// checked against anyPath when both are given, or by the workspace's
// default thread when only anyPath is. Errors are ResolveWorkspace's,
// Lookup's and ByThread's; neither given is ErrNotInitialized.
func (s *Sessions) Find(principal, threadID, anyPath string) (*Session, string, error) {
	var root string
	if anyPath != "" {
		r, _, err := ResolveWorkspace(anyPath, "")
		if err != nil {
			return nil, "", err
		}
		root = r
	}
	switch {
	case threadID != "" && root != "":
		sess, err := s.Lookup(principal, threadID, root)
		return sess, NormalizeThreadID(threadID), err
	case threadID != "":
		sess, err := s.ByThread(principal, threadID)
		return sess, NormalizeThreadID(threadID), err
	case root != "":
		sess, err := s.Lookup(principal, "", root)
		if err != nil {
			return nil, "", err
		}
		return sess, sess.ExternalID, nil
	}
	return nil, "", ErrNotInitialized
}

// ResetShell replaces the session's shell with a new one in the old one's
// cwd (the root if that is gone), keeping the mode. Within ResetInterval of
// the last reset a shell that does not report a failure is kept and reset is
// false. If the new shell cannot start, the old one is kept.
func (s *Sessions) ResetShell(ctx context.Context, sess *Session) (reset bool, err error) {
	sess.resetMu.Lock()
	defer sess.resetMu.Unlock()
	sess.mu.Lock()
	old, last := sess.shell, sess.lastReset
	sess.mu.Unlock()
	if !last.IsZero() && s.now().Sub(last) < ResetInterval && old.Healthy(ctx) {
		return false, nil
	}
	dir := sess.Root
	if cwd := old.Cwd(ctx); cwd != "" {
		if fi, err := os.Stat(cwd); err == nil && fi.IsDir() {
			dir = cwd
		}
	}
	if _, err := s.replaceShellLocked(ctx, sess, dir, old, true); err != nil {
		return false, err
	}
	return true, nil
}

// replaceShellLocked starts a new shell of sess in dir in place of old,
// with the session's mode, and releases old; sess.resetMu is held. reset
// starts the reset interval (ResetShell). A replaced terminal found dead
// with what it left (runtime.Started.Lost) is reported lost.
func (s *Sessions) replaceShellLocked(ctx context.Context, sess *Session, dir string, old guardian.Terminal, reset bool) (*runtime.Started, error) {
	pid := old.PID(ctx)
	st, err := s.newShell(ctx, sess, dir, old)
	if err != nil {
		return nil, err
	}
	sh := st.Terminal
	// The new shell gets the mode's profile: a shell reset in place in its
	// guardian kept it (its record says so), a new one starts without it.
	mode := sess.Mode()
	shell, err := fitShell(ctx, sh, mode, decodeShellState(sh.Meta(ctx)))
	if err != nil {
		sh.Release(context.WithoutCancel(ctx))
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		sh.Release(context.WithoutCancel(ctx))
		return nil, ErrSessionsClosed
	}
	sess.mu.Lock()
	sess.shell, sess.shellState = sh, shell
	if reset {
		sess.lastReset = s.now()
	}
	sess.mu.Unlock()
	s.mu.Unlock()
	if st.Lost != nil {
		sess.noteLost(st.Lost, pid)
	}
	// The replaced shell is gone from the session either way; a failure to
	// tear it down leaves nothing the caller could act on.
	_ = old.Release(context.WithoutCancel(ctx))
	// A guardian spawned anew holds no mode yet.
	recordShell(sh, encodeRecord(mode, shell))
	return st, nil
}

// Close closes every session's shell and refuses further use.
func (s *Sessions) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var shells []shell
	for _, sess := range s.sessions {
		sess.mu.Lock()
		if sess.shell != nil {
			shells = append(shells, sess.shell)
		}
		sess.mu.Unlock()
	}
	clear(s.sessions)
	clear(s.threads)
	s.mu.Unlock()
	// Close has no caller's context: releasing is local (the embedded
	// session ends its processes, a guardian client only detaches).
	ctx := context.Background()
	var errs []error
	for _, sh := range shells {
		errs = append(errs, sh.Release(ctx))
	}
	return errors.Join(errs...)
}

// TempDirs returns the temporary-artifact directories of the registry's
// sessions in root (sessions of other Winx processes are not known here).
func (s *Sessions) TempDirs(root string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var dirs []string
	for _, sess := range s.sessions {
		if sess.Root == root {
			dirs = append(dirs, sess.TempDir)
		}
	}
	return dirs
}

// EndWorkspace ends the sessions of this registry whose workspace root is
// root or lies beneath it (a managed worktree that was just removed): their
// shells and background commands are ended for good, not only detached,
// and their threads are unbound, so a later call starts afresh instead of
// reaching a shell whose directory is gone. Sessions of other Winx
// processes are ended by winxd's sweep (a session whose workspace no
// longer exists). It returns how many sessions it ended.
func (s *Sessions) EndWorkspace(root string) int {
	s.mu.Lock()
	var ended []*Session
	for key, sess := range s.sessions {
		if sess.Root != root && !strings.HasPrefix(sess.Root, root+string(filepath.Separator)) {
			continue
		}
		ended = append(ended, sess)
		delete(s.sessions, key)
		for tk, k := range s.threads {
			if k == key {
				delete(s.threads, tk)
			}
		}
	}
	s.mu.Unlock()
	for _, sess := range ended {
		// A caller still holding the session sees a closed shell.
		sh := sess.Shell()
		if c, ok := sh.(interface{ Close() error }); ok {
			c.Close()
		} else if sh != nil {
			sh.Release(context.Background())
		}
	}
	return len(ended)
}
