// Package sandbox confines session shells with Landlock, seccomp and an empty
// capability set (Linux): writes only under the workspace, the devices a
// terminal needs and the paths the user names; the home directory and the
// temporary directories every session shares unreadable except the paths
// the user names; no other terminal than the shell's own. It owns the
// policy, the probe of the kernel and the launcher that applies the policy
// to itself and then executes the shell; it does not start shells (package
// guardian does) or decide whether the sandbox is on (the command does, from
// WINX_SANDBOX).
//
// # Why a launcher
//
// Landlock restricts the calling thread, and a Go process has many threads,
// any of which may fork. So the shell is not started directly: the winx
// binary is started in its place with LauncherArg and the policy (Launcher
// builds that argument vector). RunLauncher locks its goroutine to one thread,
// sets no_new_privs, restricts that thread and replaces the process image with
// the real shell from the same thread. The new image has that single thread
// and inherits its domain, so the shell and everything it ever starts are
// confined from their first instruction. Nothing else in the launcher starts
// a process.
//
// # Every launch
//
// Whatever ruleset it applies, the launcher also, on its thread, before the
// exec:
//
//   - drops every capability: securebits that keep root from regaining any
//     on exec (where it holds CAP_SETPCAP), the bounding set emptied (same),
//     the ambient set cleared, and effective, permitted and inheritable set
//     to zero. With no_new_privs, an exec gains nothing, so a shell started
//     by root holds no capability either: no reading other users' files, no
//     ptrace of non-dumpable processes, no typing into other terminals.
//   - installs a seccomp filter (amd64 and arm64; on other architectures
//     the launcher refuses to start anything): ioctl TIOCSTI and TIOCLINUX
//     fail with EPERM, so nothing can type into a terminal, not even the
//     shell's own, whose input the unconfined user reads next; system calls
//     of another architecture (int $0x80 on amd64) and x32 system calls kill
//     the process; with DenyNetwork, socket(2) for AF_INET and AF_INET6 and
//     io_uring_setup(2) fail with EACCES.
//   - grants its terminal only: the /dev/pts/N its stdin, stdout or stderr
//     is (checked with fstat), and /dev/tty. The other sessions' terminals
//     cannot be opened.
//
// # Policy
//
// Landlock only grants; nothing can be subtracted from a granted tree. The
// policy is built as a union of grants:
//
//   - read and execute on everything under "/" except the holes: the home
//     directory, the shared temporary directories (/tmp, $TMPDIR, /dev/shm:
//     every session and the user's other programs keep files there) and
//     /dev. Every entry of "/" but the ones leading to a hole is granted,
//     then the same is done one level down along the path to the hole, and
//     so on. The directories on such a path ("/", "/home") cannot be listed,
//     because a grant to list a directory would reach into everything
//     beneath it; files and directories next to them stay readable and path
//     lookup through them works.
//   - everything (read, write, create, remove, rename) on the workspace and
//     each WINX_SANDBOX_RW_PATHS entry, even inside a hole (a session's own
//     temporary directory is such an entry).
//   - read on each WINX_SANDBOX_RO_PATHS entry, even inside a hole.
//   - in /dev, read, write and terminal ioctls on the devices a shell needs
//     (null, zero, full, random, urandom, tty and its own terminal), and
//     listing the subdirectories but pts and shm. Raw disks are not
//     readable, so the home directory cannot be read through its block
//     device.
//   - on ABI 6 and later, no signal to a process outside the domain and no
//     connection to an abstract Unix socket outside it.
//   - with WINX_SANDBOX_NETWORK=deny, on ABI 4 and later, no TCP connect or
//     bind (besides the seccomp filter above).
//
// A path that does not exist when the shell starts is not granted.
//
// # Read-only ruleset
//
// An architect session's shell is started with a second ruleset (ReadOnly):
// it handles only the rights that change files (write, create, remove,
// rename/link, truncate, device ioctls) and, on ABI 4 and later, TCP
// connect and bind, and grants write only on /dev/null, /dev/tty and the
// shell's own terminal. Reading and executing stay as they were
// (everywhere, or what the sandbox policy grants when WINX_SANDBOX is on
// too), unless paths are to be hidden (ReadOnlyOptions.Hide): then it also
// handles reading and executing, and grants them everywhere but the hidden
// paths (and /dev, as in the policy), except the readable exceptions. On
// ABI 6 and later the shell may also not signal processes outside its
// domain nor connect to abstract Unix sockets outside it. Descriptors the
// shell inherited (its terminal) are not affected: Landlock checks a file
// when it is opened. /proc is readable; its magic links (/proc/PID/root,
// /proc/PID/fd/N) are checked against the file they lead to, so they do not
// open the home directory.
package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// LauncherArg is the first argument that makes the winx binary act as the
// launcher (RunLauncher) instead of the server.
const LauncherArg = "__sandbox-exec"

// MinABI is the oldest Landlock ABI used: before ABI 3 (Linux 6.2) truncate(2)
// is not confined, so a file in the home directory could still be emptied.
const MinABI = 3

// Environment variables of the sandbox, read once by the command.
const (
	EnvEnable  = "WINX_SANDBOX"          // a boolean (cmd/internal/config.ParseBool) turning the sandbox on
	EnvRWPaths = "WINX_SANDBOX_RW_PATHS" // extra writable paths, ':'-separated
	EnvROPaths = "WINX_SANDBOX_RO_PATHS" // extra readable paths, ':'-separated
	EnvNetwork = "WINX_SANDBOX_NETWORK"  // NetworkAllow (the default when empty) or NetworkDeny
)

// Values of EnvNetwork.
const (
	NetworkAllow = "allow" // IP networking as the system allows it
	NetworkDeny  = "deny"  // no IPv4 or IPv6 socket at all
)

// ErrInvalidPolicy reports a policy that cannot be applied: a relative or
// missing path in the environment, a home directory that cannot be hidden
// (it is "/", or it lies inside a path the policy grants), or a value of
// WINX_SANDBOX_NETWORK other than allow or deny.
var ErrInvalidPolicy = errors.New("sandbox: invalid policy")

// UnavailableError reports why this kernel cannot confine shells. Reason is
// meant for the user as it stands.
type UnavailableError struct {
	Reason string
	ABI    int   // the kernel's Landlock ABI, 0 if none
	Err    error // the system error behind it, if any
}

func (e *UnavailableError) Error() string { return "sandbox: Landlock unavailable: " + e.Reason }
func (e *UnavailableError) Unwrap() error { return e.Err }

// Policy is what a confined shell may touch. All paths are absolute and
// cleaned; PolicyFromEnv also resolves their symbolic links, because Landlock
// grants apply to the file a path finally names.
type Policy struct {
	RW   []string // read, write, create, remove beneath each
	RO   []string // read and execute beneath each
	Home string   // hidden, except for what RW and RO grant inside it
	// Hidden are more directories hidden as Home is, except for what RW and
	// RO grant inside them: the temporary directories every session shares
	// (/tmp, $TMPDIR, /dev/shm). Unlike Home, a grant may hold one.
	Hidden []string
	// DenyNetwork takes IP networking away: no AF_INET or AF_INET6 socket
	// (seccomp), no io_uring, no TCP connect or bind (Landlock ABI 4).
	// Unix sockets and the terminal keep working.
	DenyNetwork bool
}

// PolicyFromEnv builds the policy of a shell whose workspace is workspace
// ("" for none): the workspace writable, HOME, /tmp, $TMPDIR and /dev/shm
// hidden, the extra paths of WINX_SANDBOX_RW_PATHS and
// WINX_SANDBOX_RO_PATHS, and WINX_SANDBOX_NETWORK. Extra paths must be
// absolute and exist; any other entry is an error (ErrInvalidPolicy), so a
// typing mistake does not silently shrink or widen the sandbox. So is a
// grant that is HOME or holds it (a workspace of ~ itself): it would expose
// the directory the sandbox hides. The temporary directories are not
// granted: a session that needs one gets its own as an RW entry.
func PolicyFromEnv(workspace string, getenv func(string) string) (Policy, error) {
	var p Policy
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return Policy{}, fmt.Errorf("%w: HOME %q is not an absolute path, so it cannot be hidden", ErrInvalidPolicy, home)
	}
	home = resolveIfExists(home)
	if home == "/" {
		return Policy{}, fmt.Errorf("%w: HOME is /, hiding it would hide everything", ErrInvalidPolicy)
	}
	p.Home = home
	if workspace != "" {
		ws, err := resolve("workspace", workspace)
		if err != nil {
			return Policy{}, err
		}
		p.RW = append(p.RW, ws)
	}
	// Every session and every other program of the user keeps files in the
	// shared temporary directories; a confined shell reached its
	// neighbours' there.
	p.Hidden = []string{resolveIfExists("/tmp"), resolveIfExists("/dev/shm")}
	if tmp := getenv("TMPDIR"); filepath.IsAbs(tmp) {
		tmp = resolveIfExists(tmp)
		if tmp == "/" {
			return Policy{}, fmt.Errorf("%w: TMPDIR is /, hiding it would hide everything", ErrInvalidPolicy)
		}
		p.Hidden = appendUnique(p.Hidden, tmp)
	}
	switch v := getenv(EnvNetwork); v {
	case "", NetworkAllow:
	case NetworkDeny:
		p.DenyNetwork = true
	default:
		return Policy{}, fmt.Errorf("%w: %s=%q, want %s or %s", ErrInvalidPolicy, EnvNetwork, v, NetworkAllow, NetworkDeny)
	}
	rw, err := pathList(EnvRWPaths, getenv(EnvRWPaths))
	if err != nil {
		return Policy{}, err
	}
	for _, path := range rw {
		p.RW = appendUnique(p.RW, path)
	}
	ro, err := pathList(EnvROPaths, getenv(EnvROPaths))
	if err != nil {
		return Policy{}, err
	}
	for _, path := range ro {
		p.RO = appendUnique(p.RO, path)
	}
	// Landlock grants only add up: a grant on the home directory or on a
	// directory holding it (a workspace of ~, an RW entry of /home) would make
	// the whole home directory reachable, and the sandbox would silently
	// not do what it was asked to.
	for _, g := range slices.Concat(p.RW, p.RO) {
		if g == home || within(home, g) {
			return Policy{}, fmt.Errorf("%w: HOME %s lies inside the granted path %s (the workspace or a %s or %s entry), so it cannot be hidden",
				ErrInvalidPolicy, home, g, EnvRWPaths, EnvROPaths)
		}
	}
	return p, nil
}

// MustHide refuses, with an error wrapping ErrInvalidPolicy, a policy under
// which a confined process could read path: one not inside the hidden home
// directory, or inside a grant (the workspace, a WINX_SANDBOX_RW_PATHS or
// WINX_SANDBOX_RO_PATHS entry). The server keeps
// its wire secret so; a shell that could read it could drive the server's
// processes from inside the sandbox. Symbolic links of path are resolved as
// far as it exists, as the grants' are.
func (p Policy) MustHide(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%w: protected path %q is not absolute", ErrInvalidPolicy, path)
	}
	real := resolveExisting(path)
	if p.Home == "" || !within(real, p.Home) {
		return fmt.Errorf("%w: %s is readable under the sandbox (outside the hidden home directory %s); keep winx's state directory (XDG_STATE_HOME) inside the home directory",
			ErrInvalidPolicy, path, p.Home)
	}
	for _, g := range slices.Concat(p.RW, p.RO) {
		if g == real || within(real, g) {
			return fmt.Errorf("%w: %s lies inside the granted path %s, so a confined shell could read it", ErrInvalidPolicy, path, g)
		}
	}
	return nil
}

// MustNotWrite refuses, with an error wrapping ErrInvalidPolicy, a policy
// under which a confined process could create or remove files in dir: one
// inside a writable grant. The server's socket directory must be so: a
// shell that could replace winxd's socket with its own would receive the
// wire secret from the next adapter that dials it.
func (p Policy) MustNotWrite(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%w: protected directory %q is not absolute", ErrInvalidPolicy, dir)
	}
	real := resolveExisting(dir)
	for _, g := range p.RW {
		if g == real || within(real, g) || within(g, real) {
			return fmt.Errorf("%w: the socket directory %s is writable under the sandbox (granted path %s); set XDG_RUNTIME_DIR or WINX_SOCKET to a directory outside the workspace and the writable paths",
				ErrInvalidPolicy, dir, g)
		}
	}
	return nil
}

// resolveExisting resolves the symbolic links of the longest existing
// prefix of path and appends the rest.
func resolveExisting(path string) string {
	path = filepath.Clean(path)
	var rest []string
	for p := path; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		if p == "/" || p == "." {
			return path
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
}

// pathList parses a ':'-separated list of existing absolute paths; empty
// entries are ignored.
func pathList(name, value string) ([]string, error) {
	var out []string
	for entry := range strings.SplitSeq(value, ":") {
		if entry == "" {
			continue
		}
		path, err := resolve(name, entry)
		if err != nil {
			return nil, err
		}
		out = append(out, path)
	}
	return out, nil
}

// resolve checks that path is absolute and exists and returns it with its
// symbolic links resolved.
func resolve(what, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%w: %s entry %q is not an absolute path", ErrInvalidPolicy, what, path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%w: %s entry %q: %v", ErrInvalidPolicy, what, path, err)
	}
	return real, nil
}

// resolveIfExists resolves the symbolic links of path, or returns it cleaned
// if it cannot.
func resolveIfExists(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return filepath.Clean(path)
}

func appendUnique(list []string, path string) []string {
	if slices.Contains(list, path) {
		return list
	}
	return append(list, path)
}

// Launcher flags that say which rulesets the launcher applies. A launcher
// given neither refuses: it never starts a command unconfined.
const (
	policyFlag   = "--policy"   // the WINX_SANDBOX policy of --home, --hidden, --rw, --ro, --deny-network
	readOnlyFlag = "--readonly" // the read-only ruleset (ReadOnly), with --readonly-hide, --readonly-readable
)

// Launcher flags of the policy and the read-only ruleset, each repeatable
// but the booleans. The read-only ones have their own names because one
// launcher may apply both rulesets.
const (
	homeFlag             = "--home"
	hiddenFlag           = "--hidden"
	rwFlag               = "--rw"
	roFlag               = "--ro"
	denyNetworkFlag      = "--deny-network"
	readOnlyHideFlag     = "--readonly-hide"
	readOnlyReadableFlag = "--readonly-readable"
)

// Launcher returns the argument vector that starts argv confined by p:
// self (the winx binary) in launcher mode, the policy as flags, "--", then
// argv unchanged. argv[0] should be an absolute path; otherwise the launcher
// looks it up in PATH.
func Launcher(self string, p Policy, argv []string) []string {
	out := []string{self, LauncherArg, policyFlag}
	if p.Home != "" {
		out = append(out, homeFlag, p.Home)
	}
	for _, path := range p.Hidden {
		out = append(out, hiddenFlag, path)
	}
	for _, path := range p.RW {
		out = append(out, rwFlag, path)
	}
	for _, path := range p.RO {
		out = append(out, roFlag, path)
	}
	if p.DenyNetwork {
		out = append(out, denyNetworkFlag)
	}
	out = append(out, "--")
	return append(out, argv...)
}

// ReadOnlyOptions are the paths the read-only ruleset hides from reading;
// the zero value hides nothing.
type ReadOnlyOptions struct {
	// Hide are absolute paths that cannot be read, listed or executed
	// (the state directory with the wire secret, other sessions' private
	// directories). With any, the ruleset handles reading and grants it on
	// everything else; /dev is then granted as in the sandbox policy.
	Hide []string
	// Readable are absolute paths inside Hide that stay readable.
	Readable []string
}

// ReadOnly returns the argument vector that starts argv under the read-only
// ruleset: no write, create, remove, rename, truncate or device ioctl
// anywhere but the terminal and /dev/null, no TCP connect or bind where
// the kernel's ABI can deny them (ABI 4), and nothing of o.Hide readable but
// o.Readable. When argv already is a launcher vector of self (Launcher), the
// flags join it, so one launcher applies the sandbox policy first and the
// read-only ruleset on top: stacked Landlock rulesets intersect, so the
// shell gets what both allow. Otherwise argv is wrapped in a launcher that
// applies the read-only ruleset alone.
func ReadOnly(self string, argv []string, o ReadOnlyOptions) []string {
	out := []string{self, LauncherArg, readOnlyFlag}
	for _, path := range o.Hide {
		out = append(out, readOnlyHideFlag, path)
	}
	for _, path := range o.Readable {
		out = append(out, readOnlyReadableFlag, path)
	}
	if len(argv) >= 2 && argv[0] == self && argv[1] == LauncherArg {
		return append(out, argv[2:]...)
	}
	out = append(out, "--")
	return append(out, argv...)
}

// readableTrees returns the paths to grant read on so that everything under
// root is covered except the holes and what lies beneath them. A directory
// with no hole beneath it is granted whole; a directory with a hole beneath
// it is not granted (a grant would reach the hole) and its entries are
// visited instead. list returns the names in a directory that may be
// granted: directories and regular files, never symbolic links, which would
// carry the grant to wherever they point. A directory that cannot be listed
// gets no grant beneath it, which only narrows the sandbox.
func readableTrees(root string, holes []string, list func(dir string) ([]string, error)) []string {
	var out []string
	var visit func(dir string)
	visit = func(dir string) {
		below := false
		for _, h := range holes {
			if h == dir {
				return
			}
			if within(h, dir) {
				below = true
			}
		}
		if !below {
			out = append(out, dir)
			return
		}
		names, err := list(dir)
		if err != nil {
			return
		}
		for _, name := range names {
			visit(filepath.Join(dir, name))
		}
	}
	visit(root)
	return out
}

// within reports whether path lies strictly beneath dir.
func within(path, dir string) bool {
	if dir == "/" {
		return path != "/" && strings.HasPrefix(path, "/")
	}
	return strings.HasPrefix(path, dir+"/")
}
