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
	"slices"
	"strconv"
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

// Devices granted read, write and terminal ioctls besides the shell's own
// terminal; everything else in /dev may not be opened.
//
// /dev/ptmx is not among them. Opening it makes a new pseudo-terminal
// whose slave appears in /dev/pts, which is not granted: the slave could
// not be opened (by path or with TIOCGPTPEER, both checked by Landlock), so
// programs that need a terminal of their own (script, tmux, expect) fail at
// the first step with a plain EACCES instead of half-way; and a confined
// shell cannot use up the system's pseudo-terminals, which every session
// shares (kernel.pty.max).
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// devHoles are the directories of /dev that are not even listed: the other
// sessions' terminals and the shared memory every session uses.
var devHoles = []string{"/dev/pts", "/dev/shm"}

// rule grants access beneath path.
type rule struct {
	path   string
	access uint64
}

// devRules grants what a shell needs in /dev: access on devices and its own
// terminals, and listing the subdirectories of /dev but devHoles.
// /dev itself is not listed, as a grant to list it would reach the holes.
func devRules(terminals []string, access uint64, list func(string) ([]string, error)) []rule {
	var rules []rule
	for _, d := range readableTrees("/dev", devHoles, list) {
		rules = append(rules, rule{d, unix.LANDLOCK_ACCESS_FS_READ_DIR})
	}
	for _, d := range devices {
		rules = append(rules, rule{d, access})
	}
	for _, t := range terminals {
		rules = append(rules, rule{t, access})
	}
	return rules
}

// policyRules lists the grants of p (see the package comment) for a shell
// whose terminals are terminals (ownTerminals). list lists a directory for
// the holes (listGrantable outside tests).
func policyRules(p Policy, terminals []string, list func(string) ([]string, error)) []rule {
	holes := append([]string{"/dev"}, p.Hidden...)
	if p.Home != "" {
		holes = append(holes, p.Home)
	}
	var rules []rule
	for _, t := range readableTrees("/", holes, list) {
		rules = append(rules, rule{t, readRights})
	}
	rules = append(rules, devRules(terminals, deviceRights, list)...)
	for _, path := range p.RW {
		rules = append(rules, rule{path, allRights})
	}
	for _, path := range p.RO {
		rules = append(rules, rule{path, readRights})
	}
	return rules
}

// ownTerminals returns the pseudo-terminals the launcher's stdin, stdout
// and stderr are, as paths (/dev/pts/N): the session's terminal, the only
// one its shell may open again. A descriptor counts only when the path its
// /proc/self/fd link names is the same character device (fstat and stat
// agree), so a link that names a node of another devpts instance, or a
// file that is no terminal, grants nothing. A launcher with no terminal
// (a background command on /dev/null) returns none.
func ownTerminals() []string {
	var out []string
	for fd := 0; fd <= 2; fd++ {
		path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if err != nil || filepath.Clean(path) != path || filepath.Dir(path) != "/dev/pts" {
			continue
		}
		var held, named unix.Stat_t
		if unix.Fstat(fd, &held) != nil || unix.Stat(path, &named) != nil {
			continue
		}
		if held.Mode&unix.S_IFMT != unix.S_IFCHR || named.Mode&unix.S_IFMT != unix.S_IFCHR ||
			held.Rdev != named.Rdev || held.Dev != named.Dev || held.Ino != named.Ino {
			continue
		}
		out = appendUnique(out, path)
	}
	return out
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

// launch is what the launcher's flags ask for.
type launch struct {
	policy, readOnly bool
	p                Policy
	ro               ReadOnlyOptions
	argv             []string
}

// parseLauncher parses the launcher's arguments (after LauncherArg).
func parseLauncher(args []string) (launch, error) {
	fs := flag.NewFlagSet(LauncherArg, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var l launch
	appendTo := func(list *[]string) func(string) error {
		return func(v string) error { *list = append(*list, v); return nil }
	}
	fs.BoolVar(&l.policy, policyFlag[2:], false, "apply the sandbox policy")
	fs.BoolVar(&l.readOnly, readOnlyFlag[2:], false, "apply the read-only ruleset")
	fs.StringVar(&l.p.Home, homeFlag[2:], "", "directory to hide")
	fs.Func(hiddenFlag[2:], "more directories to hide (repeatable)", appendTo(&l.p.Hidden))
	fs.Func(rwFlag[2:], "writable path (repeatable)", appendTo(&l.p.RW))
	fs.Func(roFlag[2:], "readable path (repeatable)", appendTo(&l.p.RO))
	fs.BoolVar(&l.p.DenyNetwork, denyNetworkFlag[2:], false, "no IP networking")
	fs.Func(readOnlyHideFlag[2:], "path the read-only ruleset hides (repeatable)", appendTo(&l.ro.Hide))
	fs.Func(readOnlyReadableFlag[2:], "path the read-only ruleset keeps readable (repeatable)", appendTo(&l.ro.Readable))
	if err := fs.Parse(args); err != nil {
		return launch{}, fmt.Errorf("sandbox: launcher: %w", err)
	}
	l.argv = fs.Args()
	if len(l.argv) == 0 {
		return launch{}, errors.New("sandbox: launcher: no command after the policy")
	}
	for _, path := range slices.Concat([]string{l.p.Home}, l.p.Hidden, l.p.RW, l.p.RO, l.ro.Hide, l.ro.Readable) {
		if path != "" && !filepath.IsAbs(path) {
			return launch{}, fmt.Errorf("%w: launcher path %q is not absolute", ErrInvalidPolicy, path)
		}
	}
	if !l.policy && !l.readOnly {
		return launch{}, fmt.Errorf("%w: the launcher was given no ruleset (%s or %s)", ErrInvalidPolicy, policyFlag, readOnlyFlag)
	}
	// Holes are found by walking their path from "/" (readableTrees), which
	// does not follow symbolic links: a hole named through one would be
	// missed, and the tree it lies in granted whole.
	if l.p.Home != "" {
		l.p.Home = resolveExisting(l.p.Home)
	}
	for i, path := range l.p.Hidden {
		l.p.Hidden[i] = resolveExisting(path)
	}
	for i, path := range l.ro.Hide {
		l.ro.Hide[i] = resolveExisting(path)
	}
	return l, nil
}

// RunLauncher is the launcher's main: args are the arguments after
// LauncherArg (the policy flags, "--", then the command). It confines its own
// thread and replaces the process with the command, so it returns only on
// failure, before anything ran unconfined.
func RunLauncher(args []string) error {
	l, err := parseLauncher(args)
	if err != nil {
		return err
	}
	path := l.argv[0]
	if !strings.Contains(path, "/") {
		found, err := exec.LookPath(path)
		if err != nil {
			return fmt.Errorf("sandbox: launcher: %w", err)
		}
		path = found
	}
	// Everything the thread needs is prepared first: the filter and the
	// rules, which read /proc and list directories.
	filter, err := seccompFilter(l.p.DenyNetwork)
	if err != nil {
		return err
	}
	abi, err := Probe()
	if err != nil {
		return err
	}
	terminals := ownTerminals()
	var policy, readOnly ruleset
	if l.policy {
		policy = policyRuleset(abi, l.p, terminals, listGrantable)
	}
	if l.readOnly {
		readOnly = readOnlyRuleset(abi, terminals, l.ro, listGrantable)
	}
	// Everything from here to the exec happens on this one thread:
	// no_new_privs, the Landlock domain, the capability sets, the
	// securebits and the seccomp filter are per-thread, and the exec'd
	// image inherits them from the thread that calls execve. The thread is
	// never unlocked; on failure the process exits.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: set no_new_privs: %w", err)
	}
	if l.policy {
		if err := restrict(policy); err != nil {
			return err
		}
	}
	if l.readOnly {
		// Second, so that it narrows what the policy granted: stacked
		// domains intersect.
		if err := restrict(readOnly); err != nil {
			return err
		}
	}
	// After Landlock, whose rules are opened with the launcher's own
	// rights (as root, paths in other users' directories).
	if err := dropCapabilities(); err != nil {
		return err
	}
	// Last: nothing after it but the exec.
	if err := installSeccomp(filter); err != nil {
		return err
	}
	err = unix.Exec(path, l.argv, os.Environ())
	return fmt.Errorf("sandbox: exec %s: %w", path, err)
}

// ruleset is a Landlock ruleset to create: the first size bytes of attr,
// then rules.
type ruleset struct {
	attr  unix.LandlockRulesetAttr
	size  uintptr
	rules []rule
}

// setScope sets the network and scope fields of r for a kernel of ABI abi:
// TCP connect and bind handled (with no port rule: every one denied) when
// denyTCP, and on ABI 6 and later no signal to processes outside the
// domain (the guardian, the user's other programs) nor connection to their
// abstract Unix sockets. size grows to the last field in use: the kernel
// accepts a prefix of the structure, so kernels of every ABI read what
// they know, and a zero field handles nothing.
func (r *ruleset) setScope(abi int, denyTCP bool) {
	r.size = unsafe.Offsetof(r.attr.Handled_access_fs) + unsafe.Sizeof(r.attr.Handled_access_fs)
	if denyTCP && abi >= 4 {
		r.attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		r.size = unsafe.Offsetof(r.attr.Handled_access_net) + unsafe.Sizeof(r.attr.Handled_access_net)
	}
	if abi >= 6 {
		r.attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		r.size = unsafe.Offsetof(r.attr.Scoped) + unsafe.Sizeof(r.attr.Scoped)
	}
}

// policyRuleset is the sandbox policy p as a ruleset for a kernel of ABI
// abi and a shell whose terminals are terminals (ownTerminals).
func policyRuleset(abi int, p Policy, terminals []string, list func(string) ([]string, error)) ruleset {
	var r ruleset
	r.attr.Handled_access_fs = handledRights(abi)
	r.setScope(abi, p.DenyNetwork)
	r.rules = policyRules(p, terminals, list)
	return r
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
// /dev/tty and the shell's own terminal: enough for `> /dev/null` (O_TRUNC)
// and a program that opens the terminal itself and sets its modes.
const terminalRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
	unix.LANDLOCK_ACCESS_FS_TRUNCATE |
	unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

// hideRights are what the read-only ruleset handles besides writeRights
// when it hides paths.
const hideRights = unix.LANDLOCK_ACCESS_FS_READ_FILE |
	unix.LANDLOCK_ACCESS_FS_READ_DIR |
	unix.LANDLOCK_ACCESS_FS_EXECUTE |
	unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX

// readOnlyRuleset is the read-only ruleset for a kernel of ABI abi and a
// shell whose terminals are terminals (see the package comment). list
// lists a directory for the holes of o.Hide.
func readOnlyRuleset(abi int, terminals []string, o ReadOnlyOptions, list func(string) ([]string, error)) ruleset {
	var r ruleset
	r.attr.Handled_access_fs = handledRights(abi) & writeRights
	// An architect shell connects nowhere over TCP, whatever the policy.
	r.setScope(abi, true)
	for _, d := range append([]string{"/dev/null", "/dev/tty"}, terminals...) {
		r.rules = append(r.rules, rule{d, terminalRights})
	}
	if len(o.Hide) == 0 {
		return r
	}
	// Reading is handled too, so it is granted on everything but the
	// hidden paths, and in /dev as in the sandbox policy, read only.
	r.attr.Handled_access_fs |= handledRights(abi) & hideRights
	for _, t := range readableTrees("/", append([]string{"/dev"}, o.Hide...), list) {
		r.rules = append(r.rules, rule{t, readRights})
	}
	r.rules = append(r.rules, devRules(terminals, unix.LANDLOCK_ACCESS_FS_READ_FILE, list)...)
	for _, path := range o.Readable {
		r.rules = append(r.rules, rule{path, readRights})
	}
	return r
}

// restrict creates r and confines the calling thread with it. The caller
// must have set no_new_privs and locked its goroutine to the thread.
func restrict(r ruleset) error {
	handled := r.attr.Handled_access_fs
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&r.attr)), r.size, 0)
	if errno != 0 {
		return fmt.Errorf("sandbox: landlock_create_ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)
	for _, rl := range r.rules {
		if err := addRule(ruleset, rl, handled); err != nil {
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
