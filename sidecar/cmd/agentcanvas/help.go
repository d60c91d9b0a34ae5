package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Every subcommand speaks of itself the same way: `--help` (or -h) prints its usage, what it
// does and every flag on stdout and exits 0, so `agentcanvas run --help | less` works; a
// mistake in the arguments prints what is wrong and the usage lines on stderr and exits 2.

// cmdFlags is a subcommand's flag set with its help text.
type cmdFlags struct {
	*flag.FlagSet
	// usage is the "usage: agentcanvas NAME …" lines, then what the command does (its exit
	// status last); the flags are listed after it.
	usage          string
	stdout, stderr io.Writer
	parseErr       bytes.Buffer // what the flag package says of a mistake
}

// newCmdFlags makes the flag set of `agentcanvas NAME` ("run", "proposal apply").
func newCmdFlags(name, usage string, stdout, stderr io.Writer) *cmdFlags {
	c := &cmdFlags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), usage: strings.TrimRight(usage, "\n"), stdout: stdout, stderr: stderr}
	c.SetOutput(&c.parseErr)
	c.Usage = func() {} // parse says what is wrong itself
	return c
}

// parse reads args (flags before or after the positional arguments). ok is false when the
// command is to end now with code: 0 after --help, 2 after a mistake.
func (c *cmdFlags) parse(args []string) (code int, ok bool) {
	c.parseErr.Reset()
	err := parseAnywhere(c.FlagSet, args)
	switch {
	case err == nil:
		return exitOK, true
	case errors.Is(err, flag.ErrHelp):
		c.help(c.stdout)
		return exitOK, false
	}
	msg := strings.TrimSpace(c.parseErr.String())
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return c.usageError("%s", firstNonEmptyStr(msg, err.Error())), false
}

// usageError says what is wrong with the arguments, then the usage lines, on stderr, and
// returns the usage exit code.
func (c *cmdFlags) usageError(format string, a ...any) int {
	fmt.Fprintf(c.stderr, "agentcanvas %s: %s\n", c.Name(), fmt.Sprintf(format, a...))
	for _, l := range strings.Split(c.usage, "\n") {
		if !strings.HasPrefix(l, "usage: ") && !strings.HasPrefix(l, "       ") {
			break
		}
		fmt.Fprintln(c.stderr, l)
	}
	fmt.Fprintf(c.stderr, "Run '%s %s --help' for what it does and every flag.\n", invokedAs(), c.Name())
	return exitUsage
}

// help writes the usage, what the command does and its flags.
func (c *cmdFlags) help(w io.Writer) {
	fmt.Fprintln(w, c.usage)
	n := 0
	c.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nflags:")
	c.VisitAll(func(f *flag.Flag) {
		name, text := flag.UnquoteUsage(f)
		if generic, ok := valueNames[name]; ok {
			name = generic
		}
		if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); isBool || name == "" {
			fmt.Fprintf(w, "  --%s\n", f.Name)
		} else {
			fmt.Fprintf(w, "  --%s %s\n", f.Name, name)
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "0s" && !strings.Contains(text, "default") {
			text += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintf(w, "      %s\n", text)
	})
}

// valueNames replace the flag package's names of a value's Go type.
var valueNames = map[string]string{"string": "VALUE", "value": "VALUE", "int": "N", "uint": "N", "float": "N", "duration": "DURATION"}

// isHelp: the argument asks for help.
func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" || a == "help" }

// groupHelp answers `agentcanvas GROUP` with no or an unknown subcommand (proposal, sandbox,
// protocol): the group's usage on stdout for help (exit 0), on stderr otherwise (exit 2).
func groupHelp(name, usage string, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprintln(stdout, strings.TrimRight(usage, "\n"))
		return exitOK
	}
	if len(args) == 0 {
		fmt.Fprintf(stderr, "agentcanvas %s: which one? (a subcommand is needed)\n", name)
	} else {
		fmt.Fprintf(stderr, "agentcanvas %s: unknown subcommand %q\n", name, args[0])
	}
	fmt.Fprintln(stderr, strings.TrimRight(usage, "\n"))
	return exitUsage
}
