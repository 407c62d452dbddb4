package runtime_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"winx/guardian/daemon"
	"winx/guardian/runtime"
	"winx/guardian/wire"
)

// lockedBuffer is a log sink the factory may write from any goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDaemonSkewWinxdBinOfAnotherBuild: when the winxd binary the adapter
// starts is itself of another build than the adapter, restarting winxd
// would start the same build again; the adapter talks to it across builds
// and says so in its log, once per winxd, instead of restarting it on every
// session start. A factory that never starts winxd never stops it either.
func TestDaemonSkewWinxdBinOfAnotherBuild(t *testing.T) {
	rt := newDaemonRuntime(t)
	var log lockedBuffer
	opts := rt.opts
	opts.Build = wire.Build{Module: "winx", Version: "v0.0.0-adapter-of-another-build"}
	opts.Logger = slog.New(slog.NewTextHandler(&log, nil))
	f, err := runtime.Daemon(opts)
	if err != nil {
		t.Fatal(err)
	}
	winxd := func() wire.Hello {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c := &daemon.Client{Socket: opts.Socket, Hello: wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)}
		h, err := c.Ping(ctx)
		if err != nil {
			t.Fatalf("winxd does not answer: %v", err)
		}
		return h
	}
	start := func(f runtime.Factory, id string) {
		t.Helper()
		st, err := f(t.Context(), runtime.Spec{Principal: "p", Dir: t.TempDir(), ExternalID: id})
		if err != nil {
			t.Fatalf("session %s: %v", id, err)
		}
		st.Terminal.Release(t.Context())
	}
	first, err := daemon.Start(t.Context(), opts.Socket, wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret), *opts.Start)
	if err != nil {
		t.Fatal(err)
	}
	if first.Build == opts.Build {
		t.Fatalf("winxd build %+v equals the adapter's: the test needs two builds", first.Build)
	}
	start(f, "one")
	if again := winxd(); again.PID != first.PID {
		t.Errorf("winxd restarted (pid %d -> %d) into the same build it ran", first.PID, again.PID)
	}
	start(f, "two")
	if again := winxd(); again.PID != first.PID {
		t.Errorf("winxd restarted (pid %d -> %d) into the same build it ran", first.PID, again.PID)
	}
	if n := strings.Count(log.String(), "talking to a winxd of another build"); n != 1 {
		t.Errorf("%d warnings about the other build, want 1:\n%s", n, log.String())
	}

	noStart := opts
	noStart.Start = nil
	g, err := runtime.Daemon(noStart)
	if err != nil {
		t.Fatal(err)
	}
	start(g, "three")
	if again := winxd(); again.PID != first.PID {
		t.Errorf("a factory that never starts winxd restarted it (pid %d -> %d)", first.PID, again.PID)
	}
}
