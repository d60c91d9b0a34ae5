package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

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

// setup runs runtime.setup once in a freshly prepared sandbox, as the agent
// (runtime.RunCommand: in its work/ with its environment, confinement and network rule),
// whose stdout and stderr lines go to the run's log (setup_output). A setup that fails fails
// the agent.
func (c *ictx) setup(node string, agent runtime.Spec, argv []string) error {
	cmd, err := runtime.ResolveCommand(c.r.o.Workspace, argv)
	if err != nil {
		return fmt.Errorf("agent %s: runtime.setup: %w", node, err)
	}
	c.r.emit(c.in.ID, "", "setup_started", map[string]any{"agent": node, "command": argv})
	var mu sync.Mutex
	lines := 0
	var tail []string
	log := func(stream, text string) {
		mu.Lock()
		defer mu.Unlock()
		if tail = append(tail, text); len(tail) > 5 {
			tail = tail[1:]
		}
		if lines++; lines <= maxSetupLines {
			c.r.emit(c.in.ID, "", "setup_output", map[string]any{"agent": node, "stream": stream, "line": text})
		}
	}
	res, err := runtime.RunCommand(c.ctx, runtime.Command{Agent: agent, Argv: cmd, MaxOutput: 1, OnLine: log})
	for _, w := range res.Warnings {
		log("warning", w)
	}
	if err != nil {
		return fmt.Errorf("agent %s: runtime.setup: %w", node, err)
	}
	if lines > maxSetupLines {
		c.r.emit(c.in.ID, "", "setup_output", map[string]any{"agent": node, "stream": "note", "line": fmt.Sprintf("%d more lines not logged", lines-maxSetupLines)})
	}
	status := runtime.StatusCompleted
	switch {
	case res.Stopped:
		status = runtime.StatusStopped
	case !res.Passed():
		status = runtime.StatusFailed
	}
	c.r.emit(c.in.ID, "", "setup_finished", map[string]any{"agent": node, "status": string(status), "exitCode": res.ExitCode})
	if status != runtime.StatusCompleted {
		return fmt.Errorf("agent %s: runtime.setup %s %s (exit %d): %s", node, strings.Join(argv, " "), status, res.ExitCode, strings.Join(tail, " | "))
	}
	return nil
}
