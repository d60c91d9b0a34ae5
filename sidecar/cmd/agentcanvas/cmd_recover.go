package main

import (
	"context"
	"fmt"
	"io"

	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// recoverFirst finishes or rolls back an interrupted apply before a command reads the
// workspace's proposal state, and says so in one line; false when that failed (told).
func recoverFirst(ws string, stderr io.Writer) bool {
	notice, err := proposal.Recover(context.Background(), ws)
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas: %v\n", err)
		return false
	}
	if notice != "" {
		fmt.Fprintf(stderr, "agentcanvas: %s\n", notice)
	}
	return true
}

// waitingNote tells the person once that another writer holds the workspace lock.
func waitingNote(stderr io.Writer) func(holder string) {
	return func(holder string) {
		if holder == "" {
			holder = "another process"
		}
		fmt.Fprintf(stderr, "agentcanvas: waiting for the workspace lock, held by %s\n", holder)
	}
}
