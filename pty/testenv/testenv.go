// Package testenv decides what a test does when the machine lacks a kernel
// or system feature it needs (Landlock, a PTY, /proc, a tmpfs mount, a
// FIFO, an installed shell): under CI (CI=true), whose kernel and image
// have every feature the suite needs, the test fails, so that a broken CI
// machine can never turn a security test into a silent skip; elsewhere it
// skips. It is imported by tests only and imports nothing of the module.
package testenv

import (
	"os"
	"testing"
)

// OnCI reports whether the suite runs under CI (the CI variable is "true").
func OnCI() bool { return os.Getenv("CI") == "true" }

// Missing ends tb because a feature it needs is missing, as the message
// (fmt.Sprintf(format, args...)) says: a failure under CI, a skip elsewhere.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if OnCI() {
		tb.Fatalf("CI=true, yet a feature this test needs is missing: "+format, args...)
	}
	tb.Skipf(format, args...)
}
