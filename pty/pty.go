// Package pty starts a command on a new pseudo-terminal and owns what follows:
// resizing the terminal, signalling and killing the command's whole process
// group, and reaping it exactly once. It does not read or interpret the
// terminal's output; callers read the master side (Process.File) and hand the
// bytes to whoever renders them.
//
// The child is started in a new session with the terminal as its controlling
// terminal (setsid and TIOCSCTTY, done by github.com/creack/pty), so it is the
// leader of its session and of its process group: its pid is the group id.
//
// # End of output
//
// The master reports the end of the child's output when no process holds the
// slave side open any more. Linux reports it as EIO from read(2), not as a
// zero-length read; other systems may report EOF. IsEndOfOutput accepts both. The parent
// never keeps a descriptor of the slave, so the end arrives as soon as the
// child and everything it left running that inherited the terminal have
// exited. A background process that outlives the shell keeps the output open:
// Close (or Kill) ends the whole group and so the output.
//
// Reads of the master go through the runtime's poller, so Close interrupts
// a pending Read (which then fails with os.ErrClosed) and read deadlines work.
package pty

import (
	"errors"
	"fmt"
	"io"
	"syscall"
)

// DefaultRows and DefaultCols are the terminal size used by Start. The size is
// generous so that commands which format for the terminal width rarely wrap.
const DefaultRows, DefaultCols = 50, 200

// Size is a terminal size in character cells.
type Size struct{ Rows, Cols uint16 }

// ErrUnsupported is returned by Start on platforms without pseudo-terminal
// support in this package. It wraps errors.ErrUnsupported.
var ErrUnsupported = fmt.Errorf("pty: pseudo-terminals are %w on this platform", errors.ErrUnsupported)

// ErrInvalidSize is returned for a size with zero rows or zero columns.
var ErrInvalidSize = errors.New("pty: terminal size must have at least one row and one column")

// ErrInvalidCmd is returned by Start for a command whose settings conflict
// with starting it as a session leader on the terminal.
var ErrInvalidCmd = errors.New("pty: command conflicts with a new session on the terminal")

// ExitStatus is how a reaped process ended, taken from its wait status.
type ExitStatus struct {
	// Code is the exit code when the process exited, and -1 when it was
	// killed by a signal or could not be waited for (as os.ProcessState.ExitCode).
	Code int
	// Signaled reports that a signal ended the process; Signal says which.
	Signaled bool
	Signal   syscall.Signal
	// CoreDumped reports that the signal also produced a core dump.
	CoreDumped bool
}

// String describes the status the way os.ProcessState does:
// "exit status 3", "signal: terminated", "signal: segmentation fault (core dumped)".
func (s ExitStatus) String() string {
	if !s.Signaled {
		return fmt.Sprintf("exit status %d", s.Code)
	}
	str := "signal: " + s.Signal.String()
	if s.CoreDumped {
		str += " (core dumped)"
	}
	return str
}

// IsEndOfOutput reports whether err, returned by a read of the master, means
// that the slave side has been closed by every process holding it: io.EOF, or
// EIO as Linux reports it. Any data written before the end has already been
// returned by earlier reads. A read after the caller closed the master fails
// with os.ErrClosed instead, which is not reported here.
func IsEndOfOutput(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO)
}
