package pty

import (
	"os"
	"strconv"
	"syscall"
)

// killSession sends SIGKILL to every process of the terminal session sid.
// An interactive shell with job control puts each background job in a
// process group of its own, so killing the shell's group alone would leave
// those jobs running; the session (the shell is its leader) holds them all.
// The scan of /proc runs twice to catch children forked during the first.
func killSession(sid int) {
	self := os.Getpid()
	for pass := 0; pass < 2; pass++ {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			if sessionOf(pid) == sid {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// sessionOf reads the session id of pid, or -1.
func sessionOf(pid int) int {
	st, ok := ReadProcStat(pid)
	if !ok {
		return -1
	}
	return st.Session
}
