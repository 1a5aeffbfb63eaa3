//go:build race

package host_test

// raceDetector: under the race detector every operation is about ten times slower, and a test
// that makes a hundred thousand of them in one goroutine finds no race the shorter one would
// not.
const raceDetector = true
