//go:build unix

package runtime

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A command run as an agent gets the environment its flow gives the agent (its values
// redacted in what comes back), not the sidecar's own; its output is capped; a timeout and a
// cancellation each end its whole tree.
func TestRunCommand(t *testing.T) {
	t.Setenv("SIDECAR_ONLY", "sidecar-secret-value")
	ws := t.TempDir()
	agent := Spec{RunID: "cmd-run", AgentID: "a", Workspace: ws, Env: map[string]string{"FLOW_TOKEN": "flow-token-value-123", "DB_CHOICE": "postgres"}, SecretEnv: []string{"FLOW_TOKEN"}}
	t.Cleanup(func() { RemoveTemp("cmd-run") })
	res, err := RunCommand(context.Background(), Command{Agent: agent, Argv: []string{"sh", "-c", `echo "only=${SIDECAR_ONLY:-unset} token=$FLOW_TOKEN db=$DB_CHOICE"; tty || true; exit 3`}})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Output)
	if res.ExitCode != 3 || res.Passed() || !strings.Contains(out, "only=unset token=[redacted:FLOW_TOKEN] db=postgres") || !strings.Contains(out, "not a tty") {
		t.Errorf("exit %d, output %q", res.ExitCode, out)
	}

	res, err = RunCommand(context.Background(), Command{Agent: agent, Argv: []string{"sh", "-c", "yes | head -c 100000"}, MaxOutput: 1000})
	if err != nil || len(res.Output) != 1000 || !res.Truncated || !res.Passed() {
		t.Errorf("capped output: %d bytes, truncated %v, exit %d, %v", len(res.Output), res.Truncated, res.ExitCode, err)
	}

	// A child that would outlive the command: the tree ends with it.
	res, err = RunCommand(context.Background(), Command{Agent: agent, Argv: []string{"sh", "-c", "sleep 1000 & sleep 1000"}, Timeout: 50 * time.Millisecond})
	if err != nil || !res.TimedOut || res.Passed() {
		t.Errorf("timed out: %+v, %v", res, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a run stopped before its check: the check does not start
	res, err = RunCommand(ctx, Command{Agent: agent, Argv: []string{"sleep", "1000"}})
	if err != nil || !res.Stopped || res.Passed() {
		t.Errorf("stopped: %+v, %v", res, err)
	}
}
