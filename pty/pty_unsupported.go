//go:build !linux && !darwin

package pty

import (
	"context"
	"os"
	"os/exec"
	"syscall"
)

// Process is a command running on a pseudo-terminal. On this platform none
// can be started: Start and StartWithSize return ErrUnsupported.
type Process struct{}

// Start returns ErrUnsupported on this platform.
func Start(cmd *exec.Cmd) (*Process, error) { return nil, ErrUnsupported }

// StartWithSize returns ErrUnsupported on this platform.
func StartWithSize(cmd *exec.Cmd, size Size) (*Process, error) { return nil, ErrUnsupported }

// The methods below exist so that callers compile everywhere; no *Process
// is ever returned on this platform, so they only report ErrUnsupported.

func (p *Process) File() *os.File                  { return nil }
func (p *Process) Pid() int                        { return 0 }
func (p *Process) Resize(size Size) error          { return ErrUnsupported }
func (p *Process) ForegroundPgrp() (int, error)    { return 0, ErrUnsupported }
func (p *Process) Modes() (Modes, error)           { return Modes{}, ErrUnsupported }
func (p *Process) Signal(sig syscall.Signal) error { return ErrUnsupported }
func (p *Process) Kill() error                     { return ErrUnsupported }
func (p *Process) Wait() (ExitStatus, error)       { return ExitStatus{Code: -1}, ErrUnsupported }
func (p *Process) Close() error                    { return ErrUnsupported }

// Done returns a closed channel: there is never anything to wait for.
func (p *Process) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// BecomeSubreaper returns ErrUnsupported on this platform.
func BecomeSubreaper(context.Context) error { return ErrUnsupported }

// KillDescendants is a no-op on this platform.
func KillDescendants() {}

// Modes are the input modes of a terminal (see the unix version).
type Modes struct{ Canonical, Echo bool }
