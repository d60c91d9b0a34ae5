package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The shapes the pattern library (sidecar/pattern, patterns/Pnn-*.json, branch `patterns`)
// instantiates: each role with its default count, agents carrying the role id as `role`,
// system roles as system nodes of their type, and the template's spec §8 params. A flow
// built from each must validate clean, so inserting a pattern never yields a red canvas.
// TODO(merge): build these with pattern.Instantiate instead of this copy of the templates.

type templateRole struct {
	role, systemType string
	count            int
}

var templateRoles = map[string][]templateRole{
	"manager_worker":         {{"manager", "", 1}, {"worker", "", 2}},
	"role_play_pair":         {{"user", "", 1}, {"assistant", "", 1}},
	"chat_chain_pipeline":    {{"planner", "", 1}, {"designer", "", 1}, {"coder", "", 1}, {"tester", "", 1}, {"doc_writer", "", 1}},
	"sop_assembly_line":      {{"pm", "", 1}, {"architect", "", 1}, {"engineer", "", 1}, {"qa", "", 1}},
	"debate_judge":           {{"debater", "", 2}, {"judge", "judge", 1}},
	"critic_refiner_curator": {{"judge", "judge", 1}, {"critic", "", 1}, {"refiner", "", 1}, {"curator", "curator", 1}},
	"majority_vote":          {{"voter", "", 3}, {"aggregator", "aggregator", 1}, {"tiebreak", "judge", 1}},
	"self_consistency":       {{"sampler", "", 5}, {"aggregator", "aggregator", 1}},
	"contract_net":           {{"manager", "", 1}, {"bidder", "", 3}},
	"bilateral_negotiation":  {{"proposer", "", 1}, {"responder", "", 1}},
	"blackboard":             {{"knowledge_source", "", 3}, {"blackboard", "blackboard", 1}},
	"publish_subscribe":      {{"publisher", "", 1}, {"broker", "broker", 1}, {"subscriber", "", 2}},
	"broker_facilitator":     {{"requester", "", 1}, {"broker", "broker", 1}, {"provider", "", 2}},
	"router_targeted":        {{"peer", "", 3}, {"router", "router", 1}},
	"hierarchical_tree":      {{"root", "", 1}, {"sub_manager", "", 2}, {"worker", "", 4}},
	"red_team_judge":         {{"red_team", "", 1}, {"defender", "", 1}, {"judge", "judge", 1}},
	"fact_check_verifier":    {{"producer", "", 1}, {"verifier", "", 1}, {"judge", "judge", 1}},
	"plan_execute_reflect":   {{"planner", "", 1}, {"executor", "", 1}, {"observer", "", 1}, {"reflector", "", 1}},
	"memory_sync":            {{"member", "", 2}, {"curator", "curator", 1}, {"memory", "blackboard", 1}},
	"protocol_bridge":        {{"bridge", "bridge", 1}, {"local_agent", "", 1}},
}
var templateParams = map[string]string{
	"manager_worker":         `{}`,
	"role_play_pair":         `{}`,
	"chat_chain_pipeline":    `{}`,
	"sop_assembly_line":      `{}`,
	"debate_judge":           `{"timeout_ms": 600000}`,
	"critic_refiner_curator": `{"timeout_ms": 600000}`,
	"majority_vote":          `{}`,
	"self_consistency":       `{}`,
	"contract_net":           `{}`,
	"bilateral_negotiation":  `{"timeout_ms": 600000}`,
	"blackboard":             `{"retention": {"keep_last_n": 200}}`,
	"publish_subscribe":      `{"rate_limit_per_min": 10}`,
	"broker_facilitator":     `{"rate_limit_per_min": 10}`,
	"router_targeted":        `{"rate_limit_per_min": 10}`,
	"hierarchical_tree":      `{}`,
	"red_team_judge":         `{"timeout_ms": 600000}`,
	"fact_check_verifier":    `{}`,
	"plan_execute_reflect":   `{}`,
	"memory_sync":            `{"retention": {"keep_last_days": 7}}`,
	"protocol_bridge":        `{"rate_limit_per_min": 10}`,
}

// templateFlow builds a flow for a pattern: every instance on one path of edges.
func templateFlow(patternID string, roles []templateRole, params string) string {
	var agents, systems, nodes []string
	for _, r := range roles {
		for i := range r.count {
			id := fmt.Sprintf("%s_%d", r.role, i+1)
			nodes = append(nodes, id)
			if r.systemType != "" {
				systems = append(systems, fmt.Sprintf("  - {id: %s, type: %s}\n", id, r.systemType))
			} else {
				agents = append(agents, fmt.Sprintf("  - {id: %s, role: %s, runtime: {backendId: dry-run}}\n", id, r.role))
			}
		}
	}
	p, _ := lookupPattern(patternID)
	termJSON, _ := json.Marshal(p.Termination)
	var b strings.Builder
	b.WriteString("version: 0.2\nagents:\n" + strings.Join(agents, ""))
	if len(systems) > 0 {
		b.WriteString("systemNodes:\n" + strings.Join(systems, ""))
	}
	b.WriteString("interactions:\n  - id: i1\n    patternId: " + patternID + "\n    edges:\n")
	for i := 0; i+1 < len(nodes); i++ {
		fmt.Fprintf(&b, "      - {source: %s, target: %s, data: {topology: %s, termination: %s, params: %s}}\n", nodes[i], nodes[i+1], p.Topology, termJSON, params)
	}
	return b.String()
}

func TestPatternShapedFlowsValidateClean(t *testing.T) {
	if len(templateRoles) != 20 {
		t.Fatalf("%d templates", len(templateRoles))
	}
	for id, roles := range templateRoles {
		src := templateFlow(id, roles, templateParams[id])
		got, ds := codes(t, src, Workspace{})
		if len(got) != 0 {
			t.Errorf("%s:\n%s%s", id, src, formatGolden(ds))
		}
		// Without one of the pattern's special roles (a judge, a router…) it is not clean.
		for i, r := range roles {
			if r.systemType == "" || r.role == "curator" && id == "critic_refiner_curator" || r.role == "tiebreak" || r.role == "memory" {
				continue // agents, and roles the pattern can do without
			}
			without := append(append([]templateRole(nil), roles[:i]...), roles[i+1:]...)
			got, _ := codes(t, templateFlow(id, without, templateParams[id]), Workspace{})
			if len(got) == 0 {
				t.Errorf("%s without its %s validates clean", id, r.role)
			}
		}
	}
}
