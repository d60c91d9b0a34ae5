package engine

import (
	"errors"
	"os/exec"

	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// Tests a run ran in a worker's sandbox (params.test_command, params.verify_command) are part
// of its proposal's review: each result is recorded with the proposal (proposal.RecordTest),
// told in a tests_run event with the failing lines, and a failure is quoted in the worker's
// next prompt, so it knows what to fix.

// recordTest records the result of a check run for node (out its output, err what Run
// returned) and returns it.
func (c *ictx) recordTest(node, kind string, argv []string, out []byte, err error) proposal.TestResult {
	res := proposal.TestResult{Kind: kind, Command: argv, Passed: err == nil}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	default:
		res.ExitCode, res.Error = -1, err.Error()
	}
	if !res.Passed {
		res.Failing = proposal.FailingLines(out)
	}
	if rerr := proposal.RecordTest(c.r.o.Workspace, c.r.sandboxRun(node), node, res, out); rerr != nil {
		c.note("warning", map[string]any{"agent": node, "message": "the " + kind + " result could not be kept with the proposal: " + rerr.Error()})
	}
	if kind == proposal.TestKindTest { // a verifier's result is its phase_verified event
		fields := map[string]any{"agent": node, "kind": kind, "command": argv, "passed": res.Passed, "exitCode": res.ExitCode}
		if !res.Passed {
			fields["failing"] = res.Failing
			if res.Error != "" {
				fields["error"] = res.Error
			}
		}
		c.note("tests_run", fields)
	}
	c.mu.Lock()
	if c.failed == nil {
		c.failed = map[string]string{}
	}
	if res.Passed {
		delete(c.failed, node)
	} else {
		c.failed[node] = proposal.FailurePrompt(&res)
	}
	c.mu.Unlock()
	return res
}

// lastFailure is what node's next prompt quotes of its last failed check, or "".
func (c *ictx) lastFailure(node string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed[node]
}
