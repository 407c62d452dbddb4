//go:build linux

package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"winx/guardian/remote"
	"winx/pty"
)

// watcher holds a pidfd for every guardian winxd knows and waits on all of
// them with one epoll instance, on one goroutine (loop): a guardian costs a
// descriptor, not a blocked goroutine or thread. Each guardian that exits
// is reported once, to exited, on a goroutine of its own; loop waits for
// those before it returns.
type watcher struct {
	log    *slog.Logger
	exited func(context.Context, watched) // set before start

	handlers sync.WaitGroup // the exited calls in flight

	mu sync.Mutex // guards everything below
	// epfd is the epoll instance and wake an eventfd in it that ends loop;
	// both -1 before start and after loop ended.
	epfd, wake int
	ctx        context.Context // loop's, for the exited calls; set by start
	byFD       map[int]*watched
	bySocket   map[string]*watched
}

// watched is one guardian being watched.
type watched struct {
	socket string
	pid    int
	pidfd  int // -1 when the guardian was found gone before it was watched
	// proc is the guardian when this winxd spawned it (its child): its
	// exit status is known. nil for a guardian found from its record.
	proc *remote.Process
}

func newWatcher(log *slog.Logger) *watcher {
	return &watcher{log: log, epfd: -1, wake: -1, byFD: map[int]*watched{}, bySocket: map[string]*watched{}}
}

// start creates the epoll instance; guardians watched before it are not.
func (w *watcher) start(ctx context.Context) error {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("epoll_create1", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return os.NewSyscallError("eventfd", err)
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake)}); err != nil {
		unix.Close(epfd)
		unix.Close(wake)
		return os.NewSyscallError("epoll_ctl", err)
	}
	w.mu.Lock()
	w.epfd, w.wake, w.ctx = epfd, wake, ctx
	w.mu.Unlock()
	return nil
}

// loop reports every watched guardian that exits until ctx ends, then
// closes every descriptor and waits for the reports in flight.
func (w *watcher) loop(ctx context.Context) {
	w.mu.Lock()
	epfd, wake := w.epfd, w.wake
	w.mu.Unlock()
	if epfd < 0 {
		return
	}
	stop := context.AfterFunc(ctx, func() {
		unix.Write(wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	})
	defer stop()
	events := make([]unix.EpollEvent, 32)
	for ctx.Err() == nil {
		n, err := unix.EpollWait(epfd, events, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			w.log.Error("watching guardians stopped", "err", os.NewSyscallError("epoll_wait", err))
			break
		}
		for _, ev := range events[:n] {
			if int(ev.Fd) != wake {
				w.fired(int(ev.Fd))
			}
		}
	}
	w.mu.Lock()
	for fd := range w.byFD {
		unix.Close(fd)
	}
	clear(w.byFD)
	clear(w.bySocket)
	unix.Close(w.epfd)
	unix.Close(w.wake)
	w.epfd, w.wake = -1, -1
	w.mu.Unlock()
	w.handlers.Wait()
}

// fired reports the guardian whose pidfd became readable: it exited.
func (w *watcher) fired(fd int) {
	w.mu.Lock()
	wd := w.byFD[fd]
	if wd != nil {
		w.forgetLocked(wd)
	}
	w.mu.Unlock()
	if wd != nil {
		w.report(*wd)
	}
}

// forgetLocked stops watching wd and closes its pidfd.
func (w *watcher) forgetLocked(wd *watched) {
	delete(w.byFD, wd.pidfd)
	if w.bySocket[wd.socket] == wd {
		delete(w.bySocket, wd.socket)
	}
	unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, wd.pidfd, nil)
	unix.Close(wd.pidfd)
	wd.pidfd = -1
}

// report calls exited for wd on a goroutine of its own, unless the
// watcher is not running.
func (w *watcher) report(wd watched) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.epfd < 0 {
		return
	}
	ctx := w.ctx
	w.handlers.Go(func() { w.exited(ctx, wd) })
}

// add watches wd (its pidfd open); it takes the descriptor.
func (w *watcher) add(wd *watched) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if old := w.bySocket[wd.socket]; w.epfd < 0 || (old != nil && old.pid == wd.pid) {
		// Watched already: found from its record by a sweep or the
		// rediscovery at start while it was being spawned. The spawner
		// knows more: how it will end.
		if old != nil && old.proc == nil {
			old.proc = wd.proc
		}
		unix.Close(wd.pidfd)
		return
	}
	// Level-triggered: a guardian that exited already is reported at once.
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, wd.pidfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wd.pidfd)}); err != nil {
		w.log.Warn("watch a guardian", "pid", wd.pid, "socket", wd.socket, "err", os.NewSyscallError("epoll_ctl", err))
		unix.Close(wd.pidfd)
		return
	}
	w.byFD[wd.pidfd] = wd
	w.bySocket[wd.socket] = wd
}

// running reports whether guardians are being watched.
func (w *watcher) running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.epfd >= 0
}

// watching reports whether the guardian pid of socket is watched.
func (w *watcher) watching(socket string, pid int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	wd := w.bySocket[socket]
	return wd != nil && wd.pid == pid
}

// watchChild watches a guardian this process spawned. Its pid cannot name
// another process while it is not reaped, and only p's own waiter reaps it
// (package pty keeps the orphan reaper off it), so a pidfd opened before
// p is done is the guardian's.
func (w *watcher) watchChild(p *remote.Process) {
	fd, err := unix.PidfdOpen(p.PID, 0)
	if err != nil && !errors.Is(err, unix.ESRCH) {
		w.log.Warn("watch a guardian", "pid", p.PID, "socket", p.Socket, "err", os.NewSyscallError("pidfd_open", err))
		return
	}
	select {
	case <-p.Done():
		if err == nil {
			unix.Close(fd)
		}
		w.report(watched{socket: p.Socket, pid: p.PID, pidfd: -1, proc: p})
		return
	default:
	}
	w.add(&watched{socket: p.Socket, pid: p.PID, pidfd: fd, proc: p})
}

// watchFound watches the guardian pid of socket that this winxd did not
// spawn: one found from its record after a restart of winxd, or started by
// hand. The pidfd is opened first and the process confirmed afterwards
// (confirm: it is the guardian of socket), so a pid reused by another
// process is never watched in its place. A guardian gone already, or a pid
// that is not the guardian's any more, is reported as exited: the report's
// handler looks at the record and the socket before it removes anything.
func (w *watcher) watchFound(socket string, pid int, confirm func() bool) {
	if !w.running() || w.watching(socket, pid) {
		return
	}
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		w.report(watched{socket: socket, pid: pid, pidfd: -1})
		return
	case err != nil:
		w.log.Warn("watch a guardian", "pid", pid, "socket", socket, "err", os.NewSyscallError("pidfd_open", err))
		return
	}
	if !confirm() {
		unix.Close(fd)
		w.report(watched{socket: socket, pid: pid, pidfd: -1})
		return
	}
	w.add(&watched{socket: socket, pid: pid, pidfd: fd})
}

// killGuardian sends SIGKILL to the guardian pid of socket through a pidfd
// (opened, then confirmed: never to a process that took a reused pid) and
// waits until it is gone, at most limit.
func (w *watcher) killGuardian(socket string, pid int, confirm func() bool, limit time.Duration) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return os.NewSyscallError("pidfd_open", err)
	}
	defer unix.Close(fd)
	if !confirm() {
		return fmt.Errorf("daemon: pid %d is not the guardian of %s", pid, socket)
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return os.NewSyscallError("pidfd_send_signal", err)
	}
	deadline := time.Now().Add(limit)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds())+1)
		if n > 0 {
			return nil
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			return os.NewSyscallError("poll", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("daemon: the guardian %d of %s did not die within %v", pid, socket, limit)
		}
	}
}

// becomeSubreaper makes this process the child subreaper of its
// descendants (package pty) until ctx ends: the orphans a dying guardian
// leaves are reparented here, not to init, and killOrphans finds them.
func becomeSubreaper(ctx context.Context) error { return pty.BecomeSubreaper(ctx) }

// killOrphans kills the processes reparented to this process (and what
// they started), except its own children: the guardians it spawned.
func killOrphans() int { return pty.KillOrphans() }
