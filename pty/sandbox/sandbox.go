// Package sandbox confines session shells with Landlock (Linux): writes only
// under the workspace, the temporary directory, the devices a terminal needs
// and the paths the user names; the home directory unreadable except the
// paths the user names. It owns the policy, the probe of the kernel and the
// launcher that applies the policy to itself and then executes the shell; it
// does not start shells (package guardian does) or decide whether the sandbox
// is on (the command does, from WINX_SANDBOX).
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
// # Policy
//
// Landlock only grants; nothing can be subtracted from a granted tree. The
// policy is built as a union of grants:
//
//   - read and execute on everything under "/" except the home directory and
//     /dev: every entry of "/" but the one leading to the home directory (and
//     /dev) is granted, then the same is done one level down along the path to
//     the home directory, and so on. The directories on that path ("/",
//     "/home") cannot be listed, because a grant to list a directory would
//     reach into everything beneath it; files and directories next to them
//     stay readable and path lookup through them works.
//   - everything (read, write, create, remove, rename) on the workspace, /tmp,
//     $TMPDIR and each WINX_SANDBOX_RW_PATHS entry, even inside the home
//     directory.
//   - read on each WINX_SANDBOX_RO_PATHS entry, even inside the home
//     directory.
//   - on /dev, listing only; read, write and terminal ioctls on the devices a
//     shell needs (null, zero, full, random, urandom, tty, ptmx, pts/*), and
//     everything on /dev/shm. Raw disks are not readable, so the home
//     directory cannot be read through its block device.
//
// A path that does not exist when the shell starts is not granted.
//
// # Read-only ruleset
//
// An architect session's shell is started with a second ruleset (ReadOnly):
// it handles only the rights that change files (write, create, remove,
// rename/link, truncate, device ioctls) and, on ABI 4 and later, TCP
// connect and bind, and grants write only on /dev/null, /dev/tty and
// /dev/pts. Reading and executing stay as they were (everywhere, or what the
// sandbox policy grants when WINX_SANDBOX is on too). On ABI 6 and later the
// shell may also not signal processes outside its domain nor connect to
// abstract Unix sockets outside it. Descriptors the shell inherited (its
// terminal) are not affected: Landlock checks a file when it is opened.
// /proc is readable; its magic links (/proc/PID/root, /proc/PID/fd/N) are
// checked against the file they lead to, so they do not open the home
// directory.
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
)

// ErrInvalidPolicy reports a policy that cannot be applied: a relative or
// missing path in the environment, or a home directory that cannot be hidden
// (it is "/", or it lies inside a path the policy grants).
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
}

// PolicyFromEnv builds the policy of a shell whose workspace is workspace
// ("" for none): the workspace, /tmp and $TMPDIR writable, HOME hidden, and
// the extra paths of WINX_SANDBOX_RW_PATHS and WINX_SANDBOX_RO_PATHS. Extra
// paths must be absolute and exist; any other entry is an error
// (ErrInvalidPolicy), so a typing mistake does not silently shrink or widen
// the sandbox. So is a grant that is HOME or holds it (a workspace of ~
// itself, HOME under /tmp): it would expose the directory the sandbox hides.
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
	p.RW = appendUnique(p.RW, resolveIfExists("/tmp"))
	if tmp := getenv("TMPDIR"); filepath.IsAbs(tmp) {
		// Session rc files live there; the shell must read them.
		p.RW = appendUnique(p.RW, resolveIfExists(tmp))
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
	// directory holding it (a workspace of ~, HOME under /tmp) would make
	// the whole home directory reachable, and the sandbox would silently
	// not do what it was asked to.
	for _, g := range slices.Concat(p.RW, p.RO) {
		if g == home || within(home, g) {
			return Policy{}, fmt.Errorf("%w: HOME %s lies inside the granted path %s (the workspace, /tmp, $TMPDIR or a %s or %s entry), so it cannot be hidden",
				ErrInvalidPolicy, home, g, EnvRWPaths, EnvROPaths)
		}
	}
	return p, nil
}

// MustHide refuses, with an error wrapping ErrInvalidPolicy, a policy under
// which a confined process could read path: one not inside the hidden home
// directory, or inside a grant (the workspace, /tmp, $TMPDIR, an
// WINX_SANDBOX_RW_PATHS or WINX_SANDBOX_RO_PATHS entry). The server keeps
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
			return fmt.Errorf("%w: the socket directory %s is writable under the sandbox (granted path %s); set XDG_RUNTIME_DIR or WINX_SOCKET to a directory outside /tmp, $TMPDIR and the writable paths",
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
	policyFlag   = "--policy"   // the WINX_SANDBOX policy of --home, --rw, --ro
	readOnlyFlag = "--readonly" // the read-only ruleset (ReadOnly)
)

// Launcher returns the argument vector that starts argv confined by p:
// self (the winx binary) in launcher mode, the policy as flags, "--", then
// argv unchanged. argv[0] should be an absolute path; otherwise the launcher
// looks it up in PATH.
func Launcher(self string, p Policy, argv []string) []string {
	out := []string{self, LauncherArg, policyFlag}
	if p.Home != "" {
		out = append(out, "--home", p.Home)
	}
	for _, path := range p.RW {
		out = append(out, "--rw", path)
	}
	for _, path := range p.RO {
		out = append(out, "--ro", path)
	}
	out = append(out, "--")
	return append(out, argv...)
}

// ReadOnly returns the argument vector that starts argv under the read-only
// ruleset: no write, create, remove, rename, truncate or device ioctl
// anywhere but the terminal and /dev/null, and no TCP connect or bind where
// the kernel's ABI can deny them (ABI 4). When argv already is a launcher
// vector of self (Launcher), the flag joins it, so one launcher applies the
// sandbox policy first and the read-only ruleset on top: stacked Landlock
// rulesets intersect, so the shell gets what both allow. Otherwise argv is
// wrapped in a launcher that applies the read-only ruleset alone.
func ReadOnly(self string, argv []string) []string {
	if len(argv) >= 2 && argv[0] == self && argv[1] == LauncherArg {
		out := []string{self, LauncherArg, readOnlyFlag}
		return append(out, argv[2:]...)
	}
	out := []string{self, LauncherArg, readOnlyFlag, "--"}
	return append(out, argv...)
}

// readableTrees returns the paths to grant read on so that everything under
// "/" is covered except the holes and what lies beneath them. A directory
// with no hole beneath it is granted whole; a directory with a hole beneath
// it is not granted (a grant would reach the hole) and its entries are
// visited instead. list returns the names in a directory that may be
// granted: directories and regular files, never symbolic links, which would
// carry the grant to wherever they point. A directory that cannot be listed
// gets no grant beneath it, which only narrows the sandbox.
func readableTrees(holes []string, list func(dir string) ([]string, error)) []string {
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
	visit("/")
	return out
}

// within reports whether path lies strictly beneath dir.
func within(path, dir string) bool {
	if dir == "/" {
		return path != "/" && strings.HasPrefix(path, "/")
	}
	return strings.HasPrefix(path, dir+"/")
}
