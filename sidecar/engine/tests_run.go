package engine

import (
	"context"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

// A check (params.test_command, params.verify_command) run in a worker's sandbox runs the
// worker's code: the test script, package.json's test script, a conftest.py, the tests
// themselves are what the worker left in work/. So it runs confined like that worker — its
// rules, environment and network — never with the sidecar's: otherwise a worker could run
// anything as the person by writing a test, before anyone reviewed a line.

// runCheck runs argv in node's working folder as node would run (spec is node's), and
// returns its output (stdout and stderr in the order they came), its exit status, and an
// error when it could not run at all.
func runCheck(ctx context.Context, spec runtime.Spec, argv []string) (out []byte, code int, err error) {
	var b strings.Builder
	res, err := runLikeAgent(ctx, spec, argv, func(stream, text string) {
		if stream == "warning" {
			return
		}
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	})
	if err != nil {
		return nil, -1, err
	}
	switch res.Status {
	case runtime.StatusCompleted:
		return []byte(b.String()), 0, nil
	case runtime.StatusFailed:
		if res.ExitCode > 0 {
			return []byte(b.String()), res.ExitCode, nil
		}
	}
	return []byte(b.String()), -1, &checkError{why: firstNonEmpty(res.Reason, string(res.Status))}
}

type checkError struct{ why string }

func (e *checkError) Error() string { return e.why }
