package guardian

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"winx/pty"
)

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
func (s *Shell) Run(ctx context.Context, command string, wait time.Duration) (*Outcome, error) {
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
func (s *Shell) shellProcess() *pty.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shell.proc
}

// launch publishes a new generation for command and types it into the
// shell. The caller holds launchMu.
func (s *Shell) launch(line string) (*command, error) {
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

func (s *Shell) isDone(c *command) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.done
}

// abandon marks a command that never reached the shell as finished.
func (s *Shell) abandon(c *command) {
	s.mu.Lock()
	s.endLocked(c, -1, false)
	s.broadcastLocked()
	s.mu.Unlock()
}

// ensureShell restarts a shell that exited (exit, set -e) at the last cwd.
func (s *Shell) ensureShell(ctx context.Context) error {
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
func (s *Shell) await(ctx context.Context, c *command, wait time.Duration, proc *pty.Process) (*Outcome, error) {
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
func (s *Shell) fullScreenOn(proc *pty.Process) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shell != nil && s.shell.proc == proc && s.screen.AltScreenActive()
}

// outcome builds the report of c with its undelivered output.
func (s *Shell) outcome(c *command) *Outcome {
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
func (s *Shell) outputConfigLocked(name string) outputConfig {
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
func (s *Shell) Poll(ctx context.Context, gen uint64, wait time.Duration) (*Outcome, error) {
	s.mu.Lock()
	c := s.cmd
	s.mu.Unlock()
	if c == nil || (gen != 0 && gen != c.gen) {
		return nil, ErrNotRunning
	}
	return s.await(ctx, c, wait, s.shellProcess())
}

// Interrupt sends Ctrl-C to the foreground command. A shell that does not
// come back is interrupted again, and then replaced at the same cwd.
func (s *Shell) Interrupt(ctx context.Context, wait time.Duration) (*Outcome, error) {
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
func (s *Shell) abortByReset(ctx context.Context, c *command) (*Outcome, error) {
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
func (s *Shell) Cancel(ctx context.Context, gen uint64, wait time.Duration) (*Outcome, error) {
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
func (s *Shell) awaitBegun(ctx context.Context, c *command) {
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
