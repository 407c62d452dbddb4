package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"winx/guardian/wire"
)

// DefaultRestartWait bounds waiting for a winxd that was asked to stop.
const DefaultRestartWait = 10 * time.Second

// ExitWaitError is a winxd that was asked to stop and still runs.
type ExitWaitError struct {
	PID   int
	After time.Duration
}

func (e *ExitWaitError) Error() string {
	return fmt.Sprintf("daemon: winxd (pid %d) did not exit within %v", e.PID, e.After)
}

// Restarted is what a planned restart did.
type Restarted struct {
	// Old is the hello of the winxd that was stopped; zero when none ran.
	Old wire.Hello
	// New is the hello of the winxd that answers now: the one so.Bin
	// started, or one another caller started first.
	New wire.Hello
}

// Restart is a planned restart of winxd, as `winx restart-daemon` does it:
// the winxd on socket is asked to shut down (its guardians keep running), Restart waits
// until its process is gone, and starts so.Bin, which finds the guardians
// from their sockets. Nothing running on socket is not an error: winxd is
// started. reason is recorded in the old winxd's exit record.
func Restart(ctx context.Context, socket string, local wire.Hello, so StartOptions, reason string) (Restarted, error) {
	var r Restarted
	c := &Client{Socket: socket, Hello: local}
	old, err := c.Shutdown(ctx, reason)
	switch {
	case errors.Is(err, wire.ErrNoServer):
	case err != nil:
		return r, err
	default:
		r.Old = old
		if err := WaitExit(ctx, old.PID, DefaultRestartWait); err != nil {
			return r, err
		}
	}
	r.New, err = Start(ctx, socket, local, so)
	return r, err
}

// WaitExit waits until process pid is gone (or a zombie nobody reaped yet),
// at most limit; an *ExitWaitError after it.
func WaitExit(ctx context.Context, pid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for pid > 0 {
		if Exited(pid) {
			return nil
		}
		if time.Now().After(deadline) {
			return &ExitWaitError{PID: pid, After: limit}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// Exited reports a process that is gone or a zombie nobody reaped yet (a
// winxd that its starting adapter has not reaped is one).
func Exited(pid int) bool {
	return syscall.Kill(pid, 0) != nil || zombie(pid)
}

// zombie reports a process that exited and waits to be reaped (Linux).
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}
