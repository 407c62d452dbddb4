//go:build race

package edit

// raceEnabled: the race detector slows each 2 MiB write about tenfold, so
// the crash test does fewer, smaller runs under it.
const raceEnabled = true
