package remote

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"winx/guardian"
)

// A cancel for generation N that waits on the launch of N+1 sees N+1 as
// the newest generation once it gets the gate, so it can never act on N+1
// believing it is N.
func TestGateCancelWaitsForLaunch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g gate
		if !g.tryLaunch() {
			t.Fatal("tryLaunch on a free gate = false")
		}
		g.endLaunch(1) // generation N = 1 published

		if !g.tryLaunch() { // the launch of N+1 is in flight
			t.Fatal("second tryLaunch = false")
		}
		got := make(chan uint64, 1)
		go func() {
			cur, err := g.acquire(context.Background(), time.Minute)
			if err != nil {
				t.Errorf("acquire: %v", err)
			}
			got <- cur
		}()
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("acquire returned while a launch held the gate")
		default:
		}
		if g.tryLaunch() {
			t.Fatal("tryLaunch while a launch is in flight = true, want refused at once")
		}
		time.Sleep(time.Second)
		g.endLaunch(2)
		if cur := <-got; cur != 2 {
			t.Fatalf("acquire after the launch = generation %d, want 2", cur)
		}
		if g.tryLaunch() {
			t.Fatal("tryLaunch during an exclusive operation = true")
		}
		g.release()
		if !g.tryLaunch() {
			t.Fatal("tryLaunch after release = false")
		}
		g.endLaunch(0) // a launch that started nothing keeps the generation
		if g.current() != 2 {
			t.Fatalf("current = %d, want 2", g.current())
		}
	})
}

func TestGateUnsettledLaunch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g gate
		g.tryLaunch() // never settles
		start := time.Now()
		_, err := g.acquire(context.Background(), 10*time.Second)
		if !errors.Is(err, ErrLaunchUnsettled) {
			t.Fatalf("acquire = %v, want ErrLaunchUnsettled", err)
		}
		if waited := time.Since(start); waited != 10*time.Second {
			t.Errorf("gave up after %v, want the settle timeout of 10s", waited)
		}
	})
}

// The settle timeout applies to launches only: an exclusive operation that
// takes long (an interrupt escalating to a reset) is waited for.
func TestGateWaitsForExclusive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g gate
		g.acquire(context.Background(), time.Second)
		done := make(chan error, 1)
		go func() {
			_, err := g.acquire(context.Background(), time.Second)
			done <- err
		}()
		time.Sleep(time.Minute)
		g.release()
		if err := <-done; err != nil {
			t.Fatalf("acquire after a long exclusive operation = %v", err)
		}
		g.release()

		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		g.tryLaunch()
		if _, err := g.acquire(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("acquire with an ending context = %v", err)
		}
	})
}

func TestDeliveries(t *testing.T) {
	var d deliveries
	out := func(s string) *guardian.Outcome { return &guardian.Outcome{Output: guardian.Shaped{Text: s}} }

	if seq := d.take("fg:1", out("")); seq != 0 {
		t.Fatalf("take(empty) = %d, want 0", seq)
	}
	o := out("a")
	s1 := d.take("fg:1", o)
	if s1 == 0 || o.Output.Text != "a" {
		t.Fatalf("take(a) = %d, %q", s1, o.Output.Text)
	}
	o = out("b") // the answer carrying "a" was never acknowledged
	s2 := d.take("fg:1", o)
	if o.Output.Text != "a\nb" {
		t.Fatalf("redelivery = %q, want a\\nb", o.Output.Text)
	}
	d.ack(s1) // stale: the text travels with s2 now
	if o = out(""); d.take("fg:1", o) == 0 || o.Output.Text != "a\nb" {
		t.Fatalf("after a stale ack = %q, want a\\nb pending", o.Output.Text)
	}
	d.ack(s2 + 1)
	if o = out("c"); d.take("fg:1", o) == 0 || o.Output.Text != "c" {
		t.Fatalf("after ack = %q, want c", o.Output.Text)
	}
	d.take("bg:bg-1", out("bg"))
	d.forgetForeground("fg:2")
	if o = out(""); d.take("fg:1", o) != 0 {
		t.Fatalf("an older generation's text survived a new command: %q", o.Output.Text)
	}
	if o = out(""); d.take("bg:bg-1", o) == 0 || o.Output.Text != "bg" {
		t.Fatalf("background text = %q, want bg kept", o.Output.Text)
	}

	// A look whose last line was open is followed by one that carries
	// that line again: it appears once.
	if m := mergeShaped(guardian.Shaped{Text: "one\nOverwrite? ", Open: true}, guardian.Shaped{Text: "Overwrite? y\ndone"}); m.Text != "one\nOverwrite? y\ndone" || m.Open {
		t.Errorf("merge after an open line = %q (open %v)", m.Text, m.Open)
	}
	if m := mergeShaped(guardian.Shaped{Text: "ab", Open: true}, guardian.Shaped{}); m.Text != "ab" {
		t.Errorf("merge with an empty look lost the open line: %q", m.Text)
	}

	big := strings.Repeat("line\n", maxRedeliverBytes/5)
	m := mergeShaped(guardian.Shaped{Text: big}, guardian.Shaped{Text: "tail", Redactions: 1})
	if len(m.Text) > maxRedeliverBytes+100 || !strings.HasSuffix(m.Text, "\ntail") || m.DroppedBytes == 0 || m.Redactions != 1 {
		t.Fatalf("merge over the bound: %d bytes, dropped %d, suffix %q", len(m.Text), m.DroppedBytes, m.Text[len(m.Text)-10:])
	}
}
