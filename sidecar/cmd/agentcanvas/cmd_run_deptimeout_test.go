package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// run --dependency-timeout sets how long a dependency request waits, over the flow's
// policy.dependencyTimeoutMs: the request's deadline says so.
func TestRunDependencyTimeoutFlag(t *testing.T) {
	ws := t.TempDir()
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	agent := filepath.Join(ws, "agent.sh")
	os.WriteFile(agent, []byte("cat >/dev/null\n[ \"$AGENTCANVAS_TURN\" = 1 ] && printf '[DEPENDENCY_REQUEST]\\ntype: file\\nname: CONF\\ndescription: the config\\nrequired: false\\n[/DEPENDENCY_REQUEST]\\n'\necho 'ANSWER: done'\n"), 0o755)
	file := filepath.Join(ws, "flows", "t.yaml")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(`version: 0.2
policy: {dependencyTimeoutMs: 60000}
agents:
  - {id: worker, role: local, runtime: {backendId: command, command: [bash, "`+agent+`"]}}
systemNodes:
  - {id: bridge, type: bridge}
interactions:
  - id: i1
    patternId: protocol_bridge
    edges:
      - {source: bridge, target: worker, data: {termination: {type: max_rounds, rounds: 1}, params: {rate_limit_per_min: 10}}}
`), 0o644)
	deadline := func(args ...string) time.Duration {
		t.Helper()
		var out, errb bytes.Buffer
		started := time.Now()
		if code := run(append(append([]string{"run", "--json", "--non-interactive"}, args...), file), strings.NewReader(""), &out, &errb); code != exitOK {
			t.Fatalf("exit %d\n%s", code, errb.String())
		}
		sc := bufio.NewScanner(&out)
		for sc.Scan() {
			var ev struct {
				Event    string `json:"event"`
				Deadline string `json:"deadline"`
			}
			if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "dependency_requested" {
				d, err := time.Parse(time.RFC3339, ev.Deadline)
				if err != nil {
					t.Fatal(err)
				}
				return d.Sub(started).Round(time.Minute)
			}
		}
		t.Fatalf("no dependency_requested in\n%s", out.String())
		return 0
	}
	if d := deadline(); d != time.Minute {
		t.Errorf("the flow's timeout: the deadline is %v after the start, want 1m", d)
	}
	if d := deadline("--dependency-timeout", "7m"); d != 7*time.Minute {
		t.Errorf("--dependency-timeout 7m: the deadline is %v after the start", d)
	}
}
