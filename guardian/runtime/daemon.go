package runtime

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"winx/guardian/daemon"
	"winx/guardian/remote"
	"winx/guardian/wire"
)

// DaemonOptions configure the daemon runtime: sessions live in guardian
// processes that winxd spawns, so they survive the adapter.
type DaemonOptions struct {
	// Options are carried to every guardian spawned for a session, as the
	// embedded runtime applies them. A non-nil Sandbox asks the guardians
	// to confine their shells; they build the same Landlock policy from
	// the WINX_SANDBOX_* variables of BaseEnv and the workspace.
	Options
	// Socket is winxd's socket (wire.Resolve).
	Socket string
	// Start says how to start winxd when nothing answers on Socket; nil
	// means never start it (the first session fails instead).
	Start *daemon.StartOptions
	// Build is this adapter's identity, sent in every hello.
	Build wire.Build
	// Secret is the wire secret (wire.EnsureSecret), said in every hello
	// to winxd and the guardians; required.
	Secret string
	// CallTimeout bounds the guardian calls that cannot report a failure
	// (Cwd, Screen, Healthy) within their caller's context; 0 means
	// remote.DefaultCallTimeout.
	CallTimeout time.Duration
	// ReadLost reads winxd's record of a dead guardian whose socket and
	// Record are gone (see LostRecordFunc); nil means the lost-session
	// record winxd writes beside the socket (remote.ReadLost).
	ReadLost LostRecordFunc
}

// Daemon returns a Factory whose terminals are guardian processes: it asks
// winxd (starting it when nothing answers) for the guardian of the
// session's key, spawned with the runtime options when none runs, and
// returns a client of that guardian. The key depends only on the principal,
// the canonical workspace and the affinity scope (and the sandbox), so a new
// adapter reaches the guardian an earlier one used, with its shell, cwd and
// running command. The guardian's own hello decides what the session can do
// (the client checks each method against it), never this adapter's version.
//
// A winxd of another build than this adapter's is restarted into the
// adapter's build first (a planned restart: guardians keep running, and
// those of older builds keep serving their sessions), at most once per
// SkewRestartInterval per factory; see skewGuard.
//
// Releasing such a terminal detaches from it: the guardian keeps running
// when the adapter exits, and ends by winxd's idle TTLs, `winx kill` or
// `winx prune`. A reset of a healthy guardian replaces its shell in place;
// a reset of a guardian that is gone spawns a new one.
func Daemon(o DaemonOptions) (Factory, error) {
	sandboxed := o.Sandbox != nil
	if o.Socket == "" {
		return nil, errors.New("runtime: the daemon runtime needs winxd's socket")
	}
	if !wire.ValidSecret(o.Secret) {
		return nil, fmt.Errorf("runtime: the daemon runtime needs the wire secret: %w", wire.ErrNoSecret)
	}
	hello := wire.NewHello(wire.RoleAdapter, o.Build, nil).WithSecret(o.Secret)
	copts := &remote.ClientOptions{Build: o.Build, Timeout: o.CallTimeout, Secret: o.Secret}
	skew := newSkewGuard(o.Socket, hello, o.Start, o.Logger)
	if o.ReadLost == nil {
		o.ReadLost = readLostRecord
	}
	finder := &LostFinder{Dir: filepath.Dir(o.Socket), Sandboxed: sandboxed, DenyNetwork: o.SandboxDenyNetwork, ReadLost: o.ReadLost}
	if state := o.stateDir(); state != "" {
		finder.KeepDir = filepath.Join(state, LostDirName)
	}
	return func(ctx context.Context, spec Spec) (*Started, error) {
		if old, ok := spec.Replacing.(*remote.RemoteShell); ok && old.Healthy(ctx) {
			// A reset of a live guardian: same process and socket, a new
			// shell at the same cwd.
			if err := old.Reset(ctx); err != nil {
				return nil, err
			}
			rs, err := remote.Attach(ctx, old.Socket(), copts)
			if err != nil {
				return nil, err
			}
			return &Started{Terminal: rs}, nil
		}
		key := guardianKey(&spec, sandboxed, o.SandboxDenyNetwork)
		// The guardian's socket follows from the key: a session whose
		// guardian runs (an adapter restarted, a second adapter) is
		// attached directly, without winxd's ensure and probe (and,
		// after this adapter's first session start, its ping).
		c := skew.checkOnce(ctx)
		if st, err := attachRunning(ctx, wire.GuardianSocket(filepath.Dir(o.Socket), key.String()), key.String(), copts); st != nil || err != nil {
			return st, err
		}
		if c == nil {
			var err error
			if c, err = skew.connect(ctx); err != nil {
				return nil, err
			}
		}
		if spec.Existing {
			return attachExisting(ctx, c, key.String(), copts)
		}
		// A guardian that died at the key's socket left its files until
		// winxd cleans them up (below, in Ensure): what it lost is taken
		// first.
		var lost *Lost
		socket := wire.GuardianSocket(filepath.Dir(o.Socket), key.String())
		if alive, perr := wire.Probe(ctx, socket); perr == nil && !alive {
			if l, ok := findLost(socket, key.String(), finder.ReadLost, finder.keepDir(key.String())); ok {
				lost = &l
			}
		}
		res, err := c.Ensure(ctx, &daemon.EnsureParams{
			Key: key.String(), Dir: spec.Dir, Workspace: key.Workspace, Shell: o.Shell, NoRedact: o.NoRedact, NoCompress: o.NoCompress, Sandbox: sandboxed,
			Env: append(append([]string(nil), o.BaseEnv...), spec.Env...),
		})
		if err != nil {
			return nil, err
		}
		rs, err := remote.Attach(ctx, res.Guardian.Socket, copts)
		if err != nil {
			return nil, err
		}
		if !res.Spawned {
			lost = nil // another adapter replaced it first: this one runs
		}
		return &Started{Terminal: rs, Resumed: !res.Spawned, Lost: lost}, nil
	}, nil
}

// attachRunning attaches to the guardian on socket when one serves key
// and its session is open; nil and no error when none does (nothing
// listens, another key, a closed session), so winxd decides. A guardian
// that does not answer in time is an error (*remote.UnresponsiveError),
// as winxd's probe of it would be.
func attachRunning(ctx context.Context, socket, key string, copts *remote.ClientOptions) (*Started, error) {
	rs, err := remote.Attach(ctx, socket, copts)
	var ue *remote.UnresponsiveError
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &ue):
		return nil, err
	case err != nil:
		return nil, nil
	}
	if snap := rs.Snapshot(); snap.Key != key || snap.Closed {
		rs.Release(ctx)
		return nil, nil
	}
	return &Started{Terminal: rs, Resumed: true}, nil
}

// attachExisting attaches to the running guardian of key, found by
// winxd's discovery; ErrNoSession when none runs.
func attachExisting(ctx context.Context, c *daemon.Client, key string, copts *remote.ClientOptions) (*Started, error) {
	l, _, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, g := range l.Guardians {
		if g.Status.Key != key {
			continue
		}
		rs, err := remote.Attach(ctx, g.Socket, copts)
		if err != nil {
			return nil, err
		}
		if snap := rs.Snapshot(); snap.Key != key || snap.Closed {
			rs.Release(ctx)
			return nil, ErrNoSession
		}
		return &Started{Terminal: rs, Resumed: true}, nil
	}
	return nil, ErrNoSession
}

// guardianKey is the key of a session's guardian.
func guardianKey(spec *Spec, sandboxed, denyNetwork bool) daemon.SessionKey {
	k := daemon.SessionKey{ExternalID: spec.ExternalID, Principal: spec.Principal, Workspace: spec.workspace(), Scope: spec.Scope}
	switch {
	case sandboxed && denyNetwork:
		// Nor does a confined session without networking reuse one with
		// it: winxd starts this key's guardian with the key's policy.
		k = k.SandboxedWithoutNetwork()
	case sandboxed:
		// A confined session never reuses an unconfined guardian, and
		// winxd starts this key's guardian confined only.
		k = k.Sandboxed()
	}
	return k
}

// readLostRecord is the LostRecordFunc of winxd's lost-session records.
func readLostRecord(socket string) (string, bool) {
	r, err := remote.ReadLost(socket)
	return r.ShellDir, err == nil && r.ShellDir != ""
}
