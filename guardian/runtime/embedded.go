package runtime

import (
	"context"
	"path/filepath"

	"winx/evidence/redact"
	"winx/guardian"
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
		var wrap func([]string) ([]string, error)
		if o.Sandbox != nil {
			wrap = func(argv []string) ([]string, error) { return o.Sandbox(root, argv) }
		}
		sess, err := guardian.NewSession(ctx, guardian.Options{
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
		})
		if err != nil {
			return nil, err
		}
		return &Started{Terminal: sess}, nil
	}
}
