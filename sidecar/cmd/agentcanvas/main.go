// Command agentcanvas is the AgentCanvas sidecar: the JSON-RPC server the VS Code extension
// talks to (serve) and the same engine for terminals and CI (validate, patterns, sandbox,
// proposal, protocol, run, version). Each subcommand lives in its own cmd_<name>.go file and
// registers itself in init, so subcommands can be added without touching this file.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"

	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

// Exit codes shared by every subcommand (the README's command table says which each gives).
const (
	exitOK    = 0
	exitFail  = 1 // validation errors, refusal, conflict, failed run
	exitUsage = 2 // bad flags or I/O errors
)

// command is one subcommand. run gets the arguments after the subcommand name.
type command struct {
	name    string
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
	// short: one short task, whose garbage is not worth collecting (collectLate).
	short bool
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("agentcanvas: subcommand registered twice: " + c.name)
	}
	commands[c.name] = c
}

func main() {
	os.Exit(runProcess(os.Args[1:]))
}

// runProcess is run as the whole process (the tests call run in theirs, and this when they
// start the command as its own): a short command first sets the collector for a short life.
func runProcess(args []string) int {
	if len(args) > 0 && commands[args[0]] != nil && commands[args[0]].short {
		collectLate()
	}
	return run(args, os.Stdin, os.Stdout, os.Stderr)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stderr)
		return exitUsage
	case len(args) == 2 && args[0] == "help" && commands[args[1]] != nil:
		args = []string{args[1], "--help"} // help CMD is CMD --help
	case isHelp(args[0]):
		usage(stdout)
		return exitOK
	case args[0] == "--version":
		args[0] = "version"
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "agentcanvas: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	// stderr carries only plain text (warnings, errors, refusals, prompts): nothing an agent
	// or a file wrote reaches the terminal raw through it.
	return c.run(args[1:], stdin, stdout, termsafe.Writer(stderr))
}

// lateHeap is the heap at which a short command's garbage collector starts after all.
const lateHeap = 256 << 20

// collectLate turns the garbage collector off until the heap nears lateHeap, unless GOGC or
// GOMEMLIMIT say otherwise. A short command exits before its garbage matters: the collections
// of an apply of 100 files (a few MB allocated) cost a tenth of its time.
func collectLate() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(lateHeap)
	debug.SetGCPercent(-1)
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s <command> [arguments]\n", invokedAs())
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Run '%s <command> --help' for what a command does and its flags; '%s doctor' before a first real run.\n", invokedAs(), invokedAs())
}
