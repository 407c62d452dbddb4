package pty

import (
	"bytes"
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

// sessionOf reads the session id from /proc/<pid>/stat, or -1.
func sessionOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The command name may contain spaces and parentheses: fields are
	// counted after the last ')'. After it: state ppid pgrp session.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 4 {
		return -1
	}
	sid, err := strconv.Atoi(string(fields[3]))
	if err != nil {
		return -1
	}
	return sid
}
