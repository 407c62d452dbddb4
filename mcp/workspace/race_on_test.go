//go:build race

package workspace

// raceEnabled: the race detector slows every process start, so the kill
// test does fewer runs under it.
const raceEnabled = true
