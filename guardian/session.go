package guardian

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
func (s *Session) PrivateDir() string { return s.own.Dir }

// confinedEnv is env for a process of the session: a confined session's
// processes get the session's own temporary directory as TMPDIR (the last
// entry wins in exec.Cmd), since the sandbox grants no shared one.
func (s *Session) confinedEnv(env []string) []string {
	if s.opts.WrapArgv == nil {
		return env
	}
	return append(env, "TMPDIR="+s.own.Tmp)
}

// wrapCommand confines cmd for profile p before it is started (see
// confine).
func (s *Session) wrapCommand(cmd *exec.Cmd, p ShellProfile) (Confinement, error) {
	argv, c, err := s.confine(cmd.Args, p)
	if err != nil {
		return Confinement{}, err
	}
	cmd.Path, cmd.Args = argv[0], argv
	return c, nil
}

// Session is one shell on a PTY with its commands. All methods are safe for
// concurrent use; state changes happen under mu, in one place per kind.
type Session struct {
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

// NewSession starts a shell and waits for its first prompt.
func NewSession(ctx context.Context, opts Options) (*Session, error) {
	if opts.Rows <= 0 {
		opts.Rows = pty.DefaultRows
	}
	if opts.Cols <= 0 {
		opts.Cols = pty.DefaultCols
	}
	if opts.Dir == "" {
		opts.Dir = "/"
	}
	s := &Session{opts: opts, logger: opts.Logger, changed: make(chan struct{}), cwd: opts.Dir, bg: map[string]*background{}, profile: opts.Profile}
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
func (s *Session) startShell(ctx context.Context, dir string) error {
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
func (s *Session) readLoop(sp *shellProc) {
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
func (s *Session) outputLocked(sp *shellProc, p []byte) {
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

func (s *Session) markerLocked(sp *shellProc, m marker) {
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

func (s *Session) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor sleeps until cond (checked under mu) holds or ctx ends.
func (s *Session) waitFor(ctx context.Context, cond func() bool) error {
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
func (s *Session) ShellStartup() (time.Duration, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.shell.ready {
		return 0, ""
	}
	return s.shell.readyAt.Sub(s.shell.spawned), RCFile(s.opts.Shell)
}

// PID returns the current shell's process id.
func (s *Session) PID(context.Context) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shell.proc.Pid()
}

// Cwd returns the shell's working directory as of its last prompt.
func (s *Session) Cwd(context.Context) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// Healthy reports whether the session is open: a shell that exited is
// restarted at its cwd by the next command, so only Close ends it.
func (s *Session) Healthy(context.Context) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closed
}

// Meta returns the record SetMeta stored; nil before the first.
func (s *Session) Meta(context.Context) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.meta
}

// SetMeta replaces the record Meta returns.
func (s *Session) SetMeta(_ context.Context, meta json.RawMessage) error {
	s.mu.Lock()
	s.meta = append(json.RawMessage(nil), meta...)
	s.mu.Unlock()
	return nil
}

// Release ends the session (Close): nothing outlives the adapter in
// process.
func (s *Session) Release(context.Context) error { return s.Close() }

// Outcome is what a caller learns about the foreground command.
type Outcome struct {
	Generation uint64
	Command    string
	Running    bool
	ExitCode   int // valid when !Running
	Cwd        string
	Elapsed    time.Duration
	// Output is the shaped text new since the last delivery.
	Output Shaped
	// ShellExited is set when the command ended because the shell itself
	// exited (it is restarted at the same cwd before the next command).
	ShellExited bool
	// ShellReset is set when an interrupt could not bring the shell back
	// and it was replaced.
	ShellReset bool
	// AwaitingInput is set when the running command is blocked reading
	// its terminal, or holds the alternate screen (a full-screen program),
	// and has printed nothing for a moment: it waits for someone to type
	// (a prompt, a pager, an editor). A prompt is the last line of
	// Output.Text; a full-screen program's screen is Screen's.
	AwaitingInput bool
	// PersonNote says, once, that a person typed in the session since the
	// agent's last answer and what ran (see TakePersonNote); set by the
	// process serving the agent.
	PersonNote string
}

// Run types a command into the shell and waits up to wait for it to end.
func (s *Session) Run(ctx context.Context, command string, wait time.Duration) (*Outcome, error) {
	if err := validateText(command, MaxCommandBytes); err != nil {
		return nil, err
	}
	if err := s.ensureShell(ctx); err != nil {
		return nil, err
	}
	s.launchMu.Lock()
	c, err := s.launch(command)
	s.launchMu.Unlock()
	if err != nil {
		return nil, err
	}
	return s.await(ctx, c, wait, s.shellProcess())
}

// shellProcess is the current shell's process.
func (s *Session) shellProcess() *pty.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shell.proc
}

// launch publishes a new generation for command and types it into the
// shell. The caller holds launchMu.
func (s *Session) launch(line string) (*command, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if s.cmd != nil && !s.cmd.done {
		s.mu.Unlock()
		return nil, ErrCommandRunning
	}
	if err := s.refusePersonLocked(); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	typed := commandLine
	if s.restorePrompt {
		s.restorePrompt = false
		restore := restoreLine(s.opts.Shell)
		typed = func(command, script, nonce string) string {
			return "\x15" + restore + strings.TrimPrefix(commandLine(command, script, nonce), "\x15")
		}
	}
	s.gen++
	// From here on only a marker with the new command's nonce counts: the
	// last command's nonce may be known to what it left running.
	nonce := newNonce()
	s.shell.scanner.nonce = nonce
	cfg := s.outputConfigLocked("output-" + strconv.FormatUint(s.gen, 10) + ".txt")
	c := newCommand(s.gen, line, cfg)
	s.journals = append(s.journals, c)
	s.cmd = c
	s.noteLaunchLocked(c)
	sp := s.shell
	s.mu.Unlock()
	// The journal's file is created, and old ones deleted, once the line
	// is typed: the shell reads it meanwhile. Output that comes first
	// creates the file itself (journal.add), so no line misses it.
	defer func() {
		s.mu.Lock()
		c.out.open()
		s.mu.Unlock()
		removeAll(cfg.stale)
	}()

	script := ""
	if len(line) > maxInlineCommand {
		script = filepath.Join(s.own.Dir, "cmd-"+strconv.FormatUint(c.gen, 10)+".sh")
		if err := writePrivateFile(script, []byte(line+"\n")); err != nil {
			s.abandon(c)
			return nil, fmt.Errorf("guardian: write command script: %w", err)
		}
		c.script = script
	}
	if _, err := sp.proc.File().Write([]byte(typed(line, script, nonce))); err != nil {
		s.abandon(c)
		return nil, fmt.Errorf("guardian: write to shell: %w", err)
	}
	return c, nil
}

func (s *Session) isDone(c *command) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.done
}

// abandon marks a command that never reached the shell as finished.
func (s *Session) abandon(c *command) {
	s.mu.Lock()
	s.endLocked(c, -1, false)
	s.broadcastLocked()
	s.mu.Unlock()
}

// ensureShell restarts a shell that exited (exit, set -e) at the last cwd.
func (s *Session) ensureShell(ctx context.Context) error {
	s.mu.Lock()
	dead, closed, cwd := s.shell.dead, s.closed, s.cwd
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if !dead {
		return nil
	}
	return s.startShell(ctx, cwd)
}

// await waits up to wait for c to finish, then reports what is new. It
// answers early, with AwaitingInput, when c is blocked reading the
// terminal of proc (the PTY c runs on; nil: never) and has been quiet for
// inputQuiet since the later of its last output and this call: input sent
// just before the call gets its moment to be read.
func (s *Session) await(ctx context.Context, c *command, wait time.Duration, proc *pty.Process) (*Outcome, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	since := time.Now()
	awaiting := false
	var lastScan time.Time
	for {
		tctx, tcancel := context.WithTimeout(wctx, inputCheckEvery)
		err := s.waitFor(tctx, func() bool { return c.done })
		tcancel()
		if err == nil || wctx.Err() != nil {
			break
		}
		if proc == nil {
			continue
		}
		s.mu.Lock()
		begun, quietFrom := c.begun || c.gen == 0, c.lastOut
		s.mu.Unlock()
		if quietFrom.Before(since) {
			quietFrom = since
		}
		if !begun || time.Since(quietFrom) < inputQuiet {
			continue
		}
		full := time.Since(lastScan) >= inputScanEvery
		if full {
			lastScan = time.Now()
		}
		if s.fullScreenOn(proc) {
			// A full-screen program, quiet on the alternate screen, waits
			// for keys even when it does not sit in read(2) (vi waits in
			// select).
			awaiting = true
			break
		}
		if pg, err := proc.ForegroundPgrp(); err == nil && readingTerminal(proc.Pid(), pg, !full) {
			awaiting = true
			break
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	o := s.outcome(c)
	o.AwaitingInput = awaiting && o.Running
	if o.AwaitingInput {
		s.mu.Lock()
		c.prompt = c.partial
		s.mu.Unlock()
		// The prompt is shown once: the next look drops it, so it is not
		// an open line to replace.
		o.Output.Open = false
	}
	return o, nil
}

// fullScreenOn reports whether proc is the shell's terminal and a program
// holds it on the alternate screen (only the shell's terminal is rendered).
func (s *Session) fullScreenOn(proc *pty.Process) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shell != nil && s.shell.proc == proc && s.screen.AltScreenActive()
}

// outcome builds the report of c with its undelivered output.
func (s *Session) outcome(c *command) *Outcome {
	s.mu.Lock()
	text, sk, redactions := c.takeNewLocked()
	// The open line is sent again by the next look unless it is a prompt
	// already handed out (that look drops it instead).
	partial := c.partial
	open := !c.done && partial != "" && c.prompt == ""
	note := c.out.note(sk)
	if c.done {
		if fn := c.out.finalNote(); fn != "" && note != "" {
			note += "\n" + fn
		} else if fn != "" {
			note = fn
		}
	}
	journalPath := c.out.path
	o := &Outcome{
		Generation: c.gen, Command: c.text, Running: !c.done, ExitCode: c.exitCode,
		Cwd: s.cwd, ShellExited: c.shellExited,
	}
	if c.done {
		o.Elapsed = c.finished.Sub(c.started)
		if c.script != "" {
			os.Remove(c.script)
		}
	} else {
		o.Elapsed = time.Since(c.started)
	}
	s.mu.Unlock()
	shaped, err := Shape(text, s.opts.Shape)
	if err != nil {
		// The text is still usable; only saving the dropped head failed,
		// and the shaped text says so.
		s.logger.Warn("output head could not be saved", "err", err)
	}
	shaped.Redactions += redactions
	shaped.Journal = journalPath
	if note != "" {
		shaped.DroppedBytes += int(sk.bytes)
		shaped.DroppedLines += sk.lines
		shaped.LostLines += sk.lostLines
		shaped.LostBytes += sk.lostBytes
		// The skipped lines are copied where the model can read them, as a
		// dropped head always was; the journal keeps them too.
		if sk.lines > 0 && s.opts.Shape.ScratchDir != "" {
			copyPath, err := c.out.copySkipped(sk, s.opts.Shape.ScratchDir)
			switch {
			case err != nil:
				s.logger.Warn("skipped output could not be copied", "err", err)
			case copyPath != "":
				note = strings.Replace(note, "]", "; a copy of the saved ones is "+copyPath+"]", 1)
				shaped.DroppedFile = copyPath
			}
		}
		if shaped.DroppedFile == "" {
			shaped.DroppedFile = journalPath
		}
		shaped.Text = note + "\n" + shaped.Text
	}
	shaped.Open = open && strings.HasSuffix(shaped.Text, partial)
	o.Output = shaped
	return o
}

// removeAll deletes files, ignoring errors: a journal already gone is gone.
func removeAll(paths []string) {
	for _, p := range paths {
		os.Remove(p)
	}
}

// maxJournals bounds the journal files a session keeps, whatever their
// size.
const maxJournals = 64

// outputConfigLocked is the output set-up of a new command whose journal
// is named name in the session's private directory. Journals of finished
// commands are dropped, oldest first, until the new one fits the session's
// budget; the caller deletes their files (cfg.stale) outside the lock.
func (s *Session) outputConfigLocked(name string) outputConfig {
	// Each journal counts what it wrote to its file (buffered or not), so
	// the total needs no stat of every kept file per command.
	total := int64(0)
	sizes := make([]int64, len(s.journals))
	for i, c := range s.journals {
		if c.out.path != "" {
			sizes[i] = c.out.fileBytes
			total += sizes[i]
		}
	}
	kept, left := s.journals[:0], len(s.journals)
	var stale []string
	for i, c := range s.journals {
		if c.done && (total+JournalCommandBudget > JournalSessionBudget || left >= maxJournals) {
			left--
			if c.out.path != "" {
				stale = append(stale, c.out.path)
				total -= sizes[i]
			}
			continue
		}
		kept = append(kept, c)
	}
	clear(s.journals[len(kept):])
	s.journals = kept
	budget := s.opts.Shape.BudgetBytes
	if budget <= 0 {
		budget = DefaultOutputBudget
	}
	return outputConfig{
		rows: s.opts.Rows, cols: s.opts.Cols, journal: filepath.Join(s.own.Dir, name),
		redactor: s.opts.Shape.Redactor, tailBytes: budget, compress: !s.opts.Shape.NoCompress,
		stale: stale,
	}
}

// Poll waits up to wait for the newest foreground command and reports what
// is new since the last look. gen, when non-zero, must name that command.
func (s *Session) Poll(ctx context.Context, gen uint64, wait time.Duration) (*Outcome, error) {
	s.mu.Lock()
	c := s.cmd
	s.mu.Unlock()
	if c == nil || (gen != 0 && gen != c.gen) {
		return nil, ErrNotRunning
	}
	return s.await(ctx, c, wait, s.shellProcess())
}

// Key names a special key of send_specials.
type Key string

// The keys send_specials understands.
var keyBytes = map[Key]string{
	"Enter": "\r", "Key-up": "\x1b[A", "Key-down": "\x1b[B", "Key-right": "\x1b[C", "Key-left": "\x1b[D",
	"Ctrl-c": "\x03", "Ctrl-d": "\x04", "Ctrl-z": "\x1a",
}

// KeySequence is the bytes a terminal receives for keys; an unknown key
// is ErrInvalidInput.
func KeySequence(keys []Key) ([]byte, error) {
	var b []byte
	for _, k := range keys {
		seq, ok := keyBytes[k]
		if !ok {
			return nil, fmt.Errorf("%w: unknown key %q", ErrInvalidInput, k)
		}
		b = append(b, seq...)
	}
	return b, nil
}

// SendText types text (plus Enter when submit) into the foreground program.
func (s *Session) SendText(ctx context.Context, text string, submit bool, wait time.Duration) (*Outcome, error) {
	if text == "" {
		return nil, fmt.Errorf("%w: send_text is empty", ErrInvalidInput)
	}
	if err := validateText(text, MaxInputBytes); err != nil {
		return nil, err
	}
	if submit {
		text += "\r"
	}
	return s.input(ctx, []byte(text), wait)
}

// SendKeys sends special keys. Ctrl-c goes through the interrupt logic.
func (s *Session) SendKeys(ctx context.Context, keys []Key, wait time.Duration) (*Outcome, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no keys", ErrInvalidInput)
	}
	b, err := KeySequence(keys)
	if err != nil {
		return nil, err
	}
	if len(keys) == 1 && keys[0] == "Ctrl-c" {
		return s.Interrupt(ctx, wait)
	}
	return s.input(ctx, b, wait)
}

// SendBytes sends raw bytes (send_ascii). NUL never reaches the shell.
func (s *Session) SendBytes(ctx context.Context, b []byte, wait time.Duration) (*Outcome, error) {
	if len(b) == 0 || len(b) > MaxInputBytes {
		return nil, fmt.Errorf("%w: send_ascii needs 1 to %d bytes", ErrInvalidInput, MaxInputBytes)
	}
	for _, c := range b {
		if c == 0 {
			return nil, fmt.Errorf("%w: NUL bytes are not sent to the shell", ErrInvalidInput)
		}
	}
	return s.input(ctx, b, wait)
}

func (s *Session) input(ctx context.Context, b []byte, wait time.Duration) (*Outcome, error) {
	if err := s.ensureShell(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	sp, c := s.shell, s.cmd
	idle := c == nil || c.done
	refused := s.refusePersonLocked()
	s.mu.Unlock()
	if refused != nil {
		return nil, refused
	}
	if idle {
		// Typed into an idle shell, text would run as a command that no
		// generation accounts for (and Ctrl-d would end the shell).
		return nil, ErrNotRunning
	}
	if _, err := sp.proc.File().Write(b); err != nil {
		return nil, fmt.Errorf("guardian: write to shell: %w", err)
	}
	return s.await(ctx, c, wait, sp.proc)
}

// Interrupt sends Ctrl-C to the foreground command. A shell that does not
// come back is interrupted again, and then replaced at the same cwd.
func (s *Session) Interrupt(ctx context.Context, wait time.Duration) (*Outcome, error) {
	if err := s.refusePerson(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	sp, c := s.shell, s.cmd
	s.mu.Unlock()
	if c == nil || s.isDone(c) {
		if _, err := sp.proc.File().Write([]byte{3}); err != nil {
			return nil, fmt.Errorf("guardian: write to shell: %w", err)
		}
		if c == nil {
			return &Outcome{Cwd: s.Cwd(ctx)}, nil
		}
		return s.outcome(c), nil
	}
	s.awaitBegun(ctx, c)
	for attempt := 0; attempt < 2; attempt++ {
		if _, err := sp.proc.File().Write([]byte{3}); err != nil {
			break
		}
		gctx, cancel := context.WithTimeout(ctx, max(wait, interruptGrace))
		err := s.waitFor(gctx, func() bool { return c.done })
		cancel()
		if err == nil {
			return s.outcome(c), nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	// The shell will not come back: replace it at the same cwd.
	return s.abortByReset(ctx, c)
}

// abortByReset replaces the shell of a command that ignored Ctrl-C, at the
// same cwd, and ends the command as interrupted.
func (s *Session) abortByReset(ctx context.Context, c *command) (*Outcome, error) {
	if err := s.replaceShell(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.endLocked(c, 130, false)
	s.mu.Unlock()
	o := s.outcome(c)
	o.ShellReset = true
	return o, nil
}

// Cancel interrupts the foreground command only if it is generation gen and
// still running; otherwise it answers ErrNotRunning and types nothing. The
// target check and each Ctrl-C happen under launchMu, so no newer command
// can be published in between: a late cancel never reaches the next command.
// A command that ignores Ctrl-C gets a second one, then its shell is
// replaced at the same cwd, as with Interrupt.
func (s *Session) Cancel(ctx context.Context, gen uint64, wait time.Duration) (*Outcome, error) {
	if err := s.refusePerson(); err != nil {
		return nil, err
	}
	var c *command
	s.mu.Lock()
	if cur := s.cmd; cur != nil && cur.gen == gen {
		c = cur
	}
	s.mu.Unlock()
	if c == nil {
		return nil, ErrNotRunning
	}
	s.awaitBegun(ctx, c)
	for attempt := 0; attempt < 2; attempt++ {
		s.launchMu.Lock()
		s.mu.Lock()
		sp, cur := s.shell, s.cmd
		target := cur != nil && cur.gen == gen && !cur.done
		s.mu.Unlock()
		var err error
		if target {
			_, err = sp.proc.File().Write([]byte{3})
		}
		s.launchMu.Unlock()
		if !target { // it ended before the Ctrl-C
			return s.outcome(c), nil
		}
		if err != nil {
			return nil, fmt.Errorf("guardian: write to shell: %w", err)
		}
		c = cur
		gctx, cancel := context.WithTimeout(ctx, max(wait, interruptGrace))
		err = s.waitFor(gctx, func() bool { return c.done })
		cancel()
		if err == nil {
			return s.outcome(c), nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	// Still generation gen and deaf to Ctrl-C: replace the shell. Holding
	// launchMu keeps a new command from starting in the shell being replaced.
	s.launchMu.Lock()
	defer s.launchMu.Unlock()
	s.mu.Lock()
	stillTarget := s.cmd == c && !c.done
	s.mu.Unlock()
	if !stillTarget {
		return s.outcome(c), nil
	}
	return s.abortByReset(ctx, c)
}

// beginGrace bounds how long an interrupt waits for a just-typed command to
// start: a Ctrl-C that reaches the terminal while the shell has not read the
// command line yet flushes that line and is lost, leaving the command to run
// once the shell reads it.
const beginGrace = 2 * time.Second

// awaitBegun waits, at most beginGrace, until c's start marker was seen or
// c ended, and then, within the same bound, until a job of c holds the
// terminal. A SIGINT that reaches bash itself between reading the line and
// starting the command's first program can leave the shell stuck; once a
// job is in the foreground, Ctrl-C goes to that job. A command made only of
// builtins never hands the terminal over and is interrupted when the bound
// runs out.
func (s *Session) awaitBegun(ctx context.Context, c *command) {
	gctx, cancel := context.WithTimeout(ctx, beginGrace)
	defer cancel()
	if s.waitFor(gctx, func() bool { return c.begun || c.done }) != nil {
		return
	}
	s.mu.Lock()
	sp := s.shell
	s.mu.Unlock()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		done := c.done
		s.mu.Unlock()
		if pg, err := sp.proc.ForegroundPgrp(); done || err != nil || pg != sp.proc.Pid() {
			return
		}
		select {
		case <-tick.C:
		case <-gctx.Done():
			return
		}
	}
}

// Reset replaces the shell at the same cwd (reset_shell).
func (s *Session) Reset(ctx context.Context) error {
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

func (s *Session) replaceShell(ctx context.Context) error {
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
func (s *Session) Respawn(ctx context.Context, profile ShellProfile) (Confinement, error) {
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

// ScreenSnapshot is the visible terminal.
type ScreenSnapshot struct {
	Rows      []string
	AltScreen bool
	Title     string
	// Changed lists the row indexes that differ from the last snapshot
	// (filled when a diff was asked for).
	Changed []int
}

// Screen returns the last `lines` rows of the visible screen (0 = all).
// With diff, only rows changed since the previous snapshot are kept.
func (s *Session) Screen(_ context.Context, lines int, diff bool) ScreenSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Every row the model sees is redacted here, as logical lines.
	rows, wrapped := s.screen.ScreenRows()
	crow, _ := s.screen.Cursor()
	rows = redactRows(rows, wrapped, crow, s.opts.Cols, s.opts.Shape.Redactor)
	snap := ScreenSnapshot{AltScreen: s.screen.AltScreenActive(), Title: s.screen.Title()}
	prev := s.lastScreen
	s.lastScreen = append([]string(nil), rows...)
	if diff {
		for i, r := range rows {
			if i >= len(prev) || prev[i] != r {
				snap.Changed = append(snap.Changed, i)
			}
		}
	}
	if lines > 0 && lines < len(rows) {
		rows = rows[len(rows)-lines:]
	}
	snap.Rows = rows
	return snap
}

// WaitForTurn waits until the PTY has been quiet for quiet (a TUI waiting for
// input, a prompt) or timeout passed; it reports whether it went quiet.
// Quiet counts from the later of the last output and the call: input typed
// just before has its moment to be echoed and answered.
func (s *Session) WaitForTurn(ctx context.Context, quiet, timeout time.Duration) (bool, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		s.mu.Lock()
		last, ch := s.lastOut, s.changed
		s.mu.Unlock()
		if last.Before(start) {
			last = start
		}
		idle := time.Since(last)
		if idle >= quiet {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		t := time.NewTimer(min(quiet-idle, time.Until(deadline)))
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		}
		t.Stop()
	}
}

// Close kills the shell and every background command, whole process groups.
func (s *Session) Close() error {
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

// validateText refuses empty, oversized and NUL-carrying text.
func validateText(text string, max int) error {
	if text == "" {
		return fmt.Errorf("%w: empty", ErrInvalidInput)
	}
	if len(text) > max {
		return fmt.Errorf("%w: %d bytes, more than the limit of %d", ErrInvalidInput, len(text), max)
	}
	for i := 0; i < len(text); i++ {
		if text[i] == 0 {
			return fmt.Errorf("%w: NUL bytes are not sent to the shell", ErrInvalidInput)
		}
	}
	return nil
}
