package main

import (
	"os"
	"testing"
)

// TestMain keeps the tests' runs out of a real CI job's summary: `run` appends to
// $GITHUB_STEP_SUMMARY when it is set, and these tests run flows by the dozen.
func TestMain(m *testing.M) {
	os.Unsetenv("GITHUB_STEP_SUMMARY")
	os.Exit(m.Run())
}
