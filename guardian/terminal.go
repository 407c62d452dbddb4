package guardian

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Terminal is the one shell contract of a session, whoever serves it: the
// embedded *Shell in this process, or a guardian process through its
// client (package guardian/remote). The tools layer uses nothing else, so a
// session behaves the same in both runtimes, with the same sentinel errors.
//
// It is whole because a runtime's factory produces one thing (runtime.Started)
// and the session registry hands that out; consumers name only the methods
// they call, in their own package: the registry its lifecycle
// (mcp/session's shell: PID, Cwd, Healthy, Meta, SetMeta, Respawn,
// Release), the tools their commands (mcp/tools' terminal: the screen,
// foreground and background commands, input, WaitForTurn), Follow its Poll
// (Poller). A new method is written here, on *Shell, on remote.RemoteShell
// with its row in the guardian's method table, on the registry's test
// stand-in (sessiontest.ProcShell), and in the interface of the package
// that calls it.
//
// Every method takes a context first: a terminal served by another process
// bounds each call by it (and by its own call timeout), never by a context
// it invents.
type Terminal interface {
	// PID is the shell's process id.
	PID(ctx context.Context) int
	// Cwd is the shell's working directory as of its last prompt.
	Cwd(ctx context.Context) string
	// Healthy reports whether the session is open and its shell reachable;
	// a failed terminal is replaced even within the reset interval.
	Healthy(ctx context.Context) bool
	// Screen returns the last lines rows of the visible screen (0: all);
	// with diff, Changed lists the rows changed since the last snapshot.
	Screen(ctx context.Context, lines int, diff bool) ScreenSnapshot

	// Run starts a foreground command and waits up to wait for it; a second
	// command while one runs fails with ErrCommandRunning at once.
	Run(ctx context.Context, command string, wait time.Duration) (*Outcome, error)
	// Poll waits up to wait for foreground generation gen (0: the newest).
	Poll(ctx context.Context, gen uint64, wait time.Duration) (*Outcome, error)
	SendText(ctx context.Context, text string, submit bool, wait time.Duration) (*Outcome, error)
	SendKeys(ctx context.Context, keys []Key, wait time.Duration) (*Outcome, error)
	SendBytes(ctx context.Context, b []byte, wait time.Duration) (*Outcome, error)
	// Cancel interrupts generation gen only: a cancel that arrives after
	// its command ended never reaches the next one.
	Cancel(ctx context.Context, gen uint64, wait time.Duration) (*Outcome, error)

	StartBackground(ctx context.Context, command string) (string, error)
	PollBackground(ctx context.Context, id string, wait time.Duration) (*Outcome, error)
	SendTextBackground(ctx context.Context, id, text string, submit bool, wait time.Duration) (*Outcome, error)
	// Jobs lists the background commands with their state, oldest first;
	// it needs no foreground shell, so it answers while a command runs.
	Jobs(ctx context.Context) ([]Job, error)
	// WaitForTurn waits until the PTY has been quiet for quiet, or timeout;
	// it reports whether it went quiet.
	WaitForTurn(ctx context.Context, quiet, timeout time.Duration) (bool, error)

	// Respawn replaces the shell with a fresh one started with profile at
	// the same cwd (a mode change): nothing the old shell defined
	// survives. A running foreground command refuses it with
	// ErrCommandRunning; a new shell that does not start leaves the old
	// one. It reports how the kernel confines the new shell.
	Respawn(ctx context.Context, profile ShellProfile) (Confinement, error)

	// Meta is the opaque record kept with the session for its adapters
	// (the session mode), as of the attach; nil when none was stored.
	// A terminal served by a guardian keeps it across adapters.
	Meta(ctx context.Context) json.RawMessage
	// SetMeta replaces that record.
	SetMeta(ctx context.Context, meta json.RawMessage) error

	// Release says the adapter is done with this handle: the embedded
	// session terminates its shell, a guardian client detaches and leaves
	// the guardian running for later adapters.
	Release(ctx context.Context) error
}

var _ Terminal = (*Shell)(nil)

// ErrShellLost: the process serving a session's shell is gone, and with it
// the shell, its cwd and its running commands.
var ErrShellLost = errors.New("guardian: the session's shell process is gone")

// ShellLostError is a call that found its session's guardian gone (killed,
// exited, or replaced). Its text is written for the model: a reset_shell
// starts a new one.
type ShellLostError struct {
	Err error // what found it gone (a *remote.GuardianGoneError)
}

func (e *ShellLostError) Error() string {
	return "The session's shell process (its guardian) is gone: it was killed or exited, with its cwd and running commands. " +
		"Call Initialize with type reset_shell to start a new shell in this workspace."
}

func (e *ShellLostError) Unwrap() []error { return []error{ErrShellLost, e.Err} }
