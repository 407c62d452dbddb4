package pty

import (
	"bytes"
	"os"
	"strconv"
)

// ReadProcStat reads /proc/<pid>/stat; ok is false when the process is
// gone or its line cannot be read.
func ReadProcStat(pid int) (st ProcStat, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return st, false
	}
	return parseProcStat(b)
}

// parseProcStat parses one stat line. The command name may hold spaces and
// parentheses, so the fields are counted after its last ')': state, ppid,
// pgrp, session.
func parseProcStat(b []byte) (st ProcStat, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return st, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return st, false
	}
	var n [3]int
	for k := range n {
		v, err := strconv.Atoi(string(f[k+1]))
		if err != nil {
			return st, false
		}
		n[k] = v
	}
	return ProcStat{State: f[0][0], PPID: n[0], PGRP: n[1], Session: n[2]}, true
}
