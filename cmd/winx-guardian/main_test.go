package main

import (
	"runtime"
	"testing"
)

func TestLimitProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(4)
	t.Setenv("GOMAXPROCS", "")
	limitProcs()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS unset: %d processors, want 1", got)
	}
	runtime.GOMAXPROCS(4)
	t.Setenv("GOMAXPROCS", "4")
	limitProcs()
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Errorf("GOMAXPROCS=4 in the environment: %d processors, want the user's 4", got)
	}
}
