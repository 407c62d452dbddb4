//go:build !linux

package pty

// ReadProcStat finds nothing on this platform, which has no /proc.
func ReadProcStat(int) (ProcStat, bool) { return ProcStat{}, false }
