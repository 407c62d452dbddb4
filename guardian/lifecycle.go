package guardian

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"winx/pty"
	"winx/vt"
)

// Errors of the session; the tools layer turns them into error codes.
var (
	ErrCommandRunning = errors.New("guardian: a command is already running")
	ErrNotRunning     = errors.New("guardian: no command is running")
	ErrInvalidInput   = errors.New("guardian: invalid input")
	ErrClosed         = errors.New("guardian: session closed")
	ErrShellStart     = errors.New("guardian: shell did not start")
	ErrUnknownBg      = errors.New("guardian: unknown background command")
	// ErrUnresponsive: the process serving the session accepted the call
	// but did not answer within its deadline (stopped, hung or starved);
	// the session may answer again later.
	ErrUnresponsive = errors.New("guardian: the session's guardian does not answer")
)

// Limits of a session.
const (
	// MaxCommandBytes bounds one command's text.
	MaxCommandBytes = 256 << 10
	// MaxInputBytes bounds one send_text.
	MaxInputBytes = 64 << 10
	// startTimeout bounds how long a new shell may take to print its first
	// prompt marker (rc files run first).
	startTimeout = 15 * time.Second
	// interruptGrace is how long a shell may take to come back after Ctrl-C
	// before it is interrupted again, then replaced.
	interruptGrace = 2 * time.Second
)

// Options configure a session; zero values mean defaults.
type Options struct {
	Shell string // ShellBash (default) or ShellZsh
	Dir   string // initial working directory
	Env   []string
	Rows  int // PTY rows, default pty.DefaultRows
	Cols  int // PTY columns, default pty.DefaultCols
	// Shape configures how output is shaped for delivery.
	Shape  ShapeOptions
	Logger *slog.Logger
	// WrapArgv, if set, rewrites the argument vector of every process the
	// session starts (the shell and background commands), e.g. to start it
	// through the Landlock launcher of package pty/sandbox, which must
	// grant own.Dir readable and own.Tmp writable (the shell reads its rc
	// file and long commands from own.Dir). The first element of the
	// result is the program to run. A session with WrapArgv is confined:
	// its processes get own.Tmp as TMPDIR.
	WrapArgv func(argv []string, own OwnDirs) ([]string, error)
	// PrivateRoot is the directory, 0700 and this user's, in which the
	// session makes its private directory (see private.go); required. It
	// must not be the shared temporary directory, and a confined or
	// read-only shell must not be able to read it (the state directory:
	// the sandbox hides it with the home directory, HiddenDirs for the
	// read-only profile).
	PrivateRoot string
	// HiddenDirs are directories a read-only (architect) shell may not
	// read, list or execute from: the state directory, with the wire
	// secret and every session's private directory. The session's own
	// private directory stays readable.
	HiddenDirs []string
	// Workspace is the session's workspace root ("" for none): it stays
	// readable to a read-only shell inside HiddenDirs (a managed worktree
	// lives in the state directory).
	Workspace string
	// Profile is the first shell's profile (Respawn changes it).
	Profile ShellProfile
	// Launcher is the binary that runs pty/sandbox's launcher when its
	// first argument is sandbox.LauncherArg (winx, winx-guardian); a
	// read-only profile needs it. "" leaves read-only profiles to the
	// command parser alone (Confinement.Unavailable says so).
	Launcher string
	// PriorJobs are the jobs a previous process of this session recorded
	// before it died: Jobs lists them (running ones as JobLost) and new
	// background commands are numbered after them.
	PriorJobs []Job
	// OnJobsChange, if set, is called (without the session's lock) after a
	// background command started or ended, so the caller can record Jobs.
	OnJobsChange func()
}

// PrivateDir is the session's private directory (see private.go).
func (s *Shell) PrivateDir() string { return s.own.Dir }

// confinedEnv is env for a process of the session: a confined session's
// processes get the session's own temporary directory as TMPDIR (the last
// entry wins in exec.Cmd), since the sandbox grants no shared one.
func (s *Shell) confinedEnv(env []string) []string {
	if s.opts.WrapArgv == nil {
		return env
	}
	return append(env, "TMPDIR="+s.own.Tmp)
}

// wrapCommand confines cmd for profile p before it is started (see
// confine).
func (s *Shell) wrapCommand(cmd *exec.Cmd, p ShellProfile) (Confinement, error) {
	argv, c, err := s.confine(cmd.Args, p)
	if err != nil {
		return Confinement{}, err
	}
	cmd.Path, cmd.Args = argv[0], argv
	return c, nil
}

// Shell is one shell on a PTY with its commands. All methods are safe for
// concurrent use; state changes happen under mu, in one place per kind.
type Shell struct {
	opts   Options
	logger *slog.Logger
	// own is the session's private directory (rc file, long command
	// scripts, journals) and a confined shell's TMPDIR; set once.
	own OwnDirs

	// launchMu is held while a command is published and typed, and while a
	// generation-targeted cancel checks its target and types Ctrl-C, so that
	// a cancel for generation N can never reach generation N+1.
	launchMu sync.Mutex

	mu sync.Mutex // guards everything below
	// changed is closed and replaced whenever output or state changes, so
	// waiters can sleep without polling.
	changed chan struct{}
	shell   *shellProc
	cwd     string
	gen     uint64   // generation of the newest foreground command
	cmd     *command // newest foreground command (running or finished); nil before the first
	screen  *vt.Terminal
	lastOut time.Time // when the PTY last produced output
	// lastScreen is what the last screen snapshot showed, for diffs.
	lastScreen []string
	bg         map[string]*background
	bgNext     int
	// prior are the jobs of a previous process of the session
	// (Options.PriorJobs), all finished or lost; dropped by the prune.
	prior  []Job
	closed bool
	// meta is the adapter's record kept with the session (Terminal.Meta);
	// in-process it lives as long as the session.
	meta json.RawMessage
	// history is the ring of the last commands (History), for every
	// adapter of the session.
	history history
	// journals are the commands with a journal file in own.Dir, oldest first.
	journals []*command
	// persist flushes printed output to disk soon after it arrives.
	persist persister
	// profile starts every shell and background command; confinement is
	// what the current shell got. Both change only when a shell starts.
	profile     ShellProfile
	confinement Confinement
	// person is the attached person (person.go), nil when none;
	// personOffset is the offset of the person's output stream (counted
	// while nobody is attached too, so offsets only grow); personNote is
	// the line the agent's next answer carries after a detach.
	person       *person
	personOffset uint64
	personNote   string
	// restorePrompt: an attachment gave the shell echo and a prompt; the
	// agent's next command line takes them back first.
	restorePrompt bool
}

// shellProc is one incarnation of the shell (replaced on reset).
type shellProc struct {
	proc    *pty.Process
	nonce   string
	scanner markerScanner
	ready   bool // the first marker arrived
	dead    bool
	// spawned is when the process started, readyAt when its first marker
	// arrived: the span is the shell's start-up, mostly the user's rc file.
	spawned, readyAt time.Time
}

// NewShell starts a shell and waits for its first prompt.
func NewShell(ctx context.Context, opts Options) (*Shell, error) {
	if opts.Rows <= 0 {
		opts.Rows = pty.DefaultRows
	}
	if opts.Cols <= 0 {
		opts.Cols = pty.DefaultCols
	}
	if opts.Dir == "" {
		opts.Dir = "/"
	}
	s := &Shell{opts: opts, logger: opts.Logger, changed: make(chan struct{}), cwd: opts.Dir, bg: map[string]*background{}, profile: opts.Profile}
	s.adoptPriorJobs(opts.PriorJobs)
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	own, err := makePrivateDir(opts.PrivateRoot)
	if err != nil {
		return nil, err
	}
	s.own = own
	// The screen serves snapshots only: its scrollback is never read, so
	// none is kept.
	s.screen = vt.New(opts.Rows, opts.Cols, &vt.Options{ScrollbackLines: -1})
	if err := s.startShell(ctx, opts.Dir); err != nil {
		os.RemoveAll(own.Dir)
		return nil, err
	}
	return s, nil
}

// startShell launches a shell at dir with the session's profile and waits
// for its first marker.
func (s *Shell) startShell(ctx context.Context, dir string) error {
	s.mu.Lock()
	profile := s.profile
	s.mu.Unlock()
	nonce := newNonce()
	env := append(append([]string(nil), s.opts.Env...), profile.Env...)
	cmd, err := shellCommand(s.opts.Shell, nonce, s.own.Dir, dir, s.confinedEnv(env))
	if err != nil {
		return err
	}
	conf, err := s.wrapCommand(cmd, profile) // the sandbox and the read-only ruleset, if on
	if err != nil {
		return fmt.Errorf("%w: %v", ErrShellStart, err)
	}
	spawned := time.Now()
	proc, err := pty.StartWithSize(cmd, pty.Size{Rows: uint16(s.opts.Rows), Cols: uint16(s.opts.Cols)})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrShellStart, err)
	}
	sp := &shellProc{proc: proc, nonce: nonce, scanner: markerScanner{nonce: nonce}, spawned: spawned}
	s.mu.Lock()
	s.shell, s.confinement = sp, conf
	s.restorePrompt = false // a new shell has the rc file's blank prompt
	s.mu.Unlock()
	go s.readLoop(sp)
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	err = s.waitFor(ctx, func() bool { return sp.ready || sp.dead })
	s.mu.Lock()
	ready, dead := sp.ready, sp.dead
	s.mu.Unlock()
	if err != nil || !ready || dead {
		proc.Close()
		return fmt.Errorf("%w: no prompt within %v (dead=%v)", ErrShellStart, startTimeout, dead)
	}
	return nil
}

// readLoop copies PTY output into the session until the shell ends.
func (s *Shell) readLoop(sp *shellProc) {
	// Only the shell itself may complete a command (markerScanner): it is
	// the session leader of its PTY, so its process group is its pid, and a
	// job it runs holds the terminal under a group of its own. A wrapper
	// that forked the shell instead of executing it would leave no marker
	// counting: the session fails to start, it does not run unchecked.
	sp.scanner.shellHasTerminal = func() bool {
		pg, err := sp.proc.ForegroundPgrp()
		return err == nil && pg == sp.proc.Pid()
	}
	buf := make([]byte, 64<<10)
	f := sp.proc.File()
	for {
		n, err := f.Read(buf)
		if n > 0 {
			s.mu.Lock()
			sp.scanner.scan(buf[:n], func(p []byte) { s.outputLocked(sp, p) }, func(m marker) { s.markerLocked(sp, m) })
			s.lastOut = time.Now()
			s.broadcastLocked()
			s.mu.Unlock()
		}
		if err != nil {
			break
		}
	}
	status, _ := sp.proc.Wait()
	s.mu.Lock()
	sp.dead = true
	if s.shell == sp && s.cmd != nil && !s.cmd.done {
		// The shell itself ended (exit, set -e): that ends the command.
		s.endLocked(s.cmd, shellCode(status), true)
	}
	s.broadcastLocked()
	s.mu.Unlock()
}

// shellCode is st as a shell reports it in $?: the exit code, or 128 plus
// the number of the signal that ended the process.
func shellCode(st pty.ExitStatus) int {
	if st.Signaled {
		return 128 + int(st.Signal)
	}
	return st.Code
}

// outputLocked routes shell output: to the running command, and always to
// the screen. Output between commands (prompt text) goes only to the screen.
func (s *Shell) outputLocked(sp *shellProc, p []byte) {
	if s.shell != sp || !sp.ready {
		return
	}
	s.screen.Write(p)
	s.personOutputLocked(p)
	if s.cmd != nil && !s.cmd.done && s.cmd.begun {
		s.cmd.write(p)
		s.markPrintedLocked(s.cmd)
	}
}

func (s *Shell) markerLocked(sp *shellProc, m marker) {
	if s.shell != sp {
		return
	}
	if m.start {
		if s.cmd != nil && !s.cmd.done {
			s.cmd.begun = true
		}
		return
	}
	if !sp.ready {
		sp.ready, sp.readyAt = true, time.Now()
		s.cwd = m.cwd
		return
	}
	s.cwd = m.cwd
	if s.cmd != nil && !s.cmd.done {
		s.endLocked(s.cmd, m.exitCode, false)
		if s.person != nil {
			// A person attached while the command ran: now the shell
			// waits at its prompt for them.
			s.preparePersonLocked(s.person)
		}
	}
	if s.screen.AltScreenActive() {
		// The shell has the terminal back: an alternate screen still on
		// was left by a program that died without leaving it, and must
		// not make the next silent command look like a full-screen
		// program waiting for keys (fullScreenOn).
		s.screen.Write([]byte("\x1b[?1049l"))
	}
}

func (s *Shell) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor sleeps until cond (checked under mu) holds or ctx ends.
func (s *Shell) waitFor(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ok := cond()
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ShellStartup returns how long the current shell took from its spawn to
// its first ready prompt, and the user's rc file it sources (RCFile): a
// slow rc file is paid by every new session, so the adapter names it.
func (s *Shell) ShellStartup() (time.Duration, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.shell.ready {
		return 0, ""
	}
	return s.shell.readyAt.Sub(s.shell.spawned), RCFile(s.opts.Shell)
}

// PID returns the current shell's process id.
func (s *Shell) PID(context.Context) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shell.proc.Pid()
}

// Cwd returns the shell's working directory as of its last prompt.
func (s *Shell) Cwd(context.Context) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// Healthy reports whether the session is open: a shell that exited is
// restarted at its cwd by the next command, so only Close ends it.
func (s *Shell) Healthy(context.Context) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closed
}

// Meta returns the record SetMeta stored; nil before the first.
func (s *Shell) Meta(context.Context) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.meta
}

// SetMeta replaces the record Meta returns.
func (s *Shell) SetMeta(_ context.Context, meta json.RawMessage) error {
	s.mu.Lock()
	s.meta = append(json.RawMessage(nil), meta...)
	s.mu.Unlock()
	return nil
}

// Release ends the session (Close): nothing outlives the adapter in
// process.
func (s *Shell) Release(context.Context) error { return s.Close() }

// Reset replaces the shell at the same cwd (reset_shell).
func (s *Shell) Reset(ctx context.Context) error {
	s.mu.Lock()
	if err := s.refusePersonLocked(); err != nil {
		s.mu.Unlock()
		return err
	}
	c := s.cmd
	if c != nil && !c.done {
		s.endLocked(c, 130, false)
	}
	s.mu.Unlock()
	return s.replaceShell(ctx)
}

func (s *Shell) replaceShell(ctx context.Context) error {
	s.mu.Lock()
	old, cwd := s.shell, s.cwd
	s.mu.Unlock()
	old.proc.Close()
	return s.startShell(ctx, cwd)
}

// Respawn replaces the shell with a fresh one started with profile at the
// same cwd: nothing the old shell defined (aliases, functions, variables,
// traps) survives. It refuses with ErrCommandRunning while a foreground
// command runs. If the new shell does not start, the old one and its
// profile stay and the error wraps ErrShellStart. Background commands keep
// running as they were started.
func (s *Shell) Respawn(ctx context.Context, profile ShellProfile) (Confinement, error) {
	profile.Env = append([]string(nil), profile.Env...)
	s.launchMu.Lock()
	defer s.launchMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return Confinement{}, ErrClosed
	}
	if s.cmd != nil && !s.cmd.done {
		s.mu.Unlock()
		return Confinement{}, ErrCommandRunning
	}
	if err := s.refusePersonLocked(); err != nil {
		s.mu.Unlock()
		return Confinement{}, err
	}
	old, oldProfile, oldConf, cwd := s.shell, s.profile, s.confinement, s.cwd
	s.profile = profile
	s.mu.Unlock()
	if err := s.startShell(ctx, cwd); err != nil {
		s.mu.Lock()
		s.shell, s.profile, s.confinement = old, oldProfile, oldConf
		s.broadcastLocked()
		s.mu.Unlock()
		return Confinement{}, err
	}
	old.proc.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confinement, nil
}

// Close kills the shell and every background command, whole process groups.
func (s *Shell) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	sp := s.shell
	bgs := make([]*background, 0, len(s.bg))
	for _, b := range s.bg {
		bgs = append(bgs, b)
	}
	s.mu.Unlock()
	for _, b := range bgs {
		b.proc.Close()
	}
	err := sp.proc.Close()
	os.RemoveAll(s.own.Dir)
	return err
}
