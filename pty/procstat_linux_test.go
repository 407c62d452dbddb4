package pty

import (
	"os"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		line string
		want ProcStat
		ok   bool
	}{
		{"42 (bash) S 7 42 42 34816 42 4194560", ProcStat{State: 'S', PPID: 7, PGRP: 42, Session: 42}, true},
		// A command name with spaces and parentheses of its own.
		{"9 (a) b (c) ) Z 1 2 3 0", ProcStat{State: 'Z', PPID: 1, PGRP: 2, Session: 3}, true},
		{"9 (x) S 1 2", ProcStat{}, false},
		{"9 x S 1 2 3", ProcStat{}, false},
		{"9 (x) SS 1 2 3", ProcStat{}, false},
		{"9 (x) S 1 two 3", ProcStat{}, false},
	} {
		got, ok := parseProcStat([]byte(tc.line))
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseProcStat(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
	self, ok := ReadProcStat(os.Getpid())
	if !ok || self.PPID != os.Getppid() || self.State == 0 {
		t.Errorf("ReadProcStat(self) = %+v, %v; want ppid %d", self, ok, os.Getppid())
	}
}
