//go:build race

package main

// raceEnabled: the race detector slows the adapter several times over, so
// the tests that repeat real kills make fewer runs under it.
const raceEnabled = true
