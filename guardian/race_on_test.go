//go:build race

package guardian

// raceEnabled: under the race detector rendering is several times slower
// and its shadow memory inflates RSS, so the flood test, which measures
// both, runs only in the build without it (build.sh test runs it there).
const raceEnabled = true
