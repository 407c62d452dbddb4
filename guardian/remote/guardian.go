package remote

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"winx/evidence/redact"
	"winx/guardian"
	"winx/guardian/wire"
	"winx/pty"
	"winx/pty/sandbox"
)

// Config is how a guardian process is started: winx-guardian's flags, and
// what Spawn passes. The shell inherits the guardian's environment.
type Config struct {
	Key       string // the session key; names the socket when Socket is ""
	Socket    string // socket path; "" resolves the runtime directory (wire.Resolve)
	Dir       string // the shell's first working directory
	Workspace string // root whose .winx/scratch receives dropped output; "" means Dir
	Shell     string // guardian.ShellBash (default) or guardian.ShellZsh
	Rows      int    // PTY size; 0 means the default
	Cols      int
	// NoCompress and NoRedact are WINX_NO_COMPRESS=1 and WINX_NO_REDACT=1.
	NoCompress bool
	NoRedact   bool
	// ReadyFD, when > 0, is a descriptor inherited from the spawner: the
	// guardian writes "ready\n" to it once it serves, then closes it.
	ReadyFD int
	// SettleTimeout: see ServerOptions.
	SettleTimeout time.Duration
	// Sandbox starts every process of the session through the Landlock
	// launcher of package pty/sandbox, with the policy that the
	// WINX_SANDBOX_* variables and the workspace give. The guardian binary
	// must dispatch sandbox.LauncherArg (winx-guardian does).
	Sandbox bool
	// Secret is the wire secret every peer's hello must carry. Spawn hands
	// it over on an inherited pipe (SecretFD), never in the environment or
	// the arguments, which a confined shell could read through /proc; a
	// guardian given neither reads the installation's secret file.
	Secret string
	// SecretFD, when > 0, is an inherited descriptor holding the secret;
	// the guardian reads it and closes it before its shell starts.
	SecretFD int
}

// The session key and the paths name a user's principal and project, and a
// process's arguments are readable by every local user (ps), so Spawn hands
// them over in the environment, which only the same user can read. The
// guardian removes them before its shell inherits the environment.
const (
	EnvKey       = "WINX_GUARDIAN_KEY"
	EnvDir       = "WINX_GUARDIAN_DIR"
	EnvWorkspace = "WINX_GUARDIAN_WORKSPACE"
)

// Environ returns the variables that carry c's key and paths.
func (c Config) Environ() []string {
	env := []string{EnvKey + "=" + c.Key, EnvDir + "=" + c.Dir}
	if c.Workspace != "" {
		env = append(env, EnvWorkspace+"="+c.Workspace)
	}
	return env
}

// TakeEnviron fills the key and paths that flags left empty from the
// environment and removes those variables from it.
func (c *Config) TakeEnviron() {
	for _, v := range []struct {
		name string
		dst  *string
	}{{EnvKey, &c.Key}, {EnvDir, &c.Dir}, {EnvWorkspace, &c.Workspace}} {
		if val, ok := os.LookupEnv(v.name); ok {
			if *v.dst == "" {
				*v.dst = val
			}
			os.Unsetenv(v.name)
		}
	}
}

// RegisterFlags binds c to fs, with the flag names Args produces; -key,
// -dir and -workspace are for starting a guardian by hand (Spawn uses the
// environment, see EnvKey).
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Key, "key", "", "session key (required)")
	fs.StringVar(&c.Socket, "socket", "", "socket path (default: in the resolved runtime directory)")
	fs.StringVar(&c.Dir, "dir", "", "the shell's working directory (required)")
	fs.StringVar(&c.Workspace, "workspace", "", "workspace root for .winx/scratch (default: -dir)")
	fs.StringVar(&c.Shell, "shell", "", "bash (default) or zsh")
	fs.IntVar(&c.Rows, "rows", 0, "PTY rows")
	fs.IntVar(&c.Cols, "cols", 0, "PTY columns")
	fs.BoolVar(&c.NoCompress, "no-compress", false, "do not collapse repeated output lines")
	fs.BoolVar(&c.NoRedact, "no-redact", false, "do not redact secrets in output")
	fs.IntVar(&c.ReadyFD, "ready-fd", 0, "descriptor to write \"ready\" to once serving")
	fs.IntVar(&c.SecretFD, "secret-fd", 0, "descriptor to read the wire secret from (default: the state directory's file)")
	fs.DurationVar(&c.SettleTimeout, "settle-timeout", 0, "how long a cancel waits for a launch in flight")
	fs.BoolVar(&c.Sandbox, "sandbox", false, "confine the session's processes with Landlock (WINX_SANDBOX_* variables)")
}

// Args returns the flags for c, without the key and the paths (Environ).
func (c Config) Args() []string {
	var args []string
	add := func(name, v string) {
		if v != "" {
			args = append(args, "-"+name, v)
		}
	}
	add("socket", c.Socket)
	add("shell", c.Shell)
	if c.Rows > 0 {
		add("rows", strconv.Itoa(c.Rows))
	}
	if c.Cols > 0 {
		add("cols", strconv.Itoa(c.Cols))
	}
	if c.NoCompress {
		args = append(args, "-no-compress")
	}
	if c.NoRedact {
		args = append(args, "-no-redact")
	}
	if c.ReadyFD > 0 {
		add("ready-fd", strconv.Itoa(c.ReadyFD))
	}
	if c.SecretFD > 0 {
		add("secret-fd", strconv.Itoa(c.SecretFD))
	}
	if c.SettleTimeout > 0 {
		add("settle-timeout", c.SettleTimeout.String())
	}
	if c.Sandbox {
		args = append(args, "-sandbox")
	}
	return args
}

// SocketPath returns c.Socket, or the key's socket in the runtime directory
// resolved from getenv (created private if missing).
func (c Config) SocketPath(getenv func(string) string) (string, error) {
	if c.Socket != "" {
		return c.Socket, nil
	}
	paths, err := wire.Resolve(getenv)
	if err != nil {
		return "", err
	}
	if err := wire.EnsureDir(paths.Dir); err != nil {
		return "", err
	}
	return wire.GuardianSocket(paths.Dir, c.Key), nil
}

// RunGuardian is the guardian process: it takes the socket (refusing one a
// live guardian serves), starts the shell, serves the session until it ends
// (session.close, or a launch that cannot settle) or ctx is done, and then
// kills the shell's process groups and removes the socket.
func RunGuardian(ctx context.Context, cfg Config, build wire.Build, logger *slog.Logger) error {
	if cfg.Key == "" || cfg.Dir == "" {
		return fmt.Errorf("remote: a guardian needs a key and a directory")
	}
	secret, err := guardianSecret(cfg)
	if err != nil {
		return err
	}
	cfg.Secret = secret
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	socket, err := cfg.SocketPath(os.Getenv)
	if err != nil {
		return err
	}
	// The socket first: a second guardian for the key fails here, before
	// it starts a shell.
	ln, err := wire.Listen(socket)
	if err != nil {
		return err
	}
	defer ln.Close()
	// Every process of the session carries the tag, and the record beside
	// the socket names it: if this process is killed, winxd's sweep finds
	// what it started (setsid'd ones too) and ends it. Ending normally,
	// this process kills its descendants itself (after the session's
	// shell, deferred below) and removes the record.
	root := cfg.Workspace
	if root == "" {
		root = cfg.Dir
	}
	rec := Record{PID: os.Getpid(), Key: cfg.Key, Tag: NewLaunchID(), Workspace: root, Sandbox: cfg.Sandbox}
	if err := writeRecord(socket, rec); err != nil {
		return err
	}
	defer os.Remove(RecordPath(socket))
	defer pty.KillDescendants()
	env := append(os.Environ(), EnvTag+"="+rec.Tag)
	wrap, err := sandboxWrapper(cfg.Sandbox, root, filepath.Dir(socket))
	if err != nil {
		return err
	}
	// The session's private directory lives in the state directory, never
	// in the shared temporary one (see guardian.Options.PrivateRoot).
	state := wire.StateDir(os.Getenv)
	if state == "" {
		return fmt.Errorf("remote: no state directory for the session's private files: neither XDG_STATE_HOME nor HOME is an absolute path")
	}
	// This binary runs the Landlock launcher (winx-guardian dispatches
	// sandbox.LauncherArg), for the sandbox and read-only shell profiles.
	self, _ := os.Executable()
	// The jobs a dead guardian of this key left running are lost; they
	// stay listed, and this guardian's jobs are numbered after them. A
	// record that cannot be read is left for the operator, not trusted.
	prior, err := priorJobs(socket, cfg.Key)
	if err != nil {
		logger.Warn("jobs record of the previous guardian", "err", err)
	}
	jobs := &jobsRecorder{socket: socket, key: cfg.Key, pid: rec.PID, logger: logger}
	// Runs after srv.terminate (deferred below): the jobs it ends are not
	// lost, and the record goes.
	defer jobs.stop()
	sess, err := guardian.NewShell(ctx, guardian.Options{
		Shell: cfg.Shell, Dir: cfg.Dir, Env: env, Rows: cfg.Rows, Cols: cfg.Cols, Logger: logger,
		WrapArgv: wrap, Launcher: self, PriorJobs: prior, OnJobsChange: jobs.changed,
		PrivateRoot: wire.SessionsDir(os.Getenv), HiddenDirs: []string{state, filepath.Dir(socket)}, Workspace: root,
		Shape: guardian.ShapeOptions{
			ScratchDir: filepath.Join(root, ".winx", "scratch"),
			NoCompress: cfg.NoCompress,
			Redactor:   redact.New(cfg.NoRedact),
		},
	})
	if err != nil {
		return err
	}
	rec.ShellDir = sess.PrivateDir()
	if err := writeRecord(socket, rec); err != nil {
		logger.Warn("guardian record", "err", err)
	}
	jobs.start(sess)
	srv := NewServer(sess, cfg.Key, &ServerOptions{Logger: logger, SettleTimeout: cfg.SettleTimeout})
	defer srv.terminate("guardian stopping")
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-srv.Done():
		case <-sctx.Done():
		}
		cancel()
	}()
	if cfg.ReadyFD > 0 {
		f := os.NewFile(uintptr(cfg.ReadyFD), "ready")
		f.Write([]byte("ready\n"))
		f.Close()
	}
	logger.Info("guardian serving", "socket", socket, "shell_pid", sess.PID(ctx))
	adm := newAdmission(cfg.Sandbox, srv.readOnlyShell, logger)
	return wire.Serve(sctx, ln, wire.NewHello(wire.RoleGuardian, build, Capabilities()), srv, &wire.ServeOptions{
		Logger: logger, Secret: cfg.Secret, EncodedResults: true, Admit: adm.admit,
	})
}

// guardianSecret is the wire secret of a guardian: read from SecretFD
// (which is closed, so the shell does not inherit it), else cfg.Secret, else
// the installation's secret file.
func guardianSecret(cfg Config) (string, error) {
	secret := cfg.Secret
	switch {
	case cfg.SecretFD > 0:
		f := os.NewFile(uintptr(cfg.SecretFD), "secret")
		b, err := io.ReadAll(io.LimitReader(f, 2*wire.SecretSize+1))
		f.Close()
		if err != nil {
			return "", fmt.Errorf("remote: read the wire secret: %w", err)
		}
		secret = string(b)
	case secret == "":
		path, err := wire.SecretPath(os.Getenv)
		if err != nil {
			return "", err
		}
		if secret, err = wire.LoadSecret(path); err != nil {
			return "", err
		}
	}
	if !wire.ValidSecret(secret) {
		return "", fmt.Errorf("remote: a guardian needs the wire secret: %w", wire.ErrNoSecret)
	}
	return secret, nil
}

// sandboxWrapper returns the argument rewriting that starts the session's
// processes through this binary's Landlock launcher, or nil when off. A
// guardian asked to confine its shells never starts them unconfined: a
// kernel without Landlock or a bad policy is an error.
func sandboxWrapper(on bool, workspace, socketDir string) (func([]string, guardian.OwnDirs) ([]string, error), error) {
	if !on {
		return nil, nil
	}
	if _, err := sandbox.Probe(); err != nil {
		return nil, fmt.Errorf("remote: sandbox: %w", err)
	}
	policy, err := sandbox.PolicyFromEnv(workspace, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("remote: sandbox: %w", err)
	}
	// The shell must not be able to read the wire secret, or it could
	// drive winxd and every guardian.
	secret, err := wire.SecretPath(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("remote: sandbox: %w", err)
	}
	if err := policy.MustHide(secret); err != nil {
		return nil, fmt.Errorf("remote: sandbox: %w", err)
	}
	// Nor replace this guardian's socket, or winxd's beside it.
	if err := policy.MustNotWrite(socketDir); err != nil {
		return nil, fmt.Errorf("remote: sandbox: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("remote: sandbox: locate the guardian binary for the launcher: %w", err)
	}
	// The socket directory holds every guardian's record and jobs record:
	// hidden like the home directory.
	policy.Hidden = append(policy.Hidden, socketDir)
	return func(argv []string, own guardian.OwnDirs) ([]string, error) {
		return sandbox.Launcher(self, own.Grant(policy), argv), nil
	}, nil
}

// NetworkEnv is the variable that gives a confined guardian's shells the
// network policy of its key (WINX_SANDBOX_NETWORK): winxd appends it to
// the guardian's environment, where the last entry wins.
func NetworkEnv(deny bool) []string {
	if deny {
		return []string{sandbox.EnvNetwork + "=" + sandbox.NetworkDeny}
	}
	return []string{sandbox.EnvNetwork + "=" + sandbox.NetworkAllow}
}
