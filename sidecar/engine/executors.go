// The pattern → executor table and the helpers every executor shares.
// Each pattern's executor is in exec_<pattern>.go, named as patterns/ names it.

package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
)

// executor runs one interaction of a pattern and returns what it yields. It ends rounds
// with c.endRound(), which applies the flow's termination; patterns/P*.md ("How AgentCanvas
// runs it") say how each runs, and the two must agree.
type executor func(c *ictx) (string, error)

var executors = map[string]executor{
	"manager_worker":         managerWorker,
	"role_play_pair":         rolePlayPair,
	"chat_chain_pipeline":    chatChain,
	"sop_assembly_line":      sopAssemblyLine,
	"debate_judge":           debateJudge,
	"critic_refiner_curator": criticRefinerCurator,
	"majority_vote":          majorityVote,
	"self_consistency":       selfConsistency,
	"contract_net":           contractNet,
	"bilateral_negotiation":  negotiation,
	"blackboard":             blackboard,
	"publish_subscribe":      publishSubscribe,
	"broker_facilitator":     brokerFacilitator,
	"router_targeted":        routerTargeted,
	"hierarchical_tree":      hierarchicalTree,
	"red_team_judge":         redTeamJudge,
	"fact_check_verifier":    factCheck,
	"plan_execute_reflect":   planExecuteReflect,
	"memory_sync":            memorySync,
	"protocol_bridge":        protocolBridge,
}

// task is what the interaction is about.
func (c *ictx) task() string {
	for _, k := range []string{"task", "task_template", "question", "topic_prompt"} {
		if s, ok := c.params[k].(string); ok && s != "" {
			return s
		}
	}
	return firstNonEmpty(c.in.Description, c.r.task())
}

func quote(label, text string) string { return label + ":\n" + indent(truncate(text, 6000)) }

func fieldOr(text, key string) string { v, _ := field(text, key); return v }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// note logs an engine observation about the interaction (a skipped worker, a dropped reply).
func (c *ictx) note(event string, fields map[string]any) { c.r.emit(c.in.ID, "", event, fields) }

func stringList(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func truthy(v any) bool { b, _ := v.(bool); return b }

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// busType is t when the bus knows it, else information (a role's custom artefact type
// travels in the payload).
func busType(t string) string {
	if slices.Contains(bus.Types, t) {
		return t
	}
	return "information"
}

// edgeType is want when the edge src → dst may carry it (its `messages`), else the edge's
// first message type (the coder → tester phase carries code, not instruction).
func (c *ictx) edgeType(src, dst, want string) string {
	for _, e := range c.in.Edges {
		if e.Source == src && e.Target == dst {
			if msgs := stringList(e.Data.Params["messages"]); len(msgs) > 0 && !slices.Contains(msgs, want) {
				return msgs[0]
			}
		}
	}
	return want
}
