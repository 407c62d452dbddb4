package sessiontest

import (
	"context"
	"errors"
	"testing"
)

// TestProcShellRunsNoCommands: every terminal method a lifecycle stand-in
// cannot serve answers ErrNoCommands, so a test that reaches one fails with
// a named error, never a nil-interface panic.
func TestProcShellRunsNoCommands(t *testing.T) {
	ctx := t.Context()
	p, err := StartProcShell(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	calls := []struct {
		name string
		call func(context.Context) error
	}{
		{"Run", func(ctx context.Context) error { _, err := p.Run(ctx, "true", 0); return err }},
		{"Poll", func(ctx context.Context) error { _, err := p.Poll(ctx, 0, 0); return err }},
		{"SendText", func(ctx context.Context) error { _, err := p.SendText(ctx, "x", true, 0); return err }},
		{"SendKeys", func(ctx context.Context) error { _, err := p.SendKeys(ctx, nil, 0); return err }},
		{"SendBytes", func(ctx context.Context) error { _, err := p.SendBytes(ctx, []byte("x"), 0); return err }},
		{"Cancel", func(ctx context.Context) error { _, err := p.Cancel(ctx, 1, 0); return err }},
		{"StartBackground", func(ctx context.Context) error { _, err := p.StartBackground(ctx, "true"); return err }},
		{"PollBackground", func(ctx context.Context) error { _, err := p.PollBackground(ctx, "bg1", 0); return err }},
		{"SendTextBackground", func(ctx context.Context) error {
			_, err := p.SendTextBackground(ctx, "bg1", "x", true, 0)
			return err
		}},
		{"Jobs", func(ctx context.Context) error { _, err := p.Jobs(ctx); return err }},
		{"WaitForTurn", func(ctx context.Context) error { _, err := p.WaitForTurn(ctx, 0, 0); return err }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(ctx); !errors.Is(err, ErrNoCommands) {
				t.Errorf("%s = %v, want ErrNoCommands", c.name, err)
			}
		})
	}
	if snap := p.Screen(ctx, 0, false); len(snap.Rows) != 0 {
		t.Errorf("Screen = %+v, want an empty snapshot", snap)
	}
	if !p.Healthy(ctx) {
		t.Errorf("Healthy = false before Close, want true")
	}
}
