package pty

// ProcStat is what winx reads of a process's /proc/<pid>/stat
// (ReadProcStat; on platforms without /proc it finds nothing).
type ProcStat struct {
	State   byte // R, S, D, Z, T, ...
	PPID    int
	PGRP    int
	Session int
}
