package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// presentShared keeps the shared dependency folders (runtime.shared) that exist in the
// workspace; a missing one is said in the run's log and left out (npm ci not run yet).
func (c *ictx) presentShared(node string, shared []string) []string {
	var out []string
	for _, s := range shared {
		fi, err := os.Lstat(filepath.Join(c.r.o.Workspace, filepath.FromSlash(s)))
		if err != nil {
			c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "message": "shared folder " + s + " does not exist in the workspace; the agent's sandbox does without it"})
			continue
		}
		if !fi.IsDir() {
			c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "message": "shared folder " + s + " is not a folder (a symlink or a file) and is not shared"})
			continue
		}
		out = append(out, s)
	}
	return out
}

// sharedFolders are the absolute workspace folders linked into a node's sandbox, as its
// sandbox.json records them: what the confined agent may read through the links.
func sharedFolders(workspace, runID, node string) ([]string, error) {
	m, err := sandbox.ReadMeta(workspace, runID, node)
	if err != nil {
		return nil, fmt.Errorf("agent %s: sandbox: %w", node, err)
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range m.Shared {
		q, err := sandbox.CleanShared(s) // sandbox.json is checked again: it grants reads
		if err != nil {
			return nil, fmt.Errorf("agent %s: sandbox.json: %w", node, err)
		}
		out = append(out, filepath.Join(abs, filepath.FromSlash(q)))
	}
	return out, nil
}

// maxSetupLines bounds the lines of a setup's output written to the run's log.
const maxSetupLines = 400

// setup runs runtime.setup once in a freshly prepared sandbox: a command agent in the
// agent's work/ with the agent's environment, confinement and network rule, whose stdout and
// stderr lines go to the run's log (setup_output). A setup that fails fails the agent.
func (c *ictx) setup(node string, agent runtime.Spec, argv []string) error {
	cmd, err := runtime.ResolveCommand(c.r.o.Workspace, argv)
	if err != nil {
		return fmt.Errorf("agent %s: runtime.setup: %w", node, err)
	}
	c.r.emit(c.in.ID, "", "setup_started", map[string]any{"agent": node, "command": argv})
	lines := 0
	var tail []string
	res, err := runLikeAgent(c.ctx, agent, cmd, func(stream, text string) {
		if tail = append(tail, text); len(tail) > 5 {
			tail = tail[1:]
		}
		if lines++; lines <= maxSetupLines {
			c.r.emit(c.in.ID, "", "setup_output", map[string]any{"agent": node, "stream": stream, "line": text})
		}
	})
	if err != nil {
		return fmt.Errorf("agent %s: runtime.setup: %w", node, err)
	}
	if lines > maxSetupLines {
		c.r.emit(c.in.ID, "", "setup_output", map[string]any{"agent": node, "stream": "note", "line": fmt.Sprintf("%d more lines not logged", lines-maxSetupLines)})
	}
	c.r.emit(c.in.ID, "", "setup_finished", map[string]any{"agent": node, "status": string(res.Status), "exitCode": res.ExitCode})
	if res.Status != runtime.StatusCompleted {
		return fmt.Errorf("agent %s: runtime.setup %s %s (exit %d): %s", node, strings.Join(argv, " "), res.Status, res.ExitCode, strings.Join(tail, " | "))
	}
	return nil
}

// runLikeAgent runs argv as the agent of spec would run: in its working folder, with its
// environment, confinement and network rule, its output read as plain text (no protocol
// block in it is acted on). Each line of stdout and stderr (and each refusal the
// confinement made) goes to line, in order.
func runLikeAgent(ctx context.Context, agent runtime.Spec, argv []string, line func(stream, text string)) (runtime.Result, error) {
	s := agent
	s.BackendID, s.Interactive, s.ResumeSession, s.MCPServers = runtime.BackendCommand, false, "", nil
	s.PauseOnPhaseComplete, s.Checkpoint, s.Plain = false, nil, true
	s.Command = argv
	p, err := runtime.Start(ctx, s, "")
	if err != nil {
		return runtime.Result{}, err
	}
	for ev := range p.Events() {
		switch ev.Kind {
		case runtime.EventText:
			line("stdout", ev.Text)
		case runtime.EventStderr:
			line("stderr", ev.Text)
		case runtime.EventDenied, runtime.EventWarning:
			line(string(ev.Kind), ev.Reason)
		}
	}
	return p.Wait(), nil
}
