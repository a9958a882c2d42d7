//go:build !race

package cli_test

// raceDetector is true in a build with the race detector, which slows everything about tenfold:
// tests that flood a tap send less under it.
const raceDetector = false
