//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompArch is what the filter needs to know of an architecture: its
// audit number, which the kernel passes with every system call, and the
// numbers it compares.
type seccompArch struct {
	name  string
	audit uint32 // AUDIT_ARCH_* (include/uapi/linux/audit.h)
	// x32Bit is __X32_SYSCALL_BIT on amd64, 0 where there is no x32 ABI.
	// x32 system calls arrive with the native audit number and this bit
	// set in their number.
	x32Bit uint32
	// System call numbers (the architecture's unistd.h).
	ioctl, socket, ioUringSetup uint32
	// ioctl requests that type into a terminal (asm-generic/ioctls.h on
	// both supported architectures).
	tiocsti, tioclinux uint32
}

// amd64Seccomp is x86-64 (arch/x86/entry/syscalls/syscall_64.tbl).
func amd64Seccomp() seccompArch {
	return seccompArch{name: "amd64", audit: 0xc000003e, x32Bit: 0x40000000,
		ioctl: 16, socket: 41, ioUringSetup: 425, tiocsti: 0x5412, tioclinux: 0x541c}
}

// arm64Seccomp is AArch64 (include/uapi/asm-generic/unistd.h). Its 32-bit
// compat system calls arrive as AUDIT_ARCH_ARM and are refused as foreign.
func arm64Seccomp() seccompArch {
	return seccompArch{name: "arm64", audit: 0xc00000b7,
		ioctl: 29, socket: 198, ioUringSetup: 425, tiocsti: 0x5412, tioclinux: 0x541c}
}

// Offsets in struct seccomp_data (include/uapi/linux/seccomp.h):
// int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
const (
	seccompNr   = 0
	seccompArg0 = 16 // args[i] at seccompArg0 + 8*i
)

// seccompArchOffset is the offset of seccomp_data.arch.
const seccompArchOffset = 4

// argLow is the offset of the low 32 bits of system call argument i; both
// supported architectures are little-endian.
func argLow(i int) uint32 { return uint32(seccompArg0 + 8*i) }

// Filter results.
const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retKill   = unix.SECCOMP_RET_KILL_PROCESS
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retEACCES = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
)

// buildSeccompFilter returns the launcher's filter for a (see the package
// comment): foreign architectures and x32 are killed, TIOCSTI and
// TIOCLINUX fail with EPERM, and with denyNetwork AF_INET and AF_INET6
// sockets and io_uring_setup fail with EACCES. Everything else is allowed:
// Landlock and the empty capability sets do the rest.
func buildSeccompFilter(a seccompArch, denyNetwork bool) []unix.SockFilter {
	var b bpfProgram
	// A system call of another architecture (int $0x80 on amd64, AArch32
	// on arm64) has other numbers: ioctl is 54 for i386. Comparing numbers
	// without the architecture would let them through.
	b.load(seccompArchOffset)
	b.jumpUnless(a.audit, "kill")
	b.load(seccompNr)
	if a.x32Bit != 0 {
		b.jumpAtLeast(a.x32Bit, "kill")
	}
	b.jumpIf(a.ioctl, "ioctl")
	if denyNetwork {
		b.jumpIf(a.socket, "socket")
		// io_uring's IORING_OP_SOCKET makes sockets without socket(2).
		b.jumpIf(a.ioUringSetup, "eacces")
	}
	b.ret(retAllow)

	// The kernel declares ioctl's request as unsigned int and truncates
	// the register to it: a request with any upper 32 bits set is still
	// TIOCSTI. So only the low 32 bits are compared.
	b.label("ioctl")
	b.load(argLow(1))
	b.jumpIf(a.tiocsti, "eperm")
	b.jumpIf(a.tioclinux, "eperm")
	b.ret(retAllow)

	if denyNetwork {
		// socket(2)'s domain is an int: the low 32 bits, for the same
		// reason.
		b.label("socket")
		b.load(argLow(0))
		b.jumpIf(unix.AF_INET, "eacces")
		b.jumpIf(unix.AF_INET6, "eacces")
		b.ret(retAllow)
		b.label("eacces")
		b.ret(retEACCES)
	}
	b.label("kill")
	b.ret(retKill)
	b.label("eperm")
	b.ret(retEPERM)
	return b.assemble()
}

// seccompFilter is the filter for this architecture, or an
// *UnavailableError where there is none: the launcher then refuses to
// start anything rather than start it unfiltered.
func seccompFilter(denyNetwork bool) ([]unix.SockFilter, error) {
	a, ok := nativeSeccomp()
	if !ok {
		return nil, &UnavailableError{Reason: "no seccomp filter for " + runtime.GOARCH + " (only amd64 and arm64): the launcher does not start shells it cannot filter"}
	}
	return buildSeccompFilter(a, denyNetwork), nil
}

// installSeccomp installs filter on the calling thread, which must have
// set no_new_privs (so no privilege is needed) and be locked to its
// goroutine: only this thread, and what it execs, is filtered.
func installSeccomp(filter []unix.SockFilter) error {
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return fmt.Errorf("sandbox: install the seccomp filter: %w", errno)
	}
	return nil
}

// bpfProgram assembles a classic BPF program with named jump targets.
type bpfProgram struct {
	insns  []unix.SockFilter
	jumps  map[int][2]string // instruction index: true and false targets ("" for the next)
	labels map[string]int
}

func (b *bpfProgram) emit(code uint16, k uint32, jt, jf string) {
	if jt != "" || jf != "" {
		if b.jumps == nil {
			b.jumps = map[int][2]string{}
		}
		b.jumps[len(b.insns)] = [2]string{jt, jf}
	}
	b.insns = append(b.insns, unix.SockFilter{Code: code, K: k})
}

// load loads the 32-bit word at offset of seccomp_data.
func (b *bpfProgram) load(offset uint32) { b.emit(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offset, "", "") }

// jumpIf jumps to label if the loaded word is k.
func (b *bpfProgram) jumpIf(k uint32, label string) {
	b.emit(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, k, label, "")
}

// jumpUnless jumps to label if the loaded word is not k.
func (b *bpfProgram) jumpUnless(k uint32, label string) {
	b.emit(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, k, "", label)
}

// jumpAtLeast jumps to label if the loaded word is k or more (unsigned).
func (b *bpfProgram) jumpAtLeast(k uint32, label string) {
	b.emit(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, k, label, "")
}

func (b *bpfProgram) ret(k uint32) { b.emit(unix.BPF_RET|unix.BPF_K, k, "", "") }

func (b *bpfProgram) label(name string) {
	if b.labels == nil {
		b.labels = map[string]int{}
	}
	if _, dup := b.labels[name]; dup {
		panic("sandbox: BPF label " + name + " defined twice")
	}
	b.labels[name] = len(b.insns)
}

// assemble resolves the jumps. Targets lie ahead and within 255
// instructions: classic BPF jumps only forward, by an 8-bit offset.
func (b *bpfProgram) assemble() []unix.SockFilter {
	out := append([]unix.SockFilter(nil), b.insns...)
	for i, j := range b.jumps {
		for n, name := range j {
			if name == "" {
				continue
			}
			target, ok := b.labels[name]
			off := target - i - 1
			if !ok || off < 0 || off > 255 {
				panic(fmt.Sprintf("sandbox: BPF jump from %d to %q (%d) is not a forward jump within 255", i, name, target))
			}
			if n == 0 {
				out[i].Jt = uint8(off)
			} else {
				out[i].Jf = uint8(off)
			}
		}
	}
	return out
}
