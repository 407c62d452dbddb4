//go:build linux

package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Filesystem access rights (Linux UAPI, include/uapi/linux/landlock.h) by
// the ABI that introduced them.
const (
	// abi1Rights are the rights of Landlock's first ABI (Linux 5.13).
	abi1Rights = unix.LANDLOCK_ACCESS_FS_EXECUTE |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM

	// readRights are granted on readable trees. Connecting to a named Unix
	// socket (ABI 9) goes with them: sockets outside the home directory stay
	// reachable as they were, those inside it do not.
	readRights = unix.LANDLOCK_ACCESS_FS_EXECUTE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX

	// deviceRights are granted on the few device nodes a shell needs.
	// Truncate is among them because `> /dev/null` opens with O_TRUNC.
	deviceRights = unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	// fileRights are the only rights a rule on a non-directory may carry.
	fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	// allRights is everything any known ABI can handle; a rule granting it
	// is masked down to what the kernel handles.
	allRights = abi1Rights |
		unix.LANDLOCK_ACCESS_FS_REFER |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV |
		unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
)

// handledRights are the filesystem rights a kernel of Landlock ABI abi
// understands; all of them are handled, so anything not granted is denied.
func handledRights(abi int) uint64 {
	h := uint64(abi1Rights)
	if abi >= 2 {
		// Without REFER handled (ABI 1), every rename or link across
		// directories is denied; with it, only those that would widen a
		// file's rights are.
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= 9 {
		h |= unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	}
	return h
}

// Devices granted read, write and terminal ioctls; everything else in /dev
// may only be listed.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// rule grants access beneath path.
type rule struct {
	path   string
	access uint64
}

// policyRules lists the grants of p (see the package comment). list lists a
// directory for the home exclusion (listGrantable outside tests).
func policyRules(p Policy, list func(string) ([]string, error)) []rule {
	holes := []string{"/dev"}
	if p.Home != "" {
		holes = append(holes, p.Home)
	}
	var rules []rule
	for _, t := range readableTrees(holes, list) {
		rules = append(rules, rule{t, readRights})
	}
	rules = append(rules, rule{"/dev", unix.LANDLOCK_ACCESS_FS_READ_DIR})
	for _, d := range devices {
		rules = append(rules, rule{d, deviceRights})
	}
	rules = append(rules,
		rule{"/dev/pts", deviceRights | unix.LANDLOCK_ACCESS_FS_READ_DIR},
		rule{"/dev/shm", allRights})
	for _, path := range p.RW {
		rules = append(rules, rule{path, allRights})
	}
	for _, path := range p.RO {
		rules = append(rules, rule{path, readRights})
	}
	return rules
}

// listGrantable lists the directories and regular files in dir.
func listGrantable(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if t := e.Type(); t.IsDir() || t.IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Probe returns the kernel's Landlock ABI version, or an *UnavailableError
// saying exactly why shells cannot be confined here.
func Probe() (abi int, err error) {
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, &UnavailableError{Reason: probeReason(errno), Err: errno}
	}
	abi = int(r)
	if abi < MinABI {
		return abi, &UnavailableError{
			ABI:    abi,
			Reason: fmt.Sprintf("the kernel's Landlock ABI %d is older than ABI %d (Linux 6.2), the first to confine truncate(2)", abi, MinABI),
		}
	}
	return abi, nil
}

// probeReason explains an error of landlock_create_ruleset(2).
func probeReason(errno unix.Errno) string {
	switch errno {
	case unix.ENOSYS:
		return "the kernel has no Landlock system calls (built without CONFIG_SECURITY_LANDLOCK, or older than Linux 5.13)"
	case unix.EOPNOTSUPP:
		return "Landlock is built into the kernel but disabled at boot (landlock is not in the lsm= boot parameter)"
	case unix.EPERM:
		return "landlock_create_ruleset(2) is forbidden here (a seccomp filter, such as a container runtime's, blocks it)"
	}
	return "landlock_create_ruleset(2): " + errno.Error()
}

// RunLauncher is the launcher's main: args are the arguments after
// LauncherArg (the policy flags, "--", then the command). It confines its own
// thread and replaces the process with the command, so it returns only on
// failure, before anything ran unconfined.
func RunLauncher(args []string) error {
	fs := flag.NewFlagSet(LauncherArg, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var p Policy
	var withPolicy, readOnly bool
	fs.BoolVar(&withPolicy, policyFlag[2:], false, "apply the sandbox policy")
	fs.BoolVar(&readOnly, readOnlyFlag[2:], false, "apply the read-only ruleset")
	fs.StringVar(&p.Home, "home", "", "directory to hide")
	fs.Func("rw", "writable path (repeatable)", func(v string) error { p.RW = append(p.RW, v); return nil })
	fs.Func("ro", "readable path (repeatable)", func(v string) error { p.RO = append(p.RO, v); return nil })
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("sandbox: launcher: %w", err)
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return errors.New("sandbox: launcher: no command after the policy")
	}
	for _, path := range append(append([]string{p.Home}, p.RW...), p.RO...) {
		if path != "" && !filepath.IsAbs(path) {
			return fmt.Errorf("%w: launcher path %q is not absolute", ErrInvalidPolicy, path)
		}
	}
	if !withPolicy && !readOnly {
		return fmt.Errorf("%w: the launcher was given no ruleset (%s or %s)", ErrInvalidPolicy, policyFlag, readOnlyFlag)
	}
	path := argv[0]
	if !strings.Contains(path, "/") {
		found, err := exec.LookPath(path)
		if err != nil {
			return fmt.Errorf("sandbox: launcher: %w", err)
		}
		path = found
	}
	var rules []rule
	if withPolicy {
		rules = policyRules(p, listGrantable)
	}
	// Everything from here to the exec happens on this one thread: no_new_privs
	// and the Landlock domain are per-thread, and the exec'd image inherits
	// them from the thread that calls execve. The thread is never unlocked;
	// on failure the process exits.
	runtime.LockOSThread()
	if withPolicy {
		if err := restrictThread(rules); err != nil {
			return err
		}
	}
	if readOnly {
		// Second, so that it narrows what the policy granted: stacked
		// domains intersect.
		if err := restrictReadOnly(); err != nil {
			return err
		}
	}
	err := unix.Exec(path, argv, os.Environ())
	return fmt.Errorf("sandbox: exec %s: %w", path, err)
}

// restrictThread confines the calling thread to rules. The caller must have
// locked its goroutine to the thread.
func restrictThread(rules []rule) error {
	abi, err := Probe()
	if err != nil {
		return err
	}
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handledRights(abi)}
	// Only the filesystem field is passed: the kernel accepts a prefix of the
	// structure, so kernels of every ABI read the same thing.
	return restrict(&attr, unsafe.Offsetof(attr.Handled_access_fs)+unsafe.Sizeof(attr.Handled_access_fs), rules)
}

// writeRights are the filesystem rights that change something: the rights
// the read-only ruleset handles (as far as the kernel knows them).
const writeRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
	unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
	unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
	unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
	unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
	unix.LANDLOCK_ACCESS_FS_MAKE_REG |
	unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
	unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
	unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
	unix.LANDLOCK_ACCESS_FS_MAKE_SYM |
	unix.LANDLOCK_ACCESS_FS_REFER |
	unix.LANDLOCK_ACCESS_FS_TRUNCATE |
	unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

// terminalRights are what the read-only ruleset grants on /dev/null,
// /dev/tty and /dev/pts: enough for `> /dev/null` (O_TRUNC) and a program
// that opens the terminal itself and sets its modes.
const terminalRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
	unix.LANDLOCK_ACCESS_FS_TRUNCATE |
	unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

// readOnlyRuleset is the read-only ruleset for a kernel of ABI abi (see the
// package comment): the handled rights and the attribute size to pass.
func readOnlyRuleset(abi int) (attr unix.LandlockRulesetAttr, size uintptr, rules []rule) {
	attr.Handled_access_fs = handledRights(abi) & writeRights
	size = unsafe.Offsetof(attr.Handled_access_fs) + unsafe.Sizeof(attr.Handled_access_fs)
	if abi >= 4 {
		// Handled with no port rule: every TCP connect and bind is denied.
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		size = unsafe.Offsetof(attr.Handled_access_net) + unsafe.Sizeof(attr.Handled_access_net)
	}
	if abi >= 6 {
		// Nor signal processes outside the domain (the guardian, the
		// user's other programs) or reach their abstract Unix sockets.
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		size = unsafe.Offsetof(attr.Scoped) + unsafe.Sizeof(attr.Scoped)
	}
	for _, d := range []string{"/dev/null", "/dev/tty", "/dev/pts"} {
		rules = append(rules, rule{d, terminalRights})
	}
	return attr, size, rules
}

// restrictReadOnly confines the calling thread with the read-only ruleset.
// The caller must have locked its goroutine to the thread.
func restrictReadOnly() error {
	abi, err := Probe()
	if err != nil {
		return err
	}
	attr, size, rules := readOnlyRuleset(abi)
	return restrict(&attr, size, rules)
}

// restrict creates a ruleset from the first size bytes of attr, adds rules
// and confines the calling thread with it, after setting no_new_privs.
func restrict(attr *unix.LandlockRulesetAttr, size uintptr, rules []rule) error {
	handled := attr.Handled_access_fs
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: set no_new_privs: %w", err)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("sandbox: landlock_create_ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)
	for _, r := range rules {
		if err := addRule(ruleset, r, handled); err != nil {
			return err
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", errno)
	}
	return nil
}

// addRule adds one grant. A path that cannot be opened is not granted: a
// missing grant only narrows the sandbox.
func addRule(ruleset int, r rule, handled uint64) error {
	fd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("sandbox: stat %s: %w", r.path, err)
	}
	access := r.access & handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("sandbox: landlock_add_rule %s: %w", r.path, errno)
	}
	return nil
}
