package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/server"
)

func init() {
	register(&command{
		name:    "serve",
		summary: "run the JSON-RPC server the editor extension talks to (stdin/stdout)",
		run:     runServe,
	})
}

// services wires the domain packages into the server; each file that wires one (when its
// package lands) appends to it in init.
var services server.Services

func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCmdFlags("serve", `usage: agentcanvas serve [--stdio] [--max-message-bytes N]
The JSON-RPC server the editor extension talks to: JSON-RPC 2.0 with Content-Length framing
on stdin/stdout (docs/protocol.md); logs go to stderr.
Exit status: 0 when the editor ends the session, 2 usage.`, stdout, stderr)
	fs.Bool("stdio", true, "speak JSON-RPC on stdin/stdout (the only transport; accepted for editors that pass it)")
	maxFrame := fs.Int("max-message-bytes", server.DefaultMaxFrame, "largest message accepted, in bytes")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fs.usageError("unexpected argument %q", fs.Arg(0))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Read the parent now, not in the goroutine: it may first run after the parent died.
	go exitWithParent(ctx, cancel, os.Getppid(), stderr)

	srv := server.New(server.Options{Version: version, Log: stderr, MaxFrame: *maxFrame, Services: services,
		TestHooks: os.Getenv("AGENTCANVAS_SERVE_TEST_HOOKS") == "1"})
	return srv.Run(ctx, stdin, stdout)
}

// exitWithParent ends the server when the process that started it dies (the process is
// then re-parented), so a crashed editor never leaves an orphaned sidecar.
func exitWithParent(ctx context.Context, cancel context.CancelFunc, parent int, stderr io.Writer) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if os.Getppid() != parent {
				fmt.Fprintln(stderr, "agentcanvas serve: parent process exited; stopping")
				cancel()
				return
			}
		}
	}
}
