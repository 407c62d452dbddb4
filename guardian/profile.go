package guardian

import (
	"errors"
	"slices"
	"strconv"

	"winx/pty/sandbox"
)

// ShellLevel is how far the kernel confines a session's shell.
type ShellLevel string

// The shell levels. The zero value is LevelUnrestricted.
const (
	LevelUnrestricted ShellLevel = ""
	// LevelReadOnly starts the shell, and every process it or a background
	// command starts, under the read-only Landlock ruleset of package
	// pty/sandbox (no writes but the terminal and /dev/null, no TCP where
	// the kernel can deny it), where the kernel has Landlock.
	LevelReadOnly ShellLevel = "readonly"
)

// ShellProfile is how a session's shell is started: its level and the
// variables added to its environment (after Options.Env). A session's
// profile changes only by Terminal.Respawn, which starts a fresh shell.
type ShellProfile struct {
	Level ShellLevel `json:"level,omitempty"`
	Env   []string   `json:"env,omitempty"`
}

// Equal reports whether p and q start the same shell.
func (p ShellProfile) Equal(q ShellProfile) bool {
	return p.Level == q.Level && slices.Equal(p.Env, q.Env)
}

// Confinement is how the kernel confines a session's current shell.
type Confinement struct {
	// ReadOnly: the shell runs under the read-only Landlock ruleset.
	ReadOnly bool `json:"readOnly,omitempty"`
	// Unavailable says why a read-only profile is not enforced by the
	// kernel here (no Landlock, an old ABI, no launcher); the command
	// parser is then the only layer. Empty otherwise.
	Unavailable string `json:"unavailable,omitempty"`
}

// RestrictedGitEnv is the environment of a restricted shell (architect,
// code_writer) that keeps git from running programs a repository's own
// configuration names: variables given by GIT_CONFIG_COUNT/KEY/VALUE
// override every configuration file. The file system monitor and hooks are
// off, the pager is cat, and a bare repository is entered only when named
// (--git-dir, GIT_DIR), never found by walking up from the cwd
// (safe.bareRepository needs git 2.38). diff.external cannot be switched
// off this way (an empty value makes git try to run ""), nor the per-driver
// filters and textconv programs, whose names are the repository's to
// choose: the command parser refuses those options, and in architect the
// kernel layer keeps whatever runs from writing.
func RestrictedGitEnv() []string {
	kv := [][2]string{
		{"core.fsmonitor", "false"},
		{"core.hooksPath", "/dev/null"},
		{"core.pager", "cat"},
		{"safe.bareRepository", "explicit"},
		{"core.sshCommand", "ssh"},
	}
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(kv)), "GIT_PAGER=cat", "PAGER=cat"}
	for i, e := range kv {
		env = append(env, "GIT_CONFIG_KEY_"+strconv.Itoa(i)+"="+e[0], "GIT_CONFIG_VALUE_"+strconv.Itoa(i)+"="+e[1])
	}
	return env
}

// readOnlyUnavailable is why the read-only ruleset cannot be applied to
// this session's processes, or "" when it can.
func (s *Shell) readOnlyUnavailable() string {
	if _, err := sandbox.Probe(); err != nil {
		var ue *sandbox.UnavailableError
		if errors.As(err, &ue) {
			return ue.Reason
		}
		return err.Error()
	}
	if s.opts.Launcher == "" {
		return "no launcher binary is configured for this session's shells"
	}
	return ""
}

// confine wraps argv for profile p: the sandbox (Options.WrapArgv) first,
// then the read-only ruleset, which joins the sandbox's launcher when there
// is one. It reports the confinement it gave.
func (s *Shell) confine(argv []string, p ShellProfile) ([]string, Confinement, error) {
	if s.opts.WrapArgv != nil {
		var err error
		if argv, err = s.opts.WrapArgv(argv, s.own); err != nil {
			return nil, Confinement{}, err
		}
		if len(argv) == 0 {
			return nil, Confinement{}, errors.New("guardian: WrapArgv returned an empty argument vector")
		}
	}
	var c Confinement
	if p.Level == LevelReadOnly {
		if c.Unavailable = s.readOnlyUnavailable(); c.Unavailable == "" {
			argv = sandbox.ReadOnly(s.opts.Launcher, argv, s.readOnlyOptions())
			c.ReadOnly = true
		} else {
			s.logger.Warn("read-only shell profile without its kernel layer: the command parser alone applies", "reason", c.Unavailable)
		}
	}
	return argv, c, nil
}

// readOnlyOptions hides Options.HiddenDirs (the state directory: the wire
// secret, other sessions' private directories) from a read-only shell, as
// the sandbox hides them with the home directory, except what the session
// needs of them: its own private directory (the rc file, long commands)
// and its workspace (a managed worktree lies in the state directory).
func (s *Shell) readOnlyOptions() sandbox.ReadOnlyOptions {
	if len(s.opts.HiddenDirs) == 0 {
		return sandbox.ReadOnlyOptions{}
	}
	o := sandbox.ReadOnlyOptions{Hide: s.opts.HiddenDirs, Readable: []string{s.own.Dir}}
	if s.opts.Workspace != "" {
		o.Readable = append(o.Readable, s.opts.Workspace)
	}
	return o
}
