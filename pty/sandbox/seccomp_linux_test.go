//go:build linux

package sandbox

import (
	"encoding/binary"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// seccompData is struct seccomp_data as the kernel lays it out for a
// little-endian architecture.
type seccompData struct {
	nr   uint32
	arch uint32
	args [6]uint64
}

func (d seccompData) bytes() []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], d.nr)
	binary.LittleEndian.PutUint32(b[4:], d.arch)
	for i, a := range d.args {
		binary.LittleEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

// runBPF interprets the classic BPF instructions the filter uses, as the
// kernel would, and returns the filter's result for d.
func runBPF(t *testing.T, prog []unix.SockFilter, d seccompData) uint32 {
	t.Helper()
	data := d.bytes()
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if in.K%4 != 0 || int(in.K)+4 > len(data) {
				t.Fatalf("instruction %d loads offset %d", pc, in.K)
			}
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			if acc == in.K {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			if acc >= in.K {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: unexpected code %#x", pc, in.Code)
		}
	}
	t.Fatalf("the program ran off its end")
	return 0
}

// filterCase is a system call and the filter's result for it.
type filterCase struct {
	name string
	deny bool // network denied
	d    seccompData
	want uint32
}

func TestSeccompFilterProgram(t *testing.T) {
	const i386 = 0x40000003 // AUDIT_ARCH_I386
	const arm = 0x40000028  // AUDIT_ARCH_ARM
	for _, a := range []seccompArch{amd64Seccomp(), arm64Seccomp()} {
		tests := []filterCase{
			{"getpid", false, seccompData{nr: 39, arch: a.audit}, retAllow},
			{"ioctl TIOCSTI", false, seccompData{nr: a.ioctl, arch: a.audit, args: [6]uint64{0, uint64(a.tiocsti)}}, retEPERM},
			{"ioctl TIOCSTI, upper bits set", false, seccompData{nr: a.ioctl, arch: a.audit, args: [6]uint64{0, 0xdead_beef_0000_0000 | uint64(a.tiocsti)}}, retEPERM},
			{"ioctl TIOCLINUX", false, seccompData{nr: a.ioctl, arch: a.audit, args: [6]uint64{0, uint64(a.tioclinux)}}, retEPERM},
			{"ioctl TIOCGWINSZ", false, seccompData{nr: a.ioctl, arch: a.audit, args: [6]uint64{0, unix.TIOCGWINSZ}}, retAllow},
			{"ioctl with TIOCSTI as the fd", false, seccompData{nr: a.ioctl, arch: a.audit, args: [6]uint64{uint64(a.tiocsti), 0}}, retAllow},
			{"i386 ioctl TIOCSTI", false, seccompData{nr: 54, arch: i386, args: [6]uint64{0, uint64(a.tiocsti)}}, retKill},
			{"i386 getpid", false, seccompData{nr: 20, arch: i386}, retKill},
			{"arm getpid", false, seccompData{nr: 20, arch: arm}, retKill},
			{"socket AF_INET allowed", false, seccompData{nr: a.socket, arch: a.audit, args: [6]uint64{unix.AF_INET}}, retAllow},
			{"io_uring_setup allowed", false, seccompData{nr: a.ioUringSetup, arch: a.audit}, retAllow},
			{"socket AF_INET denied", true, seccompData{nr: a.socket, arch: a.audit, args: [6]uint64{unix.AF_INET}}, retEACCES},
			{"socket AF_INET6 denied", true, seccompData{nr: a.socket, arch: a.audit, args: [6]uint64{unix.AF_INET6}}, retEACCES},
			{"socket AF_INET6, upper bits set", true, seccompData{nr: a.socket, arch: a.audit, args: [6]uint64{1<<32 | unix.AF_INET6}}, retEACCES},
			{"socket AF_UNIX", true, seccompData{nr: a.socket, arch: a.audit, args: [6]uint64{unix.AF_UNIX}}, retAllow},
			{"socket AF_NETLINK", true, seccompData{nr: a.socket, arch: a.audit, args: [6]uint64{unix.AF_NETLINK}}, retAllow},
			{"io_uring_setup denied", true, seccompData{nr: a.ioUringSetup, arch: a.audit}, retEACCES},
			{"ioctl TIOCSTI with network denied", true, seccompData{nr: a.ioctl, arch: a.audit, args: [6]uint64{0, uint64(a.tiocsti)}}, retEPERM},
		}
		if a.x32Bit != 0 {
			tests = append(tests,
				filterCase{"x32 getpid", false, seccompData{nr: a.x32Bit | 39, arch: a.audit}, retKill},
				filterCase{"x32 ioctl", true, seccompData{nr: a.x32Bit | 16, arch: a.audit, args: [6]uint64{0, uint64(a.tiocsti)}}, retKill})
		}
		for _, tc := range tests {
			prog := buildSeccompFilter(a, tc.deny)
			if got := runBPF(t, prog, tc.d); got != tc.want {
				t.Errorf("%s: %s (deny network %v) = %#x, want %#x", a.name, tc.name, tc.deny, got, tc.want)
			}
		}
	}
}

// TestNativeSeccomp checks the hand-written numbers against the system's.
func TestNativeSeccomp(t *testing.T) {
	a, ok := nativeSeccomp()
	switch runtime.GOARCH {
	case "amd64", "arm64":
	default:
		if ok {
			t.Errorf("nativeSeccomp on %s = %+v, want none", runtime.GOARCH, a)
		}
		if _, err := seccompFilter(false); err == nil || !strings.Contains(err.Error(), runtime.GOARCH) {
			t.Errorf("seccompFilter on %s = %v, want an error naming the architecture", runtime.GOARCH, err)
		}
		return
	}
	if !ok || a.name != runtime.GOARCH {
		t.Fatalf("nativeSeccomp = %+v, %v; want %s", a, ok, runtime.GOARCH)
	}
	for _, c := range []struct {
		name      string
		got, want uint32
	}{
		{"ioctl", a.ioctl, unix.SYS_IOCTL},
		{"socket", a.socket, unix.SYS_SOCKET},
		{"io_uring_setup", a.ioUringSetup, unix.SYS_IO_URING_SETUP},
		{"TIOCSTI", a.tiocsti, unix.TIOCSTI},
		{"TIOCLINUX", a.tioclinux, unix.TIOCLINUX},
	} {
		if c.got != c.want {
			t.Errorf("%s: %s = %#x, want %#x", a.name, c.name, c.got, c.want)
		}
	}
	want := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	if a.audit != want {
		t.Errorf("audit arch = %#x, want %#x", a.audit, want)
	}
}

// TestSeccompRefusesForeignSystemCalls runs, in confined shells under both
// rulesets, a program that calls getpid through the i386 entry (int $0x80)
// and through the x32 table, and one that types into its own terminal: the
// first two are killed (SIGSYS, status 159), the last gets EPERM.
func TestSeccompRefusesForeignSystemCalls(t *testing.T) {
	requireLandlock(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the foreign system call entries tested are amd64's")
	}
	bin := attackBin(t)
	home := sharedDir(t, "winx-seccomp-home-")
	script := `"$BIN" ` + helperArg + ` int80; echo "int80 status $?"
"$BIN" ` + helperArg + ` x32; echo "x32 status $?"
"$BIN" ` + helperArg + ` tiocsti-self`
	for _, pr := range confinementProfiles(Policy{Home: home}) {
		out, err := runOnPTY(t, pr.argv(bin, []string{"/bin/bash", "-c", script}), launcherEnviron("BIN="+bin, "HOME="+home), identity{})
		if err == nil {
			t.Errorf("%s: the script's last command succeeded:\n%s", pr.name, out)
		}
		for _, want := range []string{"int80 status 159", "x32 status 159", "tiocsti: operation not permitted"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", pr.name, want, out)
			}
		}
		if strings.Contains(out, "getpid:") || strings.Contains(out, "self-injected") {
			t.Errorf("%s: a refused system call ran:\n%s", pr.name, out)
		}
	}
}
