package pty

import (
	"context"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// started is the set of children this package started and whose reaper
// (Process.reap) has not finished. It is process-wide because a subreaper
// is: the orphan reaper must never wait for one of these, or os/exec's Wait
// would lose its child. Start holds the lock from fork until the child is
// in the set, so the orphan reaper never sees an unregistered one.
var started = struct {
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

// startLocked runs start with the set locked and records the child it
// started.
func startLocked(start func() (int, error)) error {
	started.Lock()
	defer started.Unlock()
	pid, err := start()
	if err == nil {
		started.pids[pid] = true
	}
	return err
}

// reaped removes pid from the set once os/exec has reaped it.
func reaped(pid int) {
	started.Lock()
	delete(started.pids, pid)
	started.Unlock()
}

// withDeathSignal makes the child receive SIGKILL when this process dies
// (PR_SET_PDEATHSIG), unless the caller chose a signal.
func withDeathSignal(a *syscall.SysProcAttr) *syscall.SysProcAttr {
	if a == nil {
		a = &syscall.SysProcAttr{}
	}
	if a.Pdeathsig == 0 {
		a.Pdeathsig = syscall.SIGKILL
	}
	return a
}

// BecomeSubreaper makes this process the child subreaper of its
// descendants (PR_SET_CHILD_SUBREAPER): an orphan among them, a setsid'd
// daemon included, is reparented here instead of to init, so it can be
// found and killed (KillDescendants) instead of escaping. Until ctx ends
// it reaps the adopted orphans that exit; the children this package
// started are left to their own reaper.
func BecomeSubreaper(ctx context.Context) error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", err)
	}
	// SIGCHLD wakes the reaper: an adopted orphan that exits sends it to
	// this process. Signals coalesce, so each wake-up reaps every exited
	// orphan; nothing scans /proc while nothing exits.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	go func() {
		defer signal.Stop(sig)
		for {
			select {
			case <-ctx.Done():
				return
			case <-sig:
				reapOrphans()
			}
		}
	}()
	return nil
}

// reapOrphans waits for every exited child this package did not start.
func reapOrphans() {
	self := os.Getpid()
	started.Lock()
	defer started.Unlock()
	for pid, st := range procTable() {
		if st.ppid != self || st.state != 'Z' || started.pids[pid] {
			continue
		}
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	}
}

// killPasses bounds the rounds of KillDescendants: each kills the whole
// tree seen, and a process forked meanwhile is caught by the next.
const killPasses = 5

// KillDescendants sends SIGKILL to every descendant of this process: the
// children it started, what they started, and the orphans it adopted as a
// subreaper (setsid'd ones included). It is for a process that is ending
// its sessions for good.
func KillDescendants() {
	self := os.Getpid()
	for pass := 0; pass < killPasses; pass++ {
		table := procTable()
		kids := map[int][]int{}
		for pid, st := range table {
			kids[st.ppid] = append(kids[st.ppid], pid)
		}
		n := 0
		var walk func(int)
		walk = func(parent int) {
			for _, pid := range kids[parent] {
				if table[pid].state != 'Z' {
					syscall.Kill(pid, syscall.SIGKILL)
					n++
				}
				walk(pid)
			}
		}
		walk(self)
		if n == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// KillOrphans sends SIGKILL to every child of this process that this
// package did not start (Start, StartCommand), that is to the orphans it
// adopted as a subreaper, and to all their descendants; the reaper of
// BecomeSubreaper reaps them. The children it started, and everything
// below them, are left alone. It returns how many processes it signalled.
// It is for a subreaper whose own children outlive what they orphan: winxd,
// when one of its guardians died and the guardian's session was reparented
// to it.
func KillOrphans() int {
	self := os.Getpid()
	total := 0
	for pass := 0; pass < killPasses; pass++ {
		n := killOrphansOnce(self)
		total += n
		// At least two passes: a process that the first pass saw as its
		// orphan's child may have been reparented here only after the scan
		// read it.
		if n == 0 && pass > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return total
}

// killOrphansOnce is one pass of KillOrphans. It holds the set of started
// children for the whole pass, so a child being started meanwhile is never
// taken for an orphan.
func killOrphansOnce(self int) int {
	started.Lock()
	defer started.Unlock()
	table := procTable()
	kids := map[int][]int{}
	for pid, st := range table {
		kids[st.ppid] = append(kids[st.ppid], pid)
	}
	n := 0
	var kill func(pid int)
	kill = func(pid int) {
		if table[pid].state != 'Z' {
			syscall.Kill(pid, syscall.SIGKILL)
			n++
		}
		for _, c := range kids[pid] {
			kill(c)
		}
	}
	for _, pid := range kids[self] {
		if !started.pids[pid] {
			kill(pid)
		}
	}
	return n
}

// procStat is what procTable reads of one process.
type procStat struct {
	ppid  int
	state byte
}

// procTable reads the parent and state of every process in /proc.
func procTable() map[int]procStat {
	out := map[int]procStat{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := ReadProcStat(pid)
		if !ok {
			continue
		}
		out[pid] = procStat{ppid: st.PPID, state: st.State}
	}
	return out
}
