package guardian

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"time"

	"winx/pty"
)

// MaxBackground bounds background commands kept per session.
const MaxBackground = 32

// background is a command running in its own PTY, beside the shell.
type background struct {
	id   string
	proc *pty.Process
	cmd  *command // guarded by the Shell's mu
	// shown is the command as Jobs lists it (redacted, cut), made once at
	// the start rather than under the lock on every listing.
	shown string
}

// StartBackground runs command with bash -c in its own PTY at the shell's
// cwd and returns its id at once.
func (s *Shell) StartBackground(ctx context.Context, command string) (string, error) {
	if err := validateText(command, MaxCommandBytes); err != nil {
		return "", err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return "", ErrClosed
	}
	if err := s.refusePersonLocked(); err != nil {
		s.mu.Unlock()
		return "", err
	}
	if len(s.bg) >= MaxBackground {
		s.pruneBackgroundLocked()
	}
	if len(s.bg) >= MaxBackground {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: %d background commands are still running", ErrInvalidInput, MaxBackground)
	}
	s.bgNext++
	id := "bg-" + strconv.Itoa(s.bgNext)
	cwd, profile := s.cwd, s.profile
	s.mu.Unlock()
	shown := s.jobCommand(command)

	path, err := exec.LookPath("bash")
	if err != nil {
		return "", fmt.Errorf("guardian: %w", err)
	}
	cmd := exec.Command(path, "-c", command)
	cmd.Dir = cwd
	cmd.Env = s.confinedEnv(append(append(append([]string(nil), s.opts.Env...), profile.Env...), "PAGER=cat", "GIT_PAGER=cat", "TERM=xterm-256color"))
	if _, err := s.wrapCommand(cmd, profile); err != nil { // the sandbox and the read-only ruleset, if on
		return "", fmt.Errorf("guardian: start background command: %w", err)
	}
	proc, err := pty.StartWithSize(cmd, pty.Size{Rows: uint16(s.opts.Rows), Cols: uint16(s.opts.Cols)})
	if err != nil {
		return "", fmt.Errorf("guardian: start background command: %w", err)
	}
	s.mu.Lock()
	cfg := s.outputConfigLocked("output-" + id + ".txt")
	b := &background{id: id, proc: proc, shown: shown, cmd: newCommand(0, command, cfg)}
	b.cmd.out.open() // `winx jobs` names it from the start
	s.journals = append(s.journals, b.cmd)
	s.bg[id] = b
	s.mu.Unlock()
	removeAll(cfg.stale)
	s.jobsChanged()
	go s.backgroundLoop(b)
	return id, nil
}

func (s *Shell) backgroundLoop(b *background) {
	buf := make([]byte, 32<<10)
	f := b.proc.File()
	for {
		n, err := f.Read(buf)
		if n > 0 {
			s.mu.Lock()
			b.cmd.write(buf[:n])
			s.markPrintedLocked(b.cmd)
			s.broadcastLocked()
			s.mu.Unlock()
		}
		if err != nil {
			break
		}
	}
	status, _ := b.proc.Wait()
	s.mu.Lock()
	b.cmd.finishLocked(shellCode(status), false)
	s.broadcastLocked()
	s.mu.Unlock()
	s.jobsChanged()
}

// pruneBackgroundLocked forgets finished background commands whose output
// was delivered, and the jobs of a previous process of the session.
func (s *Shell) pruneBackgroundLocked() {
	s.prior = nil
	for id, b := range s.bg {
		if b.cmd.done {
			b.proc.Close()
			delete(s.bg, id)
		}
	}
}

func (s *Shell) background(id string) (*background, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.bg[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownBg, id)
	}
	return b, nil
}

// PollBackground waits up to wait for a background command and reports what
// it printed since the last look.
func (s *Shell) PollBackground(ctx context.Context, id string, wait time.Duration) (*Outcome, error) {
	b, err := s.background(id)
	if err != nil {
		return nil, err
	}
	return s.await(ctx, b.cmd, wait, b.proc)
}

// SendTextBackground types into a background command's PTY.
func (s *Shell) SendTextBackground(ctx context.Context, id, text string, submit bool, wait time.Duration) (*Outcome, error) {
	if err := validateText(text, MaxInputBytes); err != nil {
		return nil, err
	}
	if err := s.refusePerson(); err != nil {
		return nil, err
	}
	b, err := s.background(id)
	if err != nil {
		return nil, err
	}
	if submit {
		text += "\r"
	}
	if _, err := b.proc.File().Write([]byte(text)); err != nil {
		return nil, fmt.Errorf("guardian: write to background command: %w", err)
	}
	return s.await(ctx, b.cmd, wait, b.proc)
}
