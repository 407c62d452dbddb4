//go:build linux || darwin

package pty

import "os/exec"

// StartCommand starts cmd (cmd.Start) as a child of this process that the
// orphan reaper of BecomeSubreaper, and KillOrphans, leave alone until
// WaitCommand has reaped it. A subreaper starts every child of its own this
// way: the reaper would otherwise reap one that exits before os/exec's Wait
// does (which then fails and loses its status), and KillOrphans would take
// it for an adopted orphan.
func StartCommand(cmd *exec.Cmd) error {
	return startLocked(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
}

// WaitCommand waits for cmd, started by StartCommand, and forgets it.
func WaitCommand(cmd *exec.Cmd) error {
	err := cmd.Wait()
	reaped(cmd.Process.Pid)
	return err
}
