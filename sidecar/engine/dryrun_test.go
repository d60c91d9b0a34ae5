package engine

import (
	"context"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// Every pattern, instantiated as it is inserted on the canvas and run with the dry-run
// backend, ends for its natural reason (never the engine's round cap), and no reply lacks a
// line its step needs.
func TestDryRunEveryPatternEndsNaturally(t *testing.T) {
	want := map[string]string{
		"manager_worker": "quality_gate", "role_play_pair": "quality_gate", "chat_chain_pipeline": "quality_gate",
		"sop_assembly_line": "quality_gate", "debate_judge": "judge_decision", "critic_refiner_curator": "quality_gate",
		"majority_vote": "consensus_threshold", "self_consistency": "max_rounds", "contract_net": "max_rounds",
		"bilateral_negotiation": "quality_gate", "blackboard": "quality_gate", "publish_subscribe": "quiescent",
		"broker_facilitator": "completed", "router_targeted": "quiescent", "hierarchical_tree": "quality_gate",
		"red_team_judge": "quality_gate", "fact_check_verifier": "quality_gate", "plan_execute_reflect": "max_rounds",
		"memory_sync": "max_rounds", "protocol_bridge": "bridged",
	}
	for _, p := range pattern.All() {
		t.Run(p.PatternID, func(t *testing.T) {
			t.Parallel()
			ws := gitWorkspace(t)
			f := patternFlow(t, ws, "dry", flowSpec{pattern: p.PatternID, description: "Say hello"})
			out, err := Run(context.Background(), f, Options{Workspace: ws, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			ic := out.Interactions[0]
			if out.Status != StatusCompleted || ic.Reason != want[p.PatternID] {
				t.Errorf("status %s, reason %q (%s), want %q", out.Status, ic.Reason, ic.Error, want[p.PatternID])
			}
			// The dry-run backend writes every line its pattern needs: nothing is asked twice.
			for _, e := range eventsNamed(events(t, ws, "dry"), "reply_repair") {
				t.Errorf("%v lacked %v", fld(e, "agent"), fld(e, "missing"))
			}
		})
	}
}
