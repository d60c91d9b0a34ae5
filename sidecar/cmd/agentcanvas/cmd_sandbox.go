package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

func init() {
	register(&command{name: "sandbox", summary: "prepare an agent's sandbox (sandbox prepare --workspace W --run R --agent A FILE…)", run: runSandbox})
}

// listFlag collects a repeatable, comma-separable flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

// printJSON prints v as indented JSON; C1 controls and format characters in its strings are
// written as \u escapes (termsafe.JSON), so that the JSON of an agent's text is safe on a
// terminal and means the same to a tool.
func printJSON(w io.Writer, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(w, "%s\n", termsafe.JSON(b))
}

func runSandbox(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "prepare" {
		fmt.Fprintln(stderr, "usage: agentcanvas sandbox prepare --workspace W --run R --agent A [--allow DIR]… [--block DIR]… FILE…")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return exitOK
		}
		return exitUsage
	}
	fs := flag.NewFlagSet("sandbox prepare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ws := fs.String("workspace", ".", "workspace root")
	runID := fs.String("run", "", "run id (1-128 of A-Z a-z 0-9 . _ -)")
	agent := fs.String("agent", "", "agent id (sanitised into a folder name)")
	rf := addRuleFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentcanvas sandbox prepare --workspace W --run R --agent A [--allow DIR]… [--block DIR]… FILE…")
		fmt.Fprintln(stderr, "Copies each workspace-relative FILE (folders whole, honouring .gitignore; . is the")
		fmt.Fprintln(stderr, "whole workspace, as a git worktree holds it) into")
		fmt.Fprintln(stderr, "W/.agentcanvas/sandboxes/R/<A>/{input,work}; prints {inputDir,workDir,proposalDir}.")
		fmt.Fprintln(stderr, "Exit 0 prepared, 1 refused (nothing created), 2 usage.")
		fs.PrintDefaults()
	}
	if err := parseAnywhere(fs, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *runID == "" || *agent == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "sandbox prepare: --run, --agent and at least one FILE are required")
		fs.Usage()
		return exitUsage
	}
	rules, err := rf.rules(*ws)
	if err != nil {
		fmt.Fprintf(stderr, "sandbox prepare: %v\n", err)
		return exitUsage
	}
	ctx, cancel := signalContext()
	defer cancel()
	p, err := sandbox.Prepare(ctx, sandbox.Options{Workspace: *ws, RunID: *runID, AgentID: *agent, Files: fs.Args(), Rules: rules,
		Notice: func(n string) { fmt.Fprintf(stderr, "agentcanvas: %s\n", n) }})
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas: %v\n", err)
		return exitFail
	}
	printJSON(stdout, struct {
		InputDir    string `json:"inputDir"`
		WorkDir     string `json:"workDir"`
		ProposalDir string `json:"proposalDir"`
	}{p.InputDir, p.WorkDir, p.ProposalDir})
	return exitOK
}
