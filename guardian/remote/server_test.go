package remote

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"winx/guardian"
)

// A cancel whose launch cannot settle ends the session before it answers:
// killing every process is the only way to be sure none runs.
func TestCancelOfUnsettledLaunchTerminates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := guardian.NewShell(ctx, guardian.Options{Dir: t.TempDir(), PrivateRoot: t.TempDir(), Env: testEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(sess, "k", &ServerOptions{SettleTimeout: 50 * time.Millisecond})
	shell := sess.PID(t.Context())
	// A launch that took the gate and its id and never settles.
	if _, err := srv.registerLaunch("stuck"); err != nil {
		t.Fatal(err)
	}
	srv.gate.tryLaunch()

	_, err = srv.cancel(ctx, &cancelParams{LaunchID: "stuck"})
	if !errors.Is(err, ErrTerminated) || !errors.Is(toClientError(err), guardian.ErrClosed) {
		t.Fatalf("cancel of a stuck launch = %v, want ErrTerminated", err)
	}
	select {
	case <-srv.Done():
	default:
		t.Fatal("the session did not end")
	}
	if !eventually(5*time.Second, func() bool { return !processAlive(shell) }) {
		t.Errorf("shell %d survived the termination", shell)
	}
	// A cancel naming a launch that never arrived refuses that launch.
	srv2 := NewServer(sess, "k", nil)
	if _, err := srv2.cancel(ctx, &cancelParams{LaunchID: "early"}); !errors.Is(err, ErrNoLaunch) {
		t.Fatalf("cancel before launch = %v, want ErrNoLaunch", err)
	}
	if _, err := srv2.run(ctx, &runParams{Command: "true", LaunchID: "early"}); !errors.Is(err, ErrLaunchCancelled) {
		t.Fatalf("launch after its cancel = %v, want ErrLaunchCancelled", err)
	}
}

// toClientError is what a client makes of the server's error.
func toClientError(err error) error { return fromWireError("sock", toWireError(err)) }

// TestMethodTableMatchesCapabilities: the hello announces exactly the
// methods the table serves.
func TestMethodTableMatchesCapabilities(t *testing.T) {
	srv := NewServer(nil, "k", nil)
	caps := Capabilities()
	for name := range srv.table {
		if !slices.Contains(caps, name) {
			t.Errorf("method %s is served but not announced", name)
		}
	}
	for _, c := range caps {
		if _, ok := srv.table[c]; !ok && strings.Contains(c, ".") {
			t.Errorf("method %s is announced but not served", c)
		}
	}
}
