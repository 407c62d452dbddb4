//go:build linux && amd64

package sandbox

// nativeSeccomp is the filter's description of this architecture.
func nativeSeccomp() (seccompArch, bool) { return amd64Seccomp(), true }
