package pty

import (
	"context"
	"syscall"
)

func startLocked(start func() (int, error)) error {
	_, err := start()
	return err
}

func reaped(int) {}

func withDeathSignal(a *syscall.SysProcAttr) *syscall.SysProcAttr { return a }

// BecomeSubreaper returns ErrUnsupported on darwin, which has no child
// subreaper.
func BecomeSubreaper(context.Context) error { return ErrUnsupported }

// KillDescendants is a no-op on darwin, which has no /proc; closing a
// process still kills its process group.
func KillDescendants() {}
