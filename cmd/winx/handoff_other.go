//go:build !linux

package main

import "fmt"

// reexecSupported: elsewhere there is no /proc/PID/environ to keep clean,
// and winx's sessions run on Linux only.
const reexecSupported = false

func reexecWith([]string, credentials) error {
	panic("winx: reexecWith called where reexecSupported is false")
}

func receiveCredentials(string) (credentials, error) {
	return credentials{}, fmt.Errorf("%w: not supported on this platform", ErrCredentialHandoff)
}
