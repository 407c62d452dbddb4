package session

import (
	"context"
	"encoding/json"

	"winx/guardian"
)

// shell is the part of a terminal the registry itself uses: who runs it,
// where, whether it still answers, the record kept with it, a respawn for a
// mode's profile and the release. The registry holds and hands out the
// whole guardian.Terminal (Session.Shell), because the tools layer runs
// commands on it; nothing in this package does.
type shell interface {
	PID(ctx context.Context) int
	Cwd(ctx context.Context) string
	Healthy(ctx context.Context) bool
	Meta(ctx context.Context) json.RawMessage
	SetMeta(ctx context.Context, meta json.RawMessage) error
	Respawn(ctx context.Context, profile guardian.ShellProfile) (guardian.Confinement, error)
	Release(ctx context.Context) error
}

var _ shell = guardian.Terminal(nil)
