package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// Each executor selects as its pattern document says, tested with inputs where another rule
// gives another winner.

// selectionRun runs a pattern's template with every node a command agent answering by its
// id (body: a bash case on $id), and returns the outcome and the run's log.
func selectionRun(t *testing.T, pat string, counts map[string]int, edit func(*pattern.Subgraph), body string) (*Outcome, string) {
	t.Helper()
	ws := gitWorkspace(t)
	dir := t.TempDir()
	agent := script(t, dir, "agent.sh", "prompt=$(cat)\nid=$AGENTCANVAS_AGENT_ID\nprintf '%s\\n=====\\n' \"$prompt\" >> "+dir+"/$id.prompts\n"+body)
	f := patternFlow(t, ws, "pick", flowSpec{pattern: pat, counts: counts, edit: edit, description: "the task",
		runtime: map[string]any{"kind": "cli", "backendId": "command", "command": []string{"bash", agent}}})
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	return out, dir
}

func prompts(dir, id string) string {
	b, _ := os.ReadFile(filepath.Join(dir, id+".prompts"))
	return string(b)
}

func setParams(kv map[string]any) func(*pattern.Subgraph) {
	return func(sg *pattern.Subgraph) {
		for i := range sg.Interaction.Edges {
			if sg.Interaction.Edges[i].Data.Params == nil {
				sg.Interaction.Edges[i].Data.Params = map[string]any{}
			}
			for k, v := range kv {
				sg.Interaction.Edges[i].Data.Params[k] = v
			}
		}
	}
}

const contractBody = `case "$id" in
manager)
  if grep -q "call for proposals" <<<"$prompt"; then echo "PERFORMATIVE: cfp"; echo "Build it."
  else echo "DECISION: bidder_1"; fi;;
bidder_1) if grep -q "accept-proposal" <<<"$prompt"; then echo "PERFORMATIVE: inform-done"; else echo "PERFORMATIVE: propose"; echo "COST: 100"; fi;;
bidder_2) if grep -q "accept-proposal" <<<"$prompt"; then echo "PERFORMATIVE: inform-done"; else echo "PERFORMATIVE: propose"; echo "COST: \$10"; fi;;
esac
`

// P09, award_rule best_bid (its default): the manager awarding COST 100 over COST 10 does
// not stand; the lowest bid wins, and the log says the manager's pick was overridden. With
// award_rule manager, the manager's judgment decides.
func TestContractNetAwardsTheBestBid(t *testing.T) {
	out, _ := selectionRun(t, "contract_net", map[string]int{"bidder": 2}, nil, contractBody)
	if out.Status != StatusCompleted || out.Interactions[0].Result != "inform-done by bidder_2" {
		t.Fatalf("run %s (%s): %q", out.Status, out.Reason, out.Interactions[0].Result)
	}
	out, _ = selectionRun(t, "contract_net", map[string]int{"bidder": 2}, setParams(map[string]any{"award_rule": "manager"}), contractBody)
	if out.Interactions[0].Result != "inform-done by bidder_1" {
		t.Errorf("award_rule manager: %q", out.Interactions[0].Result)
	}
}

// P07: a share at the pattern's threshold (0.6) wins outright, though the flow's termination
// names no threshold: red, red, blue is red, and the tie-break (which would say blue) is not
// asked. A tie goes to the tie-break, which must pick one of the tied options: its green is
// asked again, and its blue stands.
func TestMajorityVoteFollowsItsThreshold(t *testing.T) {
	noThreshold := func(sg *pattern.Subgraph) {
		for i := range sg.Interaction.Edges {
			sg.Interaction.Edges[i].Data.Termination = pattern.Termination{Type: "max_rounds", Rounds: 2}
		}
	}
	out, dir := selectionRun(t, "majority_vote", nil, noThreshold, `case "$id" in
voter_1|voter_2) echo "VOTE: red";;
voter_3) echo "VOTE: blue";;
*) echo "DECISION: blue";;
esac
`)
	if out.Interactions[0].Result != "red" || prompts(dir, "tiebreak") != "" {
		t.Fatalf("result %q (%s); the tie-break was asked: %v", out.Interactions[0].Result, out.Interactions[0].Reason, prompts(dir, "tiebreak") != "")
	}
	out, dir = selectionRun(t, "majority_vote", map[string]int{"voter": 2}, nil, `case "$id" in
voter_1) echo "VOTE: red";;
voter_2) echo "VOTE: blue";;
*) if grep -q "## Repair" <<<"$prompt"; then echo "DECISION: blue"; else echo "DECISION: green"; fi;;
esac
`)
	if out.Interactions[0].Result != "blue" || strings.Count(prompts(dir, "tiebreak"), "=====") != 2 || !strings.Contains(prompts(dir, "tiebreak"), "Leading options: red, blue") {
		t.Fatalf("result %q; the tie-break's prompts:\n%s", out.Interactions[0].Result, prompts(dir, "tiebreak"))
	}
}

// P07 without a tie-break: a second ballot is held with the tally shown.
func TestMajorityVoteSecondBallotShowsTheTally(t *testing.T) {
	drop := func(sg *pattern.Subgraph) {
		var kept []pattern.SystemNode
		for _, s := range sg.SystemNodes {
			if s.Type != "judge" {
				kept = append(kept, s)
			}
		}
		sg.SystemNodes = kept
		var edges []pattern.Edge
		for _, e := range sg.Interaction.Edges {
			if e.Target != "tiebreak" {
				edges = append(edges, e)
			}
		}
		sg.Interaction.Edges = edges
	}
	out, dir := selectionRun(t, "majority_vote", map[string]int{"voter": 4}, drop, `case "$id" in
voter_1|voter_2) echo "VOTE: red";;
*) echo "VOTE: blue";;
esac
`)
	if !strings.Contains(prompts(dir, "voter_1"), "The last ballot reached no consensus: red 2, blue 2") {
		t.Fatalf("the second ballot did not show the tally:\n%s", prompts(dir, "voter_1"))
	}
	if !strings.Contains(out.Interactions[0].Result, "(no consensus)") {
		t.Errorf("result %q", out.Interactions[0].Result)
	}
}

// P08: the most frequent answer wins, a tie going to the answer seen first (42, not 41, which
// sorts first).
func TestSelfConsistencyTieGoesToTheFirstSeen(t *testing.T) {
	out, _ := selectionRun(t, "self_consistency", map[string]int{"sampler": 4}, setParams(map[string]any{"samples": 4}), `case "$id" in
sampler_1|sampler_4) echo "ANSWER: 42";;
*) echo "ANSWER: 41";;
esac
`)
	if out.Interactions[0].Result != "42" {
		t.Fatalf("result %q", out.Interactions[0].Result)
	}
}

// P17: "revise <numbers>" sends the producer the claims the judge named, with what the
// verifier found, not every failed one.
func TestFactCheckRevisesTheNamedClaims(t *testing.T) {
	_, dir := selectionRun(t, "fact_check_verifier", nil, nil, `case "$id" in
producer) printf 'CLAIM: water boils at 100C [1]\nCLAIM: the moon is cheese https://x.example\n';;
verifier) printf 'CHECK 1: pass — handbook, but the unit is missing\nCHECK 2: fail — it is rock\n';;
*) done="$(dirname "$0")/judged"; if [ -e "$done" ]; then echo "DECISION: accept"; else echo "DECISION: revise 1"; touch "$done"; fi;;
esac
`)
	second := strings.SplitN(prompts(dir, "producer"), "=====", 3)
	if len(second) < 2 || !strings.Contains(second[1], "1. water boils at 100C [1] — pass — handbook, but the unit is missing") || strings.Contains(second[1], "it is rock") {
		t.Fatalf("the producer's revision prompt:\n%s", prompts(dir, "producer"))
	}
}
