package main

import (
	"fmt"
	"io"
	"runtime"
)

// version is set at link time: -ldflags "-X main.version=v1.2.3".
var version = "0.1.0-dev"

func init() {
	register(&command{
		name:    "version",
		summary: "print the version",
		run: func(args []string, _ io.Reader, stdout, _ io.Writer) int {
			fmt.Fprintf(stdout, "agentcanvas %s %s/%s %s\n", version, runtime.GOOS, runtime.GOARCH, runtime.Version())
			return exitOK
		},
	})
}
