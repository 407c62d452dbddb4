package pty

// killSession is a no-op on darwin, which has no /proc; Close still kills
// the shell's own process group.
func killSession(sid int) {}

// ProcStat is what winx reads of a process's /proc/<pid>/stat.
type ProcStat struct {
	State   byte
	PPID    int
	PGRP    int
	Session int
}

// ReadProcStat finds nothing on darwin, which has no /proc.
func ReadProcStat(int) (ProcStat, bool) { return ProcStat{}, false }
