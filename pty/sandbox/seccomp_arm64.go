//go:build linux && arm64

package sandbox

// nativeSeccomp is the filter's description of this architecture.
func nativeSeccomp() (seccompArch, bool) { return arm64Seccomp(), true }
