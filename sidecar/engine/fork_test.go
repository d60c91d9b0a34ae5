//go:build unix

package engine

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

// teamScript is a deterministic team: the lead plans and reviews; each worker's k-th turn
// appends a line to notes.txt, leaves one file named for k (removing the last), toggles
// notes.txt's executable bit and counts its turns in .count. So what a worker's sandbox holds
// after k turns is known without looking (teamFiles), and every agent reports its usage.
const teamScript = `prompt=$(cat)
echo 'USAGE: {"inputTokens": 100, "outputTokens": 10, "costUsd": 0.001}'
case "$AGENTCANVAS_AGENT_ID" in
lead)
  if printf '%s' "$prompt" | grep -q "Review your team"; then echo "Reviewed."; echo "ACCEPT all"
  else echo "Planned."; echo "ASSIGN coder1: write notes"; echo "ASSIGN coder2: write notes"; fi ;;
*)
  k=$(( $(cat .count 2>/dev/null || echo 0) + 1 ))
  echo $k > .count
  echo "$AGENTCANVAS_AGENT_ID turn $k" >> notes.txt
  rm -f "$AGENTCANVAS_AGENT_ID"-*.txt
  echo "made at turn $k" > "$AGENTCANVAS_AGENT_ID-$k.txt"
  if [ $((k % 2)) = 0 ]; then chmod +x notes.txt; else chmod -x notes.txt; fi
  echo "Turn $k of $AGENTCANVAS_AGENT_ID done."
  ;;
esac
`

const teamFlow = `version: 0.2
description: Keep notes
agents:
  - {id: lead, role: manager, runtime: {backendId: command, command: [bash, agents/team.sh]}}
  - {id: coder1, role: worker, files: [notes.txt], runtime: {backendId: command, command: [bash, agents/team.sh]}}
  - {id: coder2, role: worker, files: [notes.txt], runtime: {backendId: command, command: [bash, agents/team.sh]}}
interactions:
  - id: build
    patternId: manager_worker
    edges:
      - {source: lead, target: coder1, data: {topology: manager_worker, termination: {type: max_rounds, rounds: 2}}}
      - {source: lead, target: coder2, data: {topology: manager_worker, termination: {type: max_rounds, rounds: 2}}}
  - id: review
    patternId: role_play_pair
    dependsOn: [build]
    edges:
      - {source: lead, target: coder2, data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}}
`

// teamWorkspace is a git workspace with the team's flow, script and notes.txt.
func teamWorkspace(t *testing.T) (string, *flow.Flow) {
	t.Helper()
	ws := gitWorkspace(t)
	for name, content := range map[string]string{"notes.txt": "notes\n", "agents/team.sh": teamScript, ".agentcanvas/flows/team.yaml": teamFlow} {
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(ws, ".agentcanvas", "flows", "team.yaml")
	return ws, flow.Parse(file, []byte(teamFlow))
}

// teamFiles is what a worker's work/ holds after k turns (path → content, "*" marking an
// executable), from the script alone.
func teamFiles(agent string, k int) map[string]string {
	notes := "notes\n"
	for i := 1; i <= k; i++ {
		notes += fmt.Sprintf("%s turn %d\n", agent, i)
	}
	name := "notes.txt"
	if k%2 == 0 {
		name += "*"
	}
	return map[string]string{name: notes, ".count": fmt.Sprintf("%d\n", k), fmt.Sprintf("%s-%d.txt", agent, k): fmt.Sprintf("made at turn %d\n", k)}
}

// dirFiles reads a folder as teamFiles writes it.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatalf("reading %s: %v", dir, err)
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		b, _ := os.ReadFile(p)
		if fi, _ := d.Info(); fi.Mode()&0o111 != 0 {
			rel += "*"
		}
		out[rel] = string(b)
		return nil
	})
	return out
}

func workDir(t *testing.T, ws, run, agent string) string {
	t.Helper()
	p, err := sandbox.PathsFor(ws, run, agent)
	if err != nil {
		t.Fatal(err)
	}
	return p.WorkDir
}

// outcomeOf is what two runs of the same deterministic team must agree on.
func outcomeOf(out *Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", out.Status, out.Reason)
	for _, in := range out.Interactions {
		fmt.Fprintf(&b, "%s %s %s rounds=%d result=%q\n", in.ID, in.Status, in.Reason, in.Rounds, in.Result)
	}
	fmt.Fprintf(&b, "messages=%v tokens=%d cost=%.4f proposals=%d\n", out.Metrics.MessagesByType, out.Spend.Tokens, out.Spend.CostUSD, len(out.Proposals))
	return b.String()
}

// repliesOf are a run's turns as agent: reply, in order.
func repliesOf(t *testing.T, ws, run string) []string {
	t.Helper()
	turns, err := transcript.Read(ws, run)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tn := range turns {
		out = append(out, tn.Agent+": "+tn.Reply)
	}
	sort.Strings(out) // the two workers' turns of a round end in either order
	return out
}

// A three-agent run forked at each of its turns: right after the fork is made, every worker's
// sandbox holds what the script had written by that turn, the fork's transcript and spend are
// the parent's up to it, and the interactions completed by then are kept; run on, each fork
// ends exactly as the parent did, with the same files, replies, messages and spend.
func TestForkAtEveryTurnOfACommandTeam(t *testing.T) {
	ws, f := teamWorkspace(t)
	ctx := context.Background()
	parent, err := Run(ctx, f, Options{Workspace: ws})
	if err != nil || parent.Status != StatusCompleted {
		t.Fatalf("parent run: %v %+v", err, parent)
	}
	turns, err := transcript.Read(ws, parent.RunID)
	if err != nil || len(turns) != 10 {
		t.Fatalf("parent's turns: %d %v", len(turns), err)
	}
	points, err := readForkPoints(ws, parent.RunID)
	if err != nil || len(points) != len(turns) {
		t.Fatalf("fork points: %d %v", len(points), err)
	}
	for n := 1; n <= len(turns); n++ {
		t.Run(fmt.Sprintf("turn%d", n), func(t *testing.T) {
			plan, err := PlanFork(ws, ForkRequest{RunID: parent.RunID, At: n})
			if err != nil {
				t.Fatal(err)
			}
			r, err := plan.newRun(Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.materialize(plan); err != nil {
				t.Fatal(err)
			}
			checkForkedState(t, ws, parent.RunID, plan.RunID, turns[:n], points[n])
			out := r.execute(ctx)
			if got, want := outcomeOf(out), outcomeOf(parent); got != want {
				t.Errorf("the fork ended otherwise than its parent:\n got %s\nwant %s", got, want)
			}
			for _, agent := range []string{"coder1", "coder2"} {
				if got, want := dirFiles(t, workDir(t, ws, plan.RunID, agent)), dirFiles(t, workDir(t, ws, parent.RunID, agent)); !reflect.DeepEqual(got, want) {
					t.Errorf("%s's files at the end: %v, the parent's %v", agent, got, want)
				}
			}
			if got, want := repliesOf(t, ws, plan.RunID), repliesOf(t, ws, parent.RunID); !reflect.DeepEqual(got, want) {
				t.Errorf("replies:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// checkForkedState checks a fork made from the end of the parent's last turn in turns.
func checkForkedState(t *testing.T, ws, parent, fork string, turns []transcript.Turn, at *forkPoint) {
	t.Helper()
	k := map[string]int{}
	for _, tn := range turns {
		k[tn.Agent]++
	}
	for _, agent := range []string{"coder1", "coder2"} {
		dir := workDir(t, ws, fork, agent)
		if k[agent] == 0 {
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s had not run, yet has a sandbox (%v)", agent, err)
			}
			continue
		}
		if got, want := dirFiles(t, dir), teamFiles(agent, k[agent]); !reflect.DeepEqual(got, want) {
			t.Errorf("%s after %d turns: %v, want %v", agent, k[agent], got, want)
		}
		in, _ := sandbox.PathsFor(ws, fork, agent)
		if got := dirFiles(t, in.InputDir); !reflect.DeepEqual(got, map[string]string{"notes.txt": "notes\n"}) {
			t.Errorf("%s's input/: %v", agent, got)
		}
	}
	got, err := transcript.Read(ws, fork)
	if err != nil || !reflect.DeepEqual(got, turns) {
		t.Errorf("the fork's transcript is not the parent's first %d turns (%v)", len(turns), err)
	}
	st, err := ReadState(ws, fork)
	if err != nil {
		t.Fatal(err)
	}
	if st.ForkOf == nil || st.ForkOf.RunID != parent || st.ForkOf.Turn != len(turns) {
		t.Errorf("forkOf: %+v", st.ForkOf)
	}
	if !reflect.DeepEqual(st.Spend, at.Spend) || !reflect.DeepEqual(st.Agents, at.AgentSpend) {
		t.Errorf("spend at the fork: %+v %+v, the parent's at the turn %+v %+v", st.Spend, st.Agents, at.Spend, at.AgentSpend)
	}
	var kept []string
	for _, oc := range st.Interactions {
		kept = append(kept, oc.ID+" "+oc.Status)
	}
	want := []string(nil)
	for _, oc := range at.Ended {
		want = append(want, oc.ID+" "+oc.Status)
	}
	if !reflect.DeepEqual(kept, want) {
		t.Errorf("kept interactions %v, ended at the turn %v", kept, want)
	}
}
