package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"winx/guardian/remote"
	"winx/guardian/wire"
)

// A dead guardian leaves nothing running, at once. winxd watches every
// guardian it knows through a pidfd (watcher, Linux): those it spawned, and
// those it finds from the records in its socket directory when it starts
// (after a restart of winxd) and at each sweep. When one exits, winxd
// (guardianExited), well within a second:
//
//   - kills the processes reparented to it: winxd is the child subreaper of
//     the guardians it spawned, so a dying guardian's session (its shell,
//     killed by PR_SET_PDEATHSIG, and every command below, those that
//     cleared their environment included) lands here rather than at init;
//   - then, under the socket's lock, if the record still names that
//     guardian and nothing listens on the socket, does what the sweep does
//     for a stale socket, promptly (Cleanup: remote.CleanupDead): it kills
//     every process carrying the session's tag, writes the lost-session
//     record and removes the guardian's record and the socket, keeping the
//     session's journals and jobs record as evidence.
//
// A guardian that ends normally removes its record before its socket, so
// it is not taken for lost (a socket it left is removed all the same); a
// record naming another pid is a new guardian's, left alone. A guardian found after a restart of winxd is
// not this process's child: when it dies its orphans go to init (or to
// whichever subreaper is above the old winxd), beyond killOrphans' reach,
// and its exit status is unknown; the tag still finds every one of its
// processes that kept its environment. The periodic sweep stays as the
// backstop (a guardian that died while no winxd ran, a pidfd that could not
// be opened).

// DefaultKillWait bounds waiting for a guardian that the sweep killed
// (its workspace was removed) to be gone.
const DefaultKillWait = 5 * time.Second

// guardianExited cleans up after the guardian wd, which exited.
func (s *Server) guardianExited(ctx context.Context, wd watched) {
	seen := time.Now()
	orphans := killOrphans()
	loss := remote.Loss{Reason: remote.LostGuardianDied}
	if wd.proc != nil {
		// Its waiter reaps it at once; the status says how it died.
		select {
		case <-wd.proc.Done():
			loss = lossOf(wd.proc.ExitState())
		case <-time.After(time.Second):
		}
	}
	loss.Time = seen
	unlock, err := s.sockets.lock(ctx, wd.socket)
	if err != nil {
		return
	}
	defer unlock()
	r, err := remote.ReadRecord(wd.socket)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// It ended normally (it removes its record first), or was cleaned
		// up already; a socket it left behind still goes.
	case err != nil || r.PID != wd.pid:
		// A record to leave to the sweep, or a new guardian's.
		return
	}
	if alive, err := wire.Probe(ctx, wd.socket); err != nil || alive {
		return
	}
	if err := s.ops.Cleanup(wd.socket, loss); err != nil {
		s.log.Warn("clean up after a dead guardian", "socket", wd.socket, "err", err)
	}
	if r.PID == 0 {
		s.log.Debug("guardian exited", "pid", wd.pid, "socket", wd.socket, "orphans_killed", orphans)
		return
	}
	s.log.Warn("guardian died: its session is lost", "pid", wd.pid, "socket", wd.socket, "signal", loss.Signal,
		"exit_code", loss.ExitCode, "orphans_killed", orphans, "took", time.Since(seen))
}

// lossOf is the loss of a session whose guardian ended with ps (nil when
// unknown).
func lossOf(ps *os.ProcessState) remote.Loss {
	l := remote.Loss{Reason: remote.LostGuardianDied, Time: time.Now()}
	if ps == nil {
		return l
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return l
	}
	switch {
	case ws.Signaled():
		l.Signal = unix.SignalName(ws.Signal())
		l.CoreDumped = ws.CoreDump()
	case ws.Exited():
		code := ws.ExitStatus()
		l.ExitCode = &code
	}
	return l
}

// rediscover watches the guardians whose records are in the socket
// directory: after a restart of winxd they run on, and this winxd did not
// spawn them. One found dead is cleaned up at once.
func (s *Server) rediscover(ctx context.Context) {
	socks, err := s.ops.Sockets()
	if err != nil {
		s.log.Warn("rediscover guardians", "err", err)
		return
	}
	for _, so := range socks {
		r, err := remote.ReadRecord(so)
		if err != nil || r.PID <= 0 {
			continue // the sweep decides about it
		}
		s.watchFound(ctx, so, r.PID)
	}
}

// watchFound watches the guardian pid of socket, which this winxd did not
// spawn.
func (s *Server) watchFound(ctx context.Context, socket string, pid int) {
	s.guards.watchFound(socket, pid, func() bool { return s.isGuardian(ctx, socket, pid) })
}

// isGuardian reports whether process pid is the guardian of socket: its
// arguments name the socket (remote.Spawn passes -socket), or it answers
// there with that pid. The arguments are read without its cooperation, so
// a stopped guardian is recognised too.
func (s *Server) isGuardian(ctx context.Context, socket string, pid int) bool {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		if bytes.Contains(b, []byte("\x00-socket\x00"+socket+"\x00")) || bytes.Contains(b, []byte("\x00-socket="+socket+"\x00")) {
			return true
		}
	}
	g, err := s.ops.Probe(ctx, socket)
	return err == nil && g.PID == pid
}

// watchSpawned watches a guardian this winxd spawned.
func (s *Server) watchSpawned(p *remote.Process) { s.guards.watchChild(p) }

// workspaceGone reports whether the workspace of g was removed: its
// record's (or else its key's) absolute workspace directory does not exist.
// Other errors (a permission, an unmounted network file system) do not
// count.
func workspaceGone(r remote.Record, g Guardian) bool {
	ws := r.Workspace
	if ws == "" {
		if k, ok := ParseSessionKey(g.Status.Key); ok {
			ws = k.Workspace
		}
	}
	if !filepath.IsAbs(ws) {
		return false
	}
	_, err := os.Stat(ws)
	return errors.Is(err, fs.ErrNotExist)
}

// sweepRemovedWorkspace ends the session of g if its workspace directory no
// longer exists, deciding under the socket's lock on a fresh probe. The
// guardian is killed (SIGKILL, through a pidfd), not closed: a close would
// remove the session's journals, which are kept as for a lost session,
// with a lost record whose reason is remote.LostWorkspaceRemoved.
func (s *Server) sweepRemovedWorkspace(ctx context.Context, g Guardian) (bool, error) {
	unlock, err := s.sockets.lock(ctx, g.Socket)
	if err != nil {
		return false, err
	}
	defer unlock()
	now, err := s.ops.Probe(ctx, g.Socket)
	if err != nil || now.Epoch != g.Epoch {
		return false, nil
	}
	r, err := remote.ReadRecord(g.Socket)
	if err != nil || r.PID != now.PID || !workspaceGone(r, now) {
		return false, nil
	}
	confirm := func() bool { return s.isGuardian(ctx, g.Socket, now.PID) }
	if err := s.guards.killGuardian(g.Socket, now.PID, confirm, DefaultKillWait); err != nil {
		return false, err
	}
	killOrphans()
	return true, s.ops.Cleanup(g.Socket, remote.Loss{Reason: remote.LostWorkspaceRemoved, Time: time.Now(), Signal: "SIGKILL"})
}
