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
		run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			fs := newCmdFlags("version", "usage: agentcanvas version\nPrints the version, the platform and the Go release it was built with.\nExit status: 0.", stdout, stderr)
			if code, ok := fs.parse(args); !ok {
				return code
			}
			if fs.NArg() > 0 {
				return fs.usageError("unexpected argument %q", fs.Arg(0))
			}
			fmt.Fprintf(stdout, "agentcanvas %s %s/%s %s\n", version, runtime.GOOS, runtime.GOARCH, runtime.Version())
			return exitOK
		},
	})
}
