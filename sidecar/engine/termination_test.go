package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// undecided is a debate whose debaters answer and whose judge never decides.
const undecided = `cat >/dev/null
case "$AGENTCANVAS_ROLE" in
judge) echo "I cannot decide." ;;
*) echo "ANSWER: 4 from $AGENTCANVAS_AGENT_ID" ;;
esac
`

// The first case: a debate bounded by any: [max_rounds, timeout_ms] whose judge never
// decides ends by its timeout, not by the engine's round cap. The cap is set to 2 here so that a
// cap that wrongly applied would end the debate after two rounds, long before the timeout,
// however slow the machine; and the flow's max_rounds is a million, which no machine runs
// (three processes a round) within the timeout, however fast.
func TestFlowBoundsWinOverTheRoundCap(t *testing.T) {
	ws := gitWorkspace(t)
	agent := script(t, t.TempDir(), "debate.sh", undecided)
	f := patternFlow(t, ws, "long-debate", flowSpec{pattern: "debate_judge", description: "2+2?",
		runtime: map[string]any{"kind": "cli", "backendId": "command", "command": []string{"bash", agent}},
		edit:    setTermination(pattern.Termination{Any: []pattern.Termination{{Type: "max_rounds", Rounds: 1000000}, {Type: "timeout_ms", Ms: 4000}}})})
	out, err := Run(context.Background(), f, Options{Workspace: ws, RoundCap: 2})
	if err != nil {
		t.Fatal(err)
	}
	ic := out.Interactions[0]
	if ic.Reason != "timeout_ms" || ic.Status != StatusCompleted {
		t.Fatalf("ended %s with reason %q after %d rounds (%s); want completed by timeout_ms", ic.Status, ic.Reason, ic.Rounds, ic.Error)
	}
	if ic.Rounds <= 2 {
		t.Errorf("%d rounds: the round cap (2) cut the debate short of its own bounds", ic.Rounds)
	}
	evs := events(t, ws, "long-debate")
	term := eventsNamed(evs, "terminated")
	if len(term) != 1 || fld(term[0], "reason") != "timeout_ms" {
		t.Errorf("terminated events %v", term)
	}
	for _, w := range eventsNamed(evs, "warning") {
		if strings.Contains(str(fld(w, "message")), "round cap") {
			t.Errorf("a round-cap warning in a bounded interaction: %v", fld(w, "message"))
		}
	}
}

// Where the flow bounds neither rounds nor time, the engine's cap ends the interaction with
// reason round_cap and says how to set a bound; params.round_cap is the flow's own cap,
// which ends it quietly.
func TestRoundCap(t *testing.T) {
	for _, c := range []struct {
		name     string
		params   map[string]any
		rounds   int
		warnings int
	}{
		{"engine's cap", nil, 3, 1},
		{"flow's own cap", map[string]any{"round_cap": 4}, 4, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := gitWorkspace(t)
			// A CAMEL pair whose user never says the task is done: task_done never holds.
			agent := script(t, t.TempDir(), "pair.sh", "cat >/dev/null; echo \"Instruction: one more step\"\n")
			f := patternFlow(t, ws, "capped", flowSpec{pattern: "role_play_pair", description: "talk",
				runtime: map[string]any{"kind": "cli", "backendId": "command", "command": []string{"bash", agent}},
				edit: func(sg *pattern.Subgraph) {
					one := 1.0
					setTermination(pattern.Termination{Type: "quality_gate", Metric: "task_done", Op: ">=", Value: &one})(sg)
					for k, v := range c.params {
						setParam(k, v)(sg)
					}
				}})
			out, err := Run(context.Background(), f, Options{Workspace: ws, RoundCap: 3})
			if err != nil {
				t.Fatal(err)
			}
			ic := out.Interactions[0]
			if ic.Reason != "round_cap" || ic.Rounds != c.rounds {
				t.Fatalf("reason %q after %d rounds (%s), want round_cap after %d", ic.Reason, ic.Rounds, ic.Error, c.rounds)
			}
			n := 0 // the engine's, when the cap ends it (validate's, said at the start, is another)
			for _, w := range eventsNamed(events(t, ws, "capped"), "warning") {
				if msg := str(fld(w, "message")); strings.Contains(msg, "round cap ends the interaction") {
					n++
					if !strings.Contains(msg, "params.round_cap") {
						t.Errorf("the warning does not say how to set a bound: %s", msg)
					}
				}
			}
			if n != c.warnings {
				t.Errorf("%d round-cap warnings, want %d", n, c.warnings)
			}
		})
	}
}

// Every edge's termination is enforced, not only the first edge's: a debate whose first edge
// allows 500 rounds and whose second allows 3 ends after 3 rounds by max_rounds.
func TestEveryEdgesTerminationHolds(t *testing.T) {
	ws := gitWorkspace(t)
	agent := script(t, t.TempDir(), "debate.sh", undecided)
	f := patternFlow(t, ws, "two-bounds", flowSpec{pattern: "debate_judge", description: "2+2?",
		runtime: map[string]any{"kind": "cli", "backendId": "command", "command": []string{"bash", agent}},
		edit: func(sg *pattern.Subgraph) {
			for i := range sg.Interaction.Edges {
				rounds := 500
				if i > 0 {
					rounds = 3
				}
				sg.Interaction.Edges[i].Data.Termination = pattern.Termination{Type: "max_rounds", Rounds: rounds}
			}
		}})
	out, err := Run(context.Background(), f, Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if ic := out.Interactions[0]; ic.Reason != "max_rounds" || ic.Rounds != 3 {
		t.Fatalf("ended %s with reason %q after %d rounds (%s); want max_rounds after 3 (the second edge's bound)", ic.Status, ic.Reason, ic.Rounds, ic.Error)
	}
}
