package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"winx/guardian/daemon"
	"winx/guardian/wire"
)

// SkewRestartInterval is how often at most one adapter process restarts
// winxd into its own build. Two adapters of different builds sharing one
// winxd would otherwise take turns restarting it on every session start;
// with this bound each restarts it at most once per interval and otherwise
// talks to the other build's winxd across builds (the wire protocol's
// version negotiation still refuses an incompatible one), with a warning in
// its log. Talking across builds rather than refusing keeps a mismatched
// installation (a winxd binary of another build next to winx) usable.
const SkewRestartInterval = 5 * time.Minute

// skewGuard connects an adapter to winxd and keeps winxd on the adapter's
// build: a winxd whose hello names another build is restarted (a planned
// restart, as `winx restart-daemon` does: its guardians keep running, and
// guardians of older builds keep serving their sessions until those end)
// into the winxd binary the adapter starts, at most once per
// SkewRestartInterval. One guard serves one factory, that is one adapter
// process.
type skewGuard struct {
	socket string
	hello  wire.Hello
	start  *daemon.StartOptions // nil: never start winxd, so never restart it
	log    *slog.Logger
	every  time.Duration
	now    func() time.Time

	mu   sync.Mutex // serializes restarts of this adapter
	last time.Time  // this adapter's last planned restart

	wmu    sync.Mutex
	warned string // epoch of the winxd last warned about

	cmu     sync.Mutex // serializes checkOnce
	checked bool       // a connect of this adapter succeeded
}

func newSkewGuard(socket string, hello wire.Hello, start *daemon.StartOptions, log *slog.Logger) *skewGuard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &skewGuard{socket: socket, hello: hello, start: start, log: log, every: SkewRestartInterval, now: time.Now}
}

// connect returns a client of winxd (starting it when nothing answers),
// first restarting a winxd of another build into this adapter's build when
// the guard allows it.
func (g *skewGuard) connect(ctx context.Context) (*daemon.Client, error) {
	c, peer, err := daemon.Connect(ctx, g.socket, g.hello, g.start)
	if err != nil || peer.Build == g.hello.Build {
		return c, err
	}
	if !g.restart(ctx, peer) {
		return c, nil
	}
	c, peer, err = daemon.Connect(ctx, g.socket, g.hello, g.start)
	if err == nil && peer.Build != g.hello.Build {
		g.warn(peer, "the winxd started after a planned restart is of another build too")
	}
	return c, err
}

// checkOnce connects once per adapter (until a connect succeeds), so a
// session start that needs no winxd call (a guardian attached on its own
// socket) still restarts a winxd of another build, as the first session
// start of an adapter always did. It returns the client when it connected
// now, nil otherwise. A winxd that cannot be reached is no error here: the
// guardian may still answer.
func (g *skewGuard) checkOnce(ctx context.Context) *daemon.Client {
	g.cmu.Lock()
	defer g.cmu.Unlock()
	if g.checked {
		return nil
	}
	c, err := g.connect(ctx)
	if err != nil {
		return nil
	}
	g.checked = true
	return c
}

// restart restarts the winxd that answered with peer into this adapter's
// build unless this adapter did so within the interval (then it warns);
// true means the caller connects again.
func (g *skewGuard) restart(ctx context.Context, peer wire.Hello) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	// Another session start of this adapter may have restarted it while
	// this one waited for the lock.
	c := &daemon.Client{Socket: g.socket, Hello: g.hello}
	if now, err := c.Ping(ctx); err == nil {
		if now.Build == g.hello.Build {
			return true
		}
		peer = now
	}
	switch {
	case g.start == nil:
		g.warn(peer, "this adapter does not start winxd, so it cannot restart it")
		return false
	case runsFile(peer.PID, g.start.Bin):
		// A restart would start the very same build again: the winxd
		// binary this adapter starts (WINXD_BIN, or the one next to winx)
		// is itself of another build.
		g.warn(peer, "it runs the winxd binary this adapter starts ("+g.start.Bin+"), which is of another build")
		return false
	case !g.last.IsZero() && g.now().Sub(g.last) < g.every:
		g.warn(peer, fmt.Sprintf("this adapter restarted winxd less than %v ago (a restart loop with an adapter of another build is avoided)", g.every))
		return false
	}
	g.last = g.now()
	reason := fmt.Sprintf("planned restart into the adapter's build %s (pid %d); it ran %s", formatBuild(g.hello.Build), g.hello.PID, formatBuild(peer.Build))
	r, err := daemon.Restart(ctx, g.socket, g.hello, *g.start, reason)
	if err != nil {
		g.log.Warn("winxd restart into this adapter's build failed", "old_pid", peer.PID, "old_build", formatBuild(peer.Build), "err", err)
		return true
	}
	g.log.Info("winxd restarted into this adapter's build; its guardians keep running",
		"old_pid", r.Old.PID, "old_build", formatBuild(peer.Build), "new_pid", r.New.PID, "new_build", formatBuild(r.New.Build))
	return true
}

// warn logs, once per winxd incarnation, that this adapter talks to a
// winxd of another build.
func (g *skewGuard) warn(peer wire.Hello, why string) {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	if peer.Epoch != "" && peer.Epoch == g.warned {
		return
	}
	g.warned = peer.Epoch
	g.log.Warn("talking to a winxd of another build: "+why,
		"winxd_pid", peer.PID, "winxd_build", formatBuild(peer.Build), "adapter_build", formatBuild(g.hello.Build))
}

// runsFile reports whether process pid executes the file bin now names
// (Linux: /proc/<pid>/exe is the executed file even after it was replaced
// or removed, so a winxd started before bin was reinstalled does not).
func runsFile(pid int, bin string) bool {
	if pid <= 0 || bin == "" {
		return false
	}
	running, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false
	}
	named, err := os.Stat(bin)
	return err == nil && os.SameFile(running, named)
}

// formatBuild renders a build on one line for the log.
func formatBuild(b wire.Build) string {
	rev := b.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if b.Modified {
		rev += "+dirty"
	}
	return fmt.Sprintf("%s %s rev %s %s", b.Module, b.Version, rev, b.GoVersion)
}
