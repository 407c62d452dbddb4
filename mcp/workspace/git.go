package workspace

// Git queries. Every one runs with an environment that cannot point git at
// another repository, a timeout, a bound on what is kept of its output, and
// configuration that keeps git from running any program that the
// repository or the user names.
//
// Git runs programs from configuration in many places: clean, smudge and
// process filters (chosen per path by .gitattributes, named in config),
// core.fsmonitor, hooks, the pager, textconv and external diff drivers,
// credential helpers, askpass, ssh and remote helpers. None can be switched
// off wholesale, and the repository's own .git/config is always read, so
// the layers are:
//
//   - no system or global configuration (GIT_CONFIG_NOSYSTEM,
//     GIT_CONFIG_GLOBAL=/dev/null, HOME and XDG_CONFIG_HOME pointed at
//     /dev/null for a git that predates GIT_CONFIG_GLOBAL), no system
//     attributes (GIT_ATTR_NOSYSTEM);
//   - command-scope configuration, which wins over the repository's, that
//     empties every program git could take from config: fixed keys
//     (gitNeutral) and, for every filter, diff and merge driver the
//     repository's configuration names, that driver's programs (a driver is
//     only a name in .gitattributes; its programs exist only in config, so
//     listing config finds every one). It is passed as GIT_CONFIG_KEY_n /
//     GIT_CONFIG_VALUE_n pairs, so a driver name containing "=" cannot
//     split a key;
//   - no transport at all (GIT_ALLOW_PROTOCOL empty), so no lazy fetch of a
//     partial clone can start ssh, a remote helper or a credential helper;
//   - options on each command: --no-pager; --no-ext-diff and
//     --no-textconv on diffs; submodules not entered (a submodule's config
//     names drivers of its own).
//
// A git older than 2.31 ignores GIT_CONFIG_KEY_n (the listing notices: a
// probe key set that way is missing from it): it is not run at all
// (ErrGitTooOld), and the overview falls back to walking the tree.
//
// What remains: the repository's configuration is listed once per
// operation (an overview, a saved context's diffs), just before its
// commands, so a writer changing it in between could add a driver that a
// command then runs. Only someone who can already write .git/config can do
// that.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxGitListBytes bounds what git ls-files may write before the rest is
// ignored.
const maxGitListBytes = 4 << 20

// maxGitConfigBytes bounds the listing of driver names; maxGitDrivers the
// drivers neutralised. A repository beyond either is not queried
// (ErrGitConfig): fail closed rather than run a driver left out.
const (
	maxGitConfigBytes = 64 << 10
	maxGitDrivers     = 256
)

// ErrGitTooOld: the installed git ignores GIT_CONFIG_KEY_n (before 2.31),
// so its configuration cannot be controlled and it is not run.
var ErrGitTooOld = errors.New("workspace: git is older than 2.31; not run")

// gitProbeKey is set in command scope when the drivers are listed: a git
// that does not list it back ignores command-scope configuration.
const gitProbeKey = "winx.probe"

// ErrGitConfig: the repository's configuration could not be listed, or names
// more drivers than maxGitDrivers, so git is not run.
var ErrGitConfig = errors.New("workspace: git configuration not checked; not run")

// gitNeutral is the fixed command-scope configuration of every git call:
// each key that names a program is emptied or switched off.
var gitNeutral = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"core.pager", "cat"},
	{"core.askPass", ""},
	{"core.sshCommand", ""},
	{"core.editor", ":"},
	{"credential.helper", ""}, // an empty value resets the list
	{"diff.external", ""},
	{"diff.submodule", "short"},
	{"status.submoduleSummary", "false"},
	{"submodule.recurse", "false"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
	{"protocol.allow", "never"},
	{"core.quotepath", "off"},
}

// driverPrograms are the keys of a filter, diff or merge driver that name a
// program, with the value that disables each.
var driverPrograms = map[string][][2]string{
	"filter": {{"clean", ""}, {"smudge", ""}, {"process", ""}, {"required", "false"}},
	"diff":   {{"textconv", ""}, {"command", ""}},
	"merge":  {{"driver", ""}},
}

// gitEnv is the environment of the git commands: the process's, without
// GIT_* variables that could point git at another repository or name a
// program, without the user's configuration, with no optional locks (a
// status must not block the user's own git), prompts or transports.
func gitEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "HOME=") ||
			strings.HasPrefix(kv, "XDG_CONFIG_HOME=") || strings.HasPrefix(kv, "SSH_ASKPASS=") ||
			strings.HasPrefix(kv, "PAGER=")
	})
	return append(env,
		"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
		"HOME=/dev/null", "XDG_CONFIG_HOME=/dev/null",
		"GIT_PAGER=cat", "PAGER=cat", "GIT_ALLOW_PROTOCOL=", "GIT_NO_LAZY_FETCH=1",
	)
}

// gitDriverNames lists the filter, diff and merge drivers the configuration
// git reads in dir defines, as {kind, name} pairs.
func gitDriverNames(ctx context.Context, dir string) ([][2]string, error) {
	cmd := exec.CommandContext(ctx, "git", "--no-pager", "config", "-z", "--name-only", "--get-regexp",
		`^((filter|diff|merge)\.|`+strings.ReplaceAll(gitProbeKey, ".", `\.`)+`$)`)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0="+gitProbeKey, "GIT_CONFIG_VALUE_0=1")
	cmd.WaitDelay = time.Second
	out := &cappedBuffer{limit: maxGitConfigBytes}
	cmd.Stdout = out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrGitConfig, err)
	}
	if out.truncated {
		return nil, fmt.Errorf("%w: configuration listing over %d bytes", ErrGitConfig, maxGitConfigBytes)
	}
	seen := map[[2]string]bool{}
	var drivers [][2]string
	probed := false
	for key := range strings.SplitSeq(out.buf.String(), "\x00") {
		key = strings.TrimSuffix(key, "\n")
		if key == gitProbeKey {
			probed = true
			continue
		}
		kind, rest, ok := strings.Cut(key, ".")
		dot := strings.LastIndexByte(rest, '.')
		if !ok || dot < 0 {
			continue // a key without a subsection names no driver
		}
		d := [2]string{strings.ToLower(kind), rest[:dot]}
		if seen[d] {
			continue
		}
		seen[d] = true
		drivers = append(drivers, d)
	}
	if !probed {
		return nil, ErrGitTooOld
	}
	if len(drivers) > maxGitDrivers {
		return nil, fmt.Errorf("%w: %d drivers configured", ErrGitConfig, len(drivers))
	}
	return drivers, nil
}

// gitCommandEnv is gitEnv plus the command-scope configuration that
// neutralises gitNeutral's keys and every driver in drivers.
func gitCommandEnv(drivers [][2]string) []string {
	var pairs [][2]string
	pairs = append(pairs, gitNeutral...)
	for _, d := range drivers {
		for _, kv := range driverPrograms[d[0]] {
			pairs = append(pairs, [2]string{d[0] + "." + d[1] + "." + kv[0], kv[1]})
		}
	}
	env := gitEnv()
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(pairs)))
	for i, kv := range pairs {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	return env
}

// gitRunner runs the git commands of one operation in dir, with the
// configuration described at the top of this file: the drivers are listed
// once, when the runner is made.
type gitRunner struct {
	dir string
	env []string
}

// errNoRepository: no directory from root up holds a .git entry, so git
// would find no work tree there.
var errNoRepository = errors.New("workspace: not inside a git repository")

// mayBeInRepository reports whether dir or one of its ancestors holds a
// .git entry (a directory, or the file of a worktree or submodule). Git
// finds a work tree only through one (its GIT_* variables are removed),
// so without one the two git processes of an overview are skipped: a new
// session in a plain directory starts without them.
func mayBeInRepository(dir string) bool {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return true // present, or unknown: let git decide
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// newGitRunner lists the drivers of dir's configuration (within timeout).
func newGitRunner(ctx context.Context, dir string, timeout time.Duration) (*gitRunner, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	drivers, err := gitDriverNames(ctx, dir)
	if err != nil {
		return nil, err
	}
	return &gitRunner{dir: dir, env: gitCommandEnv(drivers)}, nil
}

// run runs git with a timeout and keeps at most limit bytes of its output.
func (g *gitRunner) run(ctx context.Context, timeout time.Duration, limit int, args ...string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-pager"}, args...)...)
	cmd.Dir = g.dir
	cmd.Env = g.env
	out := &cappedBuffer{limit: limit}
	cmd.Stdout = out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return nil, false, err
	}
	return out.buf.Bytes(), out.truncated, nil
}

// cappedBuffer keeps the first limit bytes written and drops the rest, so
// the writer is never blocked or failed.
type cappedBuffer struct {
	buf       bytes.Buffer
	limit     int
	truncated bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); room < len(p) {
		c.truncated = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (g *gitRunner) workTree(ctx context.Context, timeout time.Duration) bool {
	out, _, err := g.run(ctx, timeout, 64, "rev-parse", "--is-inside-work-tree")
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// files lists what git does not ignore below root (git prints paths
// relative to the directory it runs in and only below it).
func (g *gitRunner) files(ctx context.Context, root string, lim Limits) ([]scannedFile, bool, error) {
	args := []string{"ls-files", "-z", "--cached", "--others", "--exclude-standard"}
	if excl := userExcludesFile(ctx, lim.GitTimeout); excl != "" {
		args = append([]string{"-c", "core.excludesFile=" + excl}, args...)
	}
	out, truncated, err := g.run(ctx, lim.GitTimeout, maxGitListBytes, args...)
	if err != nil {
		return nil, false, err
	}
	if truncated { // the last name may be cut: keep complete ones only
		out = out[:bytes.LastIndexByte(out, 0)+1]
	}
	seen := make(map[string]bool)
	var files []scannedFile
	for name := range strings.SplitSeq(string(out), "\x00") {
		if name == "" || seen[name] || overviewSkip.SkippedPath(name) {
			continue
		}
		seen[name] = true // unmerged paths are listed once per stage
		if len(files) == lim.MaxScan {
			return files, true, nil
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			continue // tracked but deleted in the work tree
		}
		files = append(files, scannedFile{rel: name, dir: fi.IsDir(), mod: fi.ModTime()})
	}
	return files, truncated, nil
}

// userExcludesFile is the user's global ignore file, which ls-files honours
// and the runner's environment (no user configuration) would lose: the
// core.excludesFile of the user's configuration, read by git config (which
// runs no program), else git's default $XDG_CONFIG_HOME/git/ignore. "" when
// there is none.
func userExcludesFile(ctx context.Context, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "config", "--global", "--path", "--get", "core.excludesFile")
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_") }),
		"GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	cmd.WaitDelay = time.Second
	out := &cappedBuffer{limit: 4096}
	cmd.Stdout = out
	if err := cmd.Run(); err == nil && !out.truncated {
		if p := strings.TrimSpace(out.buf.String()); p != "" {
			return p
		}
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" {
		home := os.Getenv("HOME")
		if home == "" {
			return ""
		}
		xdg = filepath.Join(home, ".config")
	}
	p := filepath.Join(xdg, "git", "ignore")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}
