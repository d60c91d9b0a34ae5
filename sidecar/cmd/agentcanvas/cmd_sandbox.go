package main

import (
	"context"
	"encoding/json"
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

const sandboxUsage = "usage: agentcanvas sandbox prepare --workspace W --run R --agent A [--allow DIR]… [--block DIR]… FILE…"

func runSandbox(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "prepare" {
		return groupHelp("sandbox", sandboxUsage, args, stdout, stderr)
	}
	fs := newCmdFlags("sandbox prepare", sandboxUsage+`
Copies each workspace-relative FILE (folders whole, honouring .gitignore; . is the whole
workspace, as a git worktree holds it) into W/.agentcanvas/sandboxes/R/<A>/{input,work};
prints {inputDir,workDir,proposalDir}.
Exit status: 0 prepared, 1 refused (nothing created), 2 usage.`, stdout, stderr)
	ws := fs.String("workspace", ".", "the workspace root `DIR`")
	runID := fs.String("run", "", "the `RUN` id (1-128 of A-Z a-z 0-9 . _ -)")
	agent := fs.String("agent", "", "the `AGENT` id (sanitised into a folder name)")
	rf := addRuleFlags(fs.FlagSet)
	if code, ok := fs.parse(args[1:]); !ok {
		return code
	}
	if *runID == "" || *agent == "" || fs.NArg() == 0 {
		return fs.usageError("--run, --agent and at least one FILE are required")
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
