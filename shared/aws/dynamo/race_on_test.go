//go:build race

package dynamo

// raceDetector is true when the tests run under the race detector.
const raceDetector = true
