package tools

import (
	"context"
	"time"

	"winx/guardian"
)

// terminal is the part of a session's shell the tools' commands use: where
// it is, its screen, the foreground command and the input typed into it,
// the background jobs, and the wait for a program's turn. The shell's
// lifecycle (PID, Healthy, Respawn, the record, Release) is the session
// registry's (mcp/session), which hands out the whole guardian.Terminal.
type terminal interface {
	Cwd(ctx context.Context) string
	Screen(ctx context.Context, lines int, diff bool) guardian.ScreenSnapshot

	Run(ctx context.Context, command string, wait time.Duration) (*guardian.Outcome, error)
	Poll(ctx context.Context, gen uint64, wait time.Duration) (*guardian.Outcome, error)
	SendText(ctx context.Context, text string, submit bool, wait time.Duration) (*guardian.Outcome, error)
	SendKeys(ctx context.Context, keys []guardian.Key, wait time.Duration) (*guardian.Outcome, error)
	SendBytes(ctx context.Context, b []byte, wait time.Duration) (*guardian.Outcome, error)
	Cancel(ctx context.Context, gen uint64, wait time.Duration) (*guardian.Outcome, error)

	StartBackground(ctx context.Context, command string) (string, error)
	PollBackground(ctx context.Context, id string, wait time.Duration) (*guardian.Outcome, error)
	SendTextBackground(ctx context.Context, id, text string, submit bool, wait time.Duration) (*guardian.Outcome, error)
	Jobs(ctx context.Context) ([]guardian.Job, error)

	WaitForTurn(ctx context.Context, quiet, timeout time.Duration) (bool, error)
}

var _ terminal = guardian.Terminal(nil)
