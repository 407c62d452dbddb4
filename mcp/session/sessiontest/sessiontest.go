// Package sessiontest holds what tests of the session registry and of its
// users share: a real process standing in for a shell, a settable clock and
// a counting shell factory. Only tests import it.
package sessiontest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"winx/guardian"
	"winx/guardian/runtime"
	"winx/mcp/session"
)

// ProcShell is a real process standing in for a shell: sessions only need
// its PID, cwd, health, record, respawn and teardown, and a real process
// makes PIDs and kills real. It runs no commands: every method that would
// type into a shell answers ErrNoCommands, so a test that reaches one
// fails with a named error instead of a nil-interface panic.
type ProcShell struct {
	Dir string   // where it was started
	Env []string // the variables the registry added
	// Respawns counts Respawn calls (mode changes to another profile).
	Respawns atomic.Int32

	cmd  *exec.Cmd
	done chan struct{} // closed when the process was reaped
	once sync.Once
}

var _ guardian.Terminal = (*ProcShell)(nil)

// ErrNoCommands is what a ProcShell answers to a command, input, screen or
// background call: it stands in for a shell's lifecycle only.
var ErrNoCommands = errors.New("sessiontest: a ProcShell runs no commands")

// StartProcShell starts a ProcShell in dir with env added.
func StartProcShell(ctx context.Context, dir string, env []string) (*ProcShell, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command("sleep", "1000") // not CommandContext: a shell outlives its start
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &ProcShell{cmd: cmd, Dir: dir, Env: env, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *ProcShell) PID(context.Context) int    { return p.cmd.Process.Pid }
func (p *ProcShell) Cwd(context.Context) string { return p.Dir }

func (p *ProcShell) Meta(context.Context) json.RawMessage           { return nil }
func (p *ProcShell) SetMeta(context.Context, json.RawMessage) error { return nil }

// Respawn keeps the process (it has no shell state to drop) and counts
// the call; the profile is not applied, so it reports no confinement.
func (p *ProcShell) Respawn(context.Context, guardian.ShellProfile) (guardian.Confinement, error) {
	p.Respawns.Add(1)
	return guardian.Confinement{}, nil
}

// Release ends the process, as the embedded runtime's release does.
func (p *ProcShell) Release(context.Context) error { return p.Close() }

// Close kills the process and waits for it.
func (p *ProcShell) Close() error {
	p.once.Do(func() { p.cmd.Process.Kill() })
	<-p.done
	return nil
}

// Healthy reports whether the process still runs.
func (p *ProcShell) Healthy(context.Context) bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (p *ProcShell) Screen(context.Context, int, bool) guardian.ScreenSnapshot {
	return guardian.ScreenSnapshot{}
}

func (p *ProcShell) Run(context.Context, string, time.Duration) (*guardian.Outcome, error) {
	return nil, ErrNoCommands
}

func (p *ProcShell) Poll(context.Context, uint64, time.Duration) (*guardian.Outcome, error) {
	return nil, ErrNoCommands
}

func (p *ProcShell) SendText(context.Context, string, bool, time.Duration) (*guardian.Outcome, error) {
	return nil, ErrNoCommands
}

func (p *ProcShell) SendKeys(context.Context, []guardian.Key, time.Duration) (*guardian.Outcome, error) {
	return nil, ErrNoCommands
}

func (p *ProcShell) SendBytes(context.Context, []byte, time.Duration) (*guardian.Outcome, error) {
	return nil, ErrNoCommands
}

func (p *ProcShell) Cancel(context.Context, uint64, time.Duration) (*guardian.Outcome, error) {
	return nil, ErrNoCommands
}

func (p *ProcShell) StartBackground(context.Context, string) (string, error) {
	return "", ErrNoCommands
}

func (p *ProcShell) PollBackground(context.Context, string, time.Duration) (*guardian.Outcome, error) {
	return nil, ErrNoCommands
}

func (p *ProcShell) SendTextBackground(context.Context, string, string, bool, time.Duration) (*guardian.Outcome, error) {
	return nil, ErrNoCommands
}

func (p *ProcShell) Jobs(context.Context) ([]guardian.Job, error) { return nil, ErrNoCommands }

func (p *ProcShell) WaitForTurn(context.Context, time.Duration, time.Duration) (bool, error) {
	return false, ErrNoCommands
}

// Clock is a settable clock for the reset interval.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// CountingFactory starts ProcShells and counts the starts; while Fail is
// set it refuses with ErrFactory.
type CountingFactory struct {
	Starts atomic.Int64
	Fail   atomic.Bool
}

// ErrFactory is a start CountingFactory refused.
var ErrFactory = errors.New("test: shell start refused")

// Start is the factory.
func (f *CountingFactory) Start(ctx context.Context, spec runtime.Spec) (*runtime.Started, error) {
	if f.Fail.Load() {
		return nil, ErrFactory
	}
	if spec.Existing {
		// Like the embedded runtime: no shell outlives its registry.
		return nil, runtime.ErrNoSession
	}
	f.Starts.Add(1)
	p, err := StartProcShell(ctx, spec.Dir, spec.Env)
	if err != nil {
		return nil, err
	}
	return &runtime.Started{Terminal: p}, nil
}

// NewSessions returns a registry of ProcShells on a settable clock, closed
// (and its Close checked) when the test ends.
func NewSessions(t testing.TB) (*session.Sessions, *CountingFactory, *Clock) {
	t.Helper()
	f := &CountingFactory{}
	clock := &Clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := session.NewSessions(f.Start, clock.Now)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, f, clock
}

// Canon is the canonical form of a test path (t.TempDir may sit behind a
// symlink on some systems).
func Canon(t testing.TB, p string) string {
	t.Helper()
	c, err := session.CanonicalPath(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// WriteFile writes content to path, creating its directories.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
