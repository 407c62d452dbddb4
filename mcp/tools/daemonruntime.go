package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"winx/auth/policy"
	"winx/guardian"
	"winx/guardian/daemon"
	"winx/guardian/remote"
	"winx/guardian/wire"
	"winx/mcp/session"
)

// DaemonOptions configure the daemon runtime: sessions live in guardian
// processes that winxd spawns, so they survive the adapter.
type DaemonOptions struct {
	// RuntimeOptions are carried to every guardian spawned for a session,
	// as the embedded runtime applies them. A non-nil Sandbox asks the
	// guardians to confine their shells; they build the same Landlock
	// policy from the WINX_SANDBOX_* variables of BaseEnv and the workspace.
	RuntimeOptions
	// Socket is winxd's socket (wire.Resolve).
	Socket string
	// Start says how to start winxd when nothing answers on Socket; nil
	// means never start it (the first session fails instead).
	Start *daemon.StartOptions
	// Build is this adapter's identity, sent in every hello.
	Build wire.Build
	// CallTimeout bounds the guardian calls that take no context (PID,
	// Cwd, Screen, Healthy); 0 means remote.DefaultCallTimeout.
	CallTimeout time.Duration
}

// ErrShellLost: the guardian process of a session is gone, and with it the
// shell, its cwd and its running commands.
var ErrShellLost = errors.New("tools: the session's shell process is gone")

// ShellLostError is a call that found its session's guardian gone (killed,
// exited, or replaced). Initialize reset_shell starts a new one.
type ShellLostError struct {
	Err error // the *remote.GuardianGoneError
}

func (e *ShellLostError) Error() string {
	return "The session's shell process (its guardian) is gone: it was killed or exited, with its cwd and running commands. " +
		"Call Initialize with type reset_shell to start a new shell in this workspace."
}

func (e *ShellLostError) Unwrap() []error { return []error{ErrShellLost, e.Err} }

// DaemonShells returns a ShellFactory whose shells are guardian processes:
// it asks winxd (starting it when nothing answers) for the guardian of the
// session's key, spawned with the runtime options when none runs, and
// returns a client of that guardian. The key depends only on the principal,
// the canonical workspace and the affinity scope, so a new adapter reaches
// the guardian an earlier one used, with its shell, cwd and running command.
//
// Closing such a shell detaches from it: the guardian keeps running when the
// adapter exits, and ends by winxd's idle TTLs, `winx kill` or `winx prune`.
// A reset of a healthy guardian replaces its shell in place; a reset of a
// guardian that is gone spawns a new one.
func DaemonShells(o DaemonOptions) (session.ShellFactory, error) {
	sandboxed := o.Sandbox != nil
	if o.Socket == "" {
		return nil, errors.New("tools: the daemon runtime needs winxd's socket")
	}
	hello := wire.NewHello(wire.RoleAdapter, o.Build, nil)
	copts := &remote.ClientOptions{Build: o.Build, Timeout: o.CallTimeout}
	return func(ctx context.Context, dir string, env []string) (session.Shell, error) {
		sess := session.FactorySession(ctx)
		key, root := guardianKey(sess, dir, env, sandboxed)
		if sess != nil {
			if old, ok := sess.Shell().(*daemonShell); ok && old.Healthy() {
				// A reset of a live guardian: same process and socket,
				// a new shell at the same cwd.
				if err := old.RemoteShell.Reset(ctx); err != nil {
					return nil, err
				}
				sh, err := attachGuardian(ctx, old.Socket(), copts)
				if err != nil {
					return nil, err
				}
				return sh, nil
			}
		}
		c, _, err := daemon.Connect(ctx, o.Socket, hello, o.Start)
		if err != nil {
			return nil, err
		}
		res, err := c.Ensure(ctx, &daemon.EnsureParams{
			Key: key, Dir: dir, Workspace: root, Shell: o.Shell, NoRedact: o.NoRedact, NoCompress: o.NoCompress, Sandbox: sandboxed,
			Env: append(append([]string(nil), o.BaseEnv...), env...),
		})
		if err != nil {
			return nil, err
		}
		sh, err := attachGuardian(ctx, res.Guardian.Socket, copts)
		if err != nil {
			return nil, err
		}
		sh.resumed = !res.Spawned
		return sh, nil
	}, nil
}

func attachGuardian(ctx context.Context, socket string, copts *remote.ClientOptions) (*daemonShell, error) {
	rs, err := remote.Attach(ctx, socket, copts)
	if err != nil {
		return nil, err
	}
	return &daemonShell{RemoteShell: rs}, nil
}

// guardianKey is the guardian key of a session and its workspace root. A
// factory called without a session (tests) keys by the workspace and the
// session's temporary directory, which is derived from the session key.
func guardianKey(sess *session.Session, dir string, env []string, sandboxed bool) (key, root string) {
	var tmp string
	root = dir
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "WINX_WORKSPACE_ROOT="); ok {
			root = v
		}
		if v, ok := strings.CutPrefix(kv, "WINX_TEMP_DIR="); ok {
			tmp = v
		}
	}
	if sess == nil {
		k := daemon.SessionKey{ExternalID: filepath.Base(tmp), Workspace: root}
		if sandboxed {
			k.Scope = "sandbox"
		}
		return k.String(), root
	}
	scope := sess.Key.Scope
	if sandboxed {
		// A confined session never reuses an unconfined guardian.
		scope += "\x00sandbox"
	}
	return daemon.SessionKey{ExternalID: sess.ExternalID, Principal: sess.Principal, Workspace: sess.Root, Scope: scope}.String(), sess.Root
}

// daemonShell is a session's shell in the daemon runtime: a client of its
// guardian. The guardian's own hello decides what the session can do
// (remote.RemoteShell checks each method against it), never this adapter's
// version.
type daemonShell struct {
	*remote.RemoteShell

	// resumed: winxd found the guardian running (an earlier adapter's
	// session) instead of spawning it for this call.
	resumed bool

	// mu guards cwd, a status answer reused by Cwd calls until the next
	// action or for cwdFresh: a tool call that reads the cwd twice before
	// acting asks the guardian once.
	mu    sync.Mutex
	cwd   string
	cwdAt time.Time
}

// cwdFresh bounds how long Cwd reuses an answer when no action intervenes.
const cwdFresh = 200 * time.Millisecond

// Cwd asks the guardian for the shell's working directory (see cwd).
func (d *daemonShell) Cwd() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cwd != "" && time.Since(d.cwdAt) < cwdFresh {
		return d.cwd
	}
	d.cwd, d.cwdAt = d.RemoteShell.Cwd(), time.Now()
	return d.cwd
}

// acted forgets the cached cwd: an action may have changed it.
func (d *daemonShell) acted() {
	d.mu.Lock()
	d.cwd = ""
	d.mu.Unlock()
}

var (
	_ terminal             = (*daemonShell)(nil)
	_ session.ShellHealth  = (*daemonShell)(nil)
	_ generationCanceller  = (*daemonShell)(nil)
	_ session.DurableShell = (*daemonShell)(nil)
)

// Resumed: the guardian was running before this adapter asked for it; the
// mode is the one an earlier adapter recorded there.
func (d *daemonShell) Resumed() (policy.Mode, bool) {
	if !d.resumed {
		return policy.Mode{}, false
	}
	prior, _ := session.DecodeMode(d.Snapshot().Meta)
	return prior, true
}

// RecordMode keeps the session's mode in the guardian for later adapters.
func (d *daemonShell) RecordMode(ctx context.Context, m policy.Mode) error {
	return lost(d.SetMeta(ctx, session.EncodeMode(m)))
}

// Close detaches: the guardian outlives the adapter (see DaemonShells).
func (d *daemonShell) Close() error { return nil }

// lost types a guardian found gone for the model.
func lost(err error) error {
	if errors.Is(err, remote.ErrGuardianGone) {
		return &ShellLostError{Err: err}
	}
	return err
}

func (d *daemonShell) Run(ctx context.Context, command string, wait time.Duration) (*guardian.Outcome, error) {
	defer d.acted()
	o, err := d.RemoteShell.Run(ctx, command, wait)
	return o, lost(err)
}

func (d *daemonShell) Poll(ctx context.Context, gen uint64, wait time.Duration) (*guardian.Outcome, error) {
	defer d.acted()
	o, err := d.RemoteShell.Poll(ctx, gen, wait)
	return o, lost(err)
}

func (d *daemonShell) SendText(ctx context.Context, text string, submit bool, wait time.Duration) (*guardian.Outcome, error) {
	defer d.acted()
	o, err := d.RemoteShell.SendText(ctx, text, submit, wait)
	return o, lost(err)
}

func (d *daemonShell) SendKeys(ctx context.Context, keys []guardian.Key, wait time.Duration) (*guardian.Outcome, error) {
	defer d.acted()
	o, err := d.RemoteShell.SendKeys(ctx, keys, wait)
	return o, lost(err)
}

func (d *daemonShell) SendBytes(ctx context.Context, b []byte, wait time.Duration) (*guardian.Outcome, error) {
	defer d.acted()
	o, err := d.RemoteShell.SendBytes(ctx, b, wait)
	return o, lost(err)
}

func (d *daemonShell) StartBackground(ctx context.Context, command string) (string, error) {
	defer d.acted()
	id, err := d.RemoteShell.StartBackground(ctx, command)
	return id, lost(err)
}

func (d *daemonShell) PollBackground(ctx context.Context, id string, wait time.Duration) (*guardian.Outcome, error) {
	defer d.acted()
	o, err := d.RemoteShell.PollBackground(ctx, id, wait)
	return o, lost(err)
}

func (d *daemonShell) SendTextBackground(ctx context.Context, id, text string, submit bool, wait time.Duration) (*guardian.Outcome, error) {
	defer d.acted()
	o, err := d.RemoteShell.SendTextBackground(ctx, id, text, submit, wait)
	return o, lost(err)
}

func (d *daemonShell) WaitForTurn(ctx context.Context, quiet, timeout time.Duration) (bool, error) {
	defer d.acted()
	ok, err := d.RemoteShell.WaitForTurn(ctx, quiet, timeout)
	return ok, lost(err)
}

// Cancel interrupts generation gen only (a task cancelled after its
// command ended never reaches the next one).
func (d *daemonShell) Cancel(ctx context.Context, gen uint64, wait time.Duration) (*guardian.Outcome, error) {
	defer d.acted()
	o, err := d.RemoteShell.Cancel(ctx, gen, wait)
	return o, lost(err)
}

// String names the guardian for logs.
func (d *daemonShell) String() string {
	return fmt.Sprintf("guardian pid %d at %s", d.Peer().PID, d.Socket())
}
