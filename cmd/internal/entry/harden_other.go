//go:build !linux

package entry

// Harden does nothing where there is no PR_SET_DUMPABLE; winx's sessions
// run on Linux only.
func Harden() error { return nil }
