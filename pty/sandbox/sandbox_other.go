//go:build !linux

package sandbox

import (
	"errors"
	"runtime"
)

// Probe reports that this system has no Landlock.
func Probe() (abi int, err error) {
	return 0, &UnavailableError{
		Reason: "unsupported on this OS (" + runtime.GOOS + "): Landlock is a Linux security module",
		Err:    errors.ErrUnsupported,
	}
}

// RunLauncher refuses to start anything: a shell cannot be confined here,
// and the launcher never runs one unconfined.
func RunLauncher(args []string) error {
	_, err := Probe()
	return err
}
