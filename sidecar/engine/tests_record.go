package engine

import (
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

// Tests a run ran in a worker's sandbox (params.test_command, params.verify_command) are part
// of its proposal's review: each result is recorded with the proposal (proposal.RecordTest),
// told in a tests_run event with the failing lines, and a failure is quoted in the worker's
// next prompt, so it knows what to fix.

// recordTest records the result of a check run as node (runAs) and returns it. A check that
// exited 0 but whose output reports a failure in a test runner's own words has failed
// (proposal.Judge).
func (c *ictx) recordTest(node, kind string, argv []string, run commandRun) proposal.TestResult {
	out := run.res.Output
	res := proposal.TestResult{Kind: kind, Command: argv, Passed: run.err == nil && run.res.Passed()}
	switch {
	case run.err != nil: // it could not be run
		res.ExitCode, res.Error = -1, run.err.Error()
	case run.res.TimedOut:
		res.ExitCode, res.Error = run.res.ExitCode, "timed out"
	case run.res.Stopped:
		res.ExitCode, res.Error = run.res.ExitCode, "stopped"
	default:
		res.ExitCode = run.res.ExitCode
	}
	res = proposal.Judge(res, out)
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
		c.failed = map[string]proposal.TestResult{}
	}
	if res.Passed {
		delete(c.failed, node)
	} else {
		c.failed[node] = res
	}
	c.mu.Unlock()
	return res
}

// commandRun is how a check run as an agent went (runtime.RunCommand): its result, or why it
// could not run.
type commandRun struct {
	res runtime.CommandResult
	err error
}

// lastFailure is what node's next prompt quotes of its last failed check, or "".
func (c *ictx) lastFailure(node string) string {
	if r, ok := c.failedCheck(node); ok {
		return proposal.FailurePrompt(&r)
	}
	return ""
}

// failedCheck is node's last check when it failed: auto-apply never applies the proposal of
// a worker whose tests failed last.
func (c *ictx) failedCheck(node string) (proposal.TestResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.failed[node]
	return r, ok
}
