package main

import (
	"os"
	"path/filepath"
	"strings"
)

// invokedAs is the command as the person typed it (os.Args[0]: "bin/agentcanvas" after
// `make build`, "agentcanvas" when on the PATH), for hints meant to be copied and pasted.
// A path the shell found on the PATH, or a test binary, prints as "agentcanvas".
func invokedAs() string {
	a := os.Args[0]
	if a == "" || strings.HasSuffix(a, ".test") || filepath.Base(a) != "agentcanvas" {
		return "agentcanvas"
	}
	if !strings.Contains(a, string(filepath.Separator)) {
		return a
	}
	return shellQuote(a)
}
