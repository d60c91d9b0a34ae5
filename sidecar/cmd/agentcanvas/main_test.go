package main

import (
	"os"
	"testing"
	"time"
)

// TestMain keeps the tests' runs out of a real CI job's summary: `run` appends to
// $GITHUB_STEP_SUMMARY when it is set, and these tests run flows by the dozen.
//
// With AGENTCANVAS_TEST_AS_CLI=1 the test binary is the agentcanvas command itself (the
// fault tests start it as separate processes, kill it, and run two at once); with
// AGENTCANVAS_TEST_GATE it first waits for that file to exist, so two start together.
func TestMain(m *testing.M) {
	if os.Getenv("AGENTCANVAS_TEST_AS_CLI") == "1" {
		if gate := os.Getenv("AGENTCANVAS_TEST_GATE"); gate != "" {
			for {
				if _, err := os.Stat(gate); err == nil {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		os.Exit(runProcess(os.Args[1:]))
	}
	os.Unsetenv("GITHUB_STEP_SUMMARY")
	os.Exit(m.Run())
}
