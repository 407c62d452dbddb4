//go:build linux || darwin

package pty

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	creackpty "github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Process is a command running as the session leader of a new
// pseudo-terminal. It owns the master side of the terminal and the
// *exec.Cmd; one goroutine started by Start reaps the command.
//
// All methods are safe for concurrent use.
type Process struct {
	cmd *exec.Cmd // set by Start; only the reaper calls cmd.Wait
	pid int       // the child's pid, which is also its process group id

	// master is the master side of the terminal, in non-blocking mode and
	// registered with the runtime poller. It lives until Close.
	master *os.File

	// done is closed by the reaper once status and waitErr are set; they are
	// never written again, so they may be read by anyone who has seen done
	// closed.
	done    chan struct{}
	status  ExitStatus
	waitErr error

	mu sync.Mutex // guards groupGone
	// groupGone is set once kill(2) has reported that the process group has
	// no members left. From then on the group id may be reused by an
	// unrelated process, so no signal is sent to it again.
	groupGone bool

	closeOnce sync.Once
	closeErr  error // set inside closeOnce
}

// Start runs cmd on a new terminal of DefaultRows by DefaultCols.
// See StartWithSize.
func Start(cmd *exec.Cmd) (*Process, error) {
	return StartWithSize(cmd, Size{Rows: DefaultRows, Cols: DefaultCols})
}

// StartWithSize runs cmd on a new terminal of the given size. The terminal
// becomes the command's standard input and controlling terminal, and its
// standard output and error unless the caller set them. The command is started
// in a new session (Setsid, Setctty); cmd.Stdin must be nil and
// cmd.SysProcAttr must not ask for Setpgid, Foreground or Noctty, which
// conflict with that (ErrInvalidCmd).
//
// If cmd.Stdout or cmd.Stderr is set to something other than an *os.File,
// os/exec copies it in goroutines, and the process is not reported reaped
// (Wait, Done) until that copy ends as well.
func StartWithSize(cmd *exec.Cmd, size Size) (*Process, error) {
	if size.Rows == 0 || size.Cols == 0 {
		return nil, ErrInvalidSize
	}
	if cmd.Stdin != nil {
		return nil, fmt.Errorf("%w: cmd.Stdin is set; the terminal must be the standard input", ErrInvalidCmd)
	}
	if a := cmd.SysProcAttr; a != nil && (a.Setpgid || a.Foreground || a.Noctty) {
		return nil, fmt.Errorf("%w: cmd.SysProcAttr sets Setpgid, Foreground or Noctty", ErrInvalidCmd)
	}
	// The child dies with this process (PR_SET_PDEATHSIG on Linux): a
	// guardian killed with SIGKILL leaves no shell behind.
	cmd.SysProcAttr = withDeathSignal(cmd.SysProcAttr)
	ws := &creackpty.Winsize{Rows: size.Rows, Cols: size.Cols}
	var started *os.File
	err := startLocked(func() (int, error) {
		f, err := creackpty.StartWithSize(cmd, ws)
		if err != nil {
			return 0, err
		}
		started = f
		return cmd.Process.Pid, nil
	})
	if err != nil {
		return nil, fmt.Errorf("pty: start %s: %w", cmd.Path, err)
	}
	p := &Process{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	master, err := pollable(started)
	if err != nil {
		// The child is running without anyone to read its terminal: end it.
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		_ = cmd.Wait()
		reaped(p.pid)
		_ = started.Close()
		return nil, fmt.Errorf("pty: start %s: %w", cmd.Path, err)
	}
	p.master = master
	go p.reap()
	return p, nil
}

// pollable returns a copy of the master that the runtime poller manages, and
// closes f. creack/pty uses File.Fd for its ioctls, which switches the file
// to blocking mode for good: a blocked Read could then not be interrupted by
// Close, and read deadlines would not work. A file made by os.NewFile from a
// non-blocking descriptor is registered with the poller again.
func pollable(f *os.File) (*os.File, error) {
	var (
		fd     int
		dupErr error
	)
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	if err := rc.Control(func(old uintptr) {
		fd, dupErr = unix.FcntlInt(old, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, fmt.Errorf("dup master: %w", dupErr)
	}
	// O_NONBLOCK belongs to the open file description, which the old and the
	// new descriptor share; the old one is closed right away.
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("set master non-blocking: %w", err)
	}
	if err := f.Close(); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// reap waits for the command once and publishes the result.
func (p *Process) reap() {
	err := p.cmd.Wait()
	reaped(p.pid)
	p.status, p.waitErr = exitStatus(p.cmd.ProcessState, err)
	close(p.done)
}

// exitStatus converts what exec.Cmd.Wait returned. A non-zero exit or a
// signal is a status, not an error.
func exitStatus(ps *os.ProcessState, err error) (ExitStatus, error) {
	if ps == nil {
		return ExitStatus{Code: -1}, fmt.Errorf("pty: wait: %w", err)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = nil
	}
	if err != nil {
		err = fmt.Errorf("pty: wait: %w", err)
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		panic(fmt.Sprintf("pty: ProcessState.Sys() is %T, not syscall.WaitStatus", ps.Sys()))
	}
	switch {
	case ws.Exited():
		return ExitStatus{Code: ws.ExitStatus()}, err
	case ws.Signaled():
		return ExitStatus{Code: -1, Signaled: true, Signal: ws.Signal(), CoreDumped: ws.CoreDump()}, err
	}
	// os.Process.Wait does not ask for stopped or continued children.
	panic(fmt.Sprintf("pty: reaped wait status %#x is neither exited nor signaled", uint32(ws)))
}

// File returns the master side of the terminal: read it for the child's
// output, write it for the child's input. It stays owned by p and is closed by
// Close. Do not call its Fd method: that would switch it to blocking mode
// (see the package documentation on reads).
func (p *Process) File() *os.File { return p.master }

// Pid returns the child's process id, which is also its process group id
// and its session id.
func (p *Process) Pid() int { return p.pid }

// Resize sets the terminal size. The kernel sends SIGWINCH to the terminal's
// foreground process group.
func (p *Process) Resize(size Size) error {
	if size.Rows == 0 || size.Cols == 0 {
		return ErrInvalidSize
	}
	ws := &unix.Winsize{Row: size.Rows, Col: size.Cols}
	err := p.control(func(fd int) error { return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, ws) })
	if err != nil {
		return fmt.Errorf("pty: resize to %dx%d: %w", size.Rows, size.Cols, err)
	}
	return nil
}

// ForegroundPgrp returns the process group that has the terminal: the
// shell's own group (Pid) while it waits at a prompt, and a job's group
// while an interactive shell with job control runs that job.
func (p *Process) ForegroundPgrp() (int, error) {
	var pgrp int
	err := p.control(func(fd int) error {
		var err error
		pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("pty: foreground process group: %w", err)
	}
	return pgrp, nil
}

// control runs fn on the master's descriptor without taking it out of the
// poller (as File.Fd would).
func (p *Process) control(fn func(fd int) error) error {
	rc, err := p.master.SyscallConn()
	if err != nil {
		return err
	}
	var fnErr error
	if err := rc.Control(func(fd uintptr) { fnErr = fn(int(fd)) }); err != nil {
		return err
	}
	return fnErr
}

// Signal sends sig to every process in the child's process group: the child
// and whatever it started that did not move to a group of its own (an
// interactive shell with job control puts each job in its own group; a
// non-interactive shell does not). Once the group has no members left (an
// exited member counts until its parent has reaped it) it returns an error
// wrapping os.ErrProcessDone and sends nothing more, ever, so a later signal
// cannot reach an unrelated group that reused the id.
//
// The leader may already have been reaped while other members are alive;
// the kernel does not reuse an id while it names a live group, so the signal
// still reaches exactly this group.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.groupGone {
		return fmt.Errorf("pty: signal process group %d: %w", p.pid, os.ErrProcessDone)
	}
	err := syscall.Kill(-p.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		p.groupGone = true
		return fmt.Errorf("pty: signal process group %d: %w", p.pid, os.ErrProcessDone)
	}
	if err != nil {
		return fmt.Errorf("pty: signal %v to process group %d: %w", sig, p.pid, err)
	}
	return nil
}

// Kill sends SIGKILL to the child's whole process group (see Signal). It
// returns nil when the group is already gone, so it may be called any number
// of times. It does not wait: see Done, Wait and Close.
func (p *Process) Kill() error {
	err := p.Signal(syscall.SIGKILL)
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// Wait blocks until the child has been reaped and returns how it ended. Every
// call, concurrent or later, returns the same result. The error is non-nil
// only if waiting itself failed; a non-zero exit or a signal is reported in
// the ExitStatus, not as an error.
func (p *Process) Wait() (ExitStatus, error) {
	<-p.done
	return p.status, p.waitErr
}

// Done returns a channel that is closed once the child has been reaped.
// Members of its group other than the child may still be running then.
func (p *Process) Done() <-chan struct{} { return p.done }

// Close kills every process of the child's terminal session (on Linux; the
// child's process group elsewhere), waits until the child is reaped and
// closes the master, which also ends any pending Read. It returns the same
// result on every call.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		killSession(p.pid)
		killErr := p.Kill()
		<-p.done
		closeErr := p.master.Close()
		p.closeErr = errors.Join(killErr, closeErr)
	})
	return p.closeErr
}
