package entry

import "syscall"

// prSetDumpable is PR_SET_DUMPABLE from <linux/prctl.h>.
const prSetDumpable = 4

// Harden makes the process undumpable, before it reads any credential:
// the kernel then owns /proc/PID/environ, mem, maps, fd and friends by
// root and refuses them (and ptrace) to processes of the same uid without
// CAP_SYS_PTRACE, which is what a session shell is. A shell that execs is
// dumpable again (execve resets the flag), so this covers the server's own
// process only. The command line stays world-readable in /proc/PID/cmdline
// whatever this does, which is why no secret belongs on it.
func Harden() error {
	_, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetDumpable, 0, 0, 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
