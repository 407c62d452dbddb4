package remote

import (
	"strings"
	"testing"
	"time"
)

// TestAwaitingInputCrossesTheWire: a command at a prompt in a guardian
// process answers at once with AwaitingInput, and the answer to the input
// does not repeat the prompt.
func TestAwaitingInputCrossesTheWire(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)
	r := attach(t, p.Socket)
	o, err := r.Run(ctx, "read -p 'Q? ' a; echo A=$a", 15*time.Second)
	if err != nil || !o.Running || !o.AwaitingInput || !strings.Contains(o.Output.Text, "Q?") {
		t.Fatalf("Run = %+v, %v; want running and awaiting input at Q?", o, err)
	}
	o, err = r.SendText(ctx, "z", true, 15*time.Second)
	if err != nil || o.Running || o.AwaitingInput || !strings.Contains(o.Output.Text, "A=z") || strings.Contains(o.Output.Text, "Q?") {
		t.Fatalf("SendText = %+v, %v; want the answer without the prompt", o, err)
	}
}
