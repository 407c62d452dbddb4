//go:build linux && !amd64 && !arm64

package sandbox

// nativeSeccomp reports that the launcher has no filter for this
// architecture: its system call numbers and its compat ABIs were never
// written down here, and a filter with wrong numbers would be worse than
// none. The launcher refuses to start shells (seccompFilter).
func nativeSeccomp() (seccompArch, bool) { return seccompArch{}, false }
