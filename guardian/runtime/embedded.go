package runtime

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"winx/evidence/redact"
	"winx/guardian"
	"winx/guardian/wire"
)

// Embedded returns a Factory that runs guardian sessions in this process:
// sessions live as long as the adapter, and releasing a terminal ends it.
// Output of each session is shaped with its workspace's .winx/scratch for
// dropped heads.
func Embedded(o Options) Factory {
	redactor := redact.New(o.NoRedact)
	return func(ctx context.Context, spec Spec) (*Started, error) {
		if spec.Existing {
			// Embedded sessions end with their adapter: nothing survives.
			return nil, ErrNoSession
		}
		root := spec.workspace()
		var wrap func([]string, guardian.OwnDirs) ([]string, error)
		if o.Sandbox != nil {
			wrap = func(argv []string, own guardian.OwnDirs) ([]string, error) { return o.Sandbox(root, own, argv) }
		}
		state := o.stateDir()
		if state == "" {
			return nil, errNoStateDir
		}
		sess, err := guardian.NewShell(ctx, guardian.Options{
			Launcher: o.Launcher,
			Shell:    o.Shell,
			Dir:      spec.Dir,
			Env:      append(append([]string(nil), o.BaseEnv...), spec.Env...),
			Logger:   o.Logger,
			Shape: guardian.ShapeOptions{
				ScratchDir: filepath.Join(root, ".winx", "scratch"),
				NoCompress: o.NoCompress,
				Redactor:   redactor,
			},
			WrapArgv: wrap,
			// The session's private files live in the state directory,
			// never in the shared temporary one.
			PrivateRoot: filepath.Join(state, wire.SessionsDirName),
			HiddenDirs:  o.hiddenDirs(state),
			Workspace:   root,
		})
		if err != nil {
			return nil, err
		}
		return &Started{Terminal: sess}, nil
	}
}

// errNoStateDir: a session needs the state directory for its private files.
var errNoStateDir = errors.New("runtime: no state directory for the session's private files: set XDG_STATE_HOME or HOME to an absolute path")

// stateDir is o.StateDir, else the state directory BaseEnv names.
func (o Options) stateDir() string {
	if o.StateDir != "" {
		return o.StateDir
	}
	return wire.StateDir(o.getenv)
}

// hiddenDirs are what a read-only shell may not read: the state directory
// and the socket directory (the records of every guardian of the
// installation, whose winxd may be running beside this adapter).
func (o Options) hiddenDirs(state string) []string {
	hidden := []string{state}
	if paths, err := wire.Resolve(o.getenv); err == nil {
		hidden = append(hidden, paths.Dir)
	}
	return hidden
}

// getenv looks a variable up in BaseEnv, the last entry winning as in
// exec.Cmd.
func (o Options) getenv(name string) string {
	v := ""
	for _, kv := range o.BaseEnv {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}
