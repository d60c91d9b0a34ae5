package engine

import "github.com/agentcanvas/agentcanvas/sidecar/runtime"

// stderrLines is how many of an agent's last stderr lines a failed turn's agent_finished
// carries: enough for the error a CLI printed before exiting (a refused folder, a missing
// login), never a whole log.
const stderrLines = 10

// stderrTail keeps the last stderrLines lines an agent printed on stderr during one turn
// (already scrubbed of secrets by the runtime).
type stderrTail struct{ lines []string }

func (t *stderrTail) add(line string) {
	if len(t.lines) == stderrLines {
		t.lines = append(t.lines[:0], t.lines[1:]...)
	}
	t.lines = append(t.lines, truncate(line, 500))
}

// finishedFields is the agent_finished event of a turn: its status and turns, the spend the
// backend reported (tokens when any, cost only when the backend reports cost), and for a turn
// that did not complete the reason and the agent's last stderr lines, so a failure never
// shows only an exit code.
func finishedFields(node string, res runtime.Result, stderr []string) map[string]any {
	f := map[string]any{"agent": node, "status": string(res.Status), "turns": res.Turns}
	if res.Usage.InputTokens > 0 || res.Usage.OutputTokens > 0 {
		f["inputTokens"], f["outputTokens"] = res.Usage.InputTokens, res.Usage.OutputTokens
	}
	if res.CostKnown || res.Backend == runtime.BackendDryRun { // a dry run costs nothing, as the metrics count it
		f["costUsd"] = res.CostUSD
	}
	if res.Status != runtime.StatusCompleted {
		if res.Reason != "" {
			f["error"] = res.Reason
		}
		if len(stderr) > 0 {
			f["stderr"] = stderr
		}
	}
	return f
}
