//go:build race

package derive

// raceDetector is true in a build with the race detector, which slows everything about tenfold:
// timing tests measure less under it.
const raceDetector = true
