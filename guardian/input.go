package guardian

import (
	"os"
	"strconv"
	"strings"
	"time"

	"winx/pty"

	"syscall"
)

// inputQuiet is how long a command blocked reading its terminal must have
// printed nothing before it is reported as waiting for input: a prompt is
// usually followed by silence, while a program that reads and writes in a
// loop is not waiting for anyone.
const inputQuiet = 300 * time.Millisecond

// inputCheckEvery is how often a waiting caller looks at the foreground
// group's leader once output went quiet; inputScanEvery how often at all
// of the group's processes.
const (
	inputCheckEvery = 100 * time.Millisecond
	inputScanEvery  = time.Second
)

// maxProcScan bounds the /proc entries looked at per check.
const maxProcScan = 1 << 16

// readingTerminal reports whether a process of the terminal's foreground
// process group pgrp is blocked in a read of the terminal that ttyPid has
// as its standard input (the shell of that terminal). It asks the kernel,
// never the screen: /proc/<pid>/syscall names the system call a sleeping
// process is in and its first argument (the descriptor), and
// /proc/<pid>/fd/<n> says which file that descriptor is. On Linux 6.x a
// bash `read`, `cat` and Python's input() all show `read(0, ...)` there.
// Any error (another kernel, no /proc) reports false: the command is then
// reported as running, as before.
//
// With leaderOnly, only the group's leader is looked at: a scan of /proc
// costs a read per process, so callers do it seldom.
func readingTerminal(ttyPid, pgrp int, leaderOnly bool) bool {
	tty, err := os.Readlink("/proc/" + strconv.Itoa(ttyPid) + "/fd/0")
	if err != nil || !strings.HasPrefix(tty, "/dev/") {
		return false
	}
	// The group leader is checked first: it is the reader in nearly every
	// case (a builtin read runs in the shell, a single program leads its
	// own group).
	if blockedReading(pgrp, tty) {
		return true
	}
	if leaderOnly {
		return false
	}
	d, err := os.Open("/proc")
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(maxProcScan)
	if err != nil && len(names) == 0 {
		return false
	}
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == pgrp {
			continue
		}
		if processGroup(pid) == pgrp && blockedReading(pid, tty) {
			return true
		}
	}
	return false
}

// processGroup is pid's process group, or -1.
func processGroup(pid int) int {
	st, ok := pty.ReadProcStat(pid)
	if !ok {
		return -1
	}
	return st.PGRP
}

// blockedReading reports whether pid sleeps in read(2) on a descriptor
// that is tty.
func blockedReading(pid int, tty string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return false // "running" or "-1 ...": not in a system call
	}
	nr, err := strconv.Atoi(f[0])
	if err != nil || (nr != syscall.SYS_READ && nr != syscall.SYS_READV) {
		return false
	}
	fd, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 31)
	if err != nil {
		return false
	}
	target, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.FormatUint(fd, 10))
	return err == nil && target == tty
}
