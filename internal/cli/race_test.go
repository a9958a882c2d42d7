//go:build race

package cli_test

// raceDetector is true in a build with the race detector (see norace_test.go).
const raceDetector = true
