package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// smallest is the smallest valid drawing of a pattern: its roles at their minimum counts and
// only the edges a user must draw to bring every node into the interaction, drawn as the
// canvas draws them (the pattern's default termination and params, no messages list).
type smallest struct {
	pattern string
	counts  map[string]int
	edges   [][2]string
	// want are messages the pattern's exchanges must have sent on the bus, each "type" or
	// "from>to:type": proof that the run did exchange what the pattern documents.
	want []string
}

var smallestDrawings = []smallest{
	{"manager_worker", map[string]int{"worker": 1}, [][2]string{{"manager", "worker"}}, []string{"manager>worker:task_assignment", "worker>manager:handoff"}},
	{"role_play_pair", nil, [][2]string{{"user", "assistant"}}, []string{"user>assistant:instruction", "assistant>user:solution"}},
	{"chat_chain_pipeline", map[string]int{"designer": 0, "doc_writer": 0}, [][2]string{{"planner", "coder"}, {"coder", "tester"}}, []string{"planner>coder:instruction", "coder>tester:instruction"}},
	{"sop_assembly_line", nil, [][2]string{{"pm", "architect"}, {"architect", "engineer"}, {"engineer", "qa"}}, []string{"engineer>qa:code"}},
	{"debate_judge", nil, [][2]string{{"debater_1", "judge"}, {"debater_2", "judge"}}, []string{"debater_1>debater_2:answer", "debater_2>debater_1:answer", "debater_1>judge:final_answer"}},
	{"critic_refiner_curator", map[string]int{"curator": 0}, [][2]string{{"judge", "critic"}, {"critic", "refiner"}}, []string{"judge>critic:error_report", "critic>refiner:critique", "refiner>judge:revised_solution"}},
	{"majority_vote", map[string]int{"voter": 2}, [][2]string{{"voter_1", "aggregator"}, {"voter_2", "aggregator"}, {"aggregator", "tiebreak"}}, []string{"voter_1>aggregator:ballot"}},
	{"self_consistency", map[string]int{"sampler": 2}, [][2]string{{"sampler_1", "aggregator"}, {"sampler_2", "aggregator"}}, []string{"sampler_1>aggregator:sample"}},
	{"contract_net", map[string]int{"bidder": 1}, [][2]string{{"manager", "bidder"}}, []string{"manager>bidder:cfp", "bidder>manager:propose", "manager>bidder:accept-proposal", "bidder>manager:inform-done"}},
	{"bilateral_negotiation", nil, [][2]string{{"proposer", "responder"}}, []string{"proposer>responder:offer", "responder>proposer:counteroffer", "responder>proposer:accept"}},
	{"blackboard", map[string]int{"knowledge_source": 2}, [][2]string{{"knowledge_source_1", "blackboard"}, {"knowledge_source_2", "blackboard"}}, []string{"blackboard>knowledge_source_1:read", "knowledge_source_1>blackboard:post"}},
	{"publish_subscribe", map[string]int{"subscriber": 1}, [][2]string{{"publisher", "broker"}, {"broker", "subscriber"}}, []string{"publisher>broker:publish", "broker>subscriber:notification", "subscriber>broker:reply"}},
	{"broker_facilitator", map[string]int{"provider": 1}, [][2]string{{"requester", "broker"}, {"broker", "provider"}}, []string{"requester>broker:request", "broker>provider:forward", "provider>broker:response", "broker>requester:response"}},
	{"router_targeted", map[string]int{"peer": 2}, [][2]string{{"peer_1", "router"}, {"peer_2", "router"}}, []string{"peer_1>peer_2:targeted_message", "peer_2>peer_1:targeted_message"}},
	{"hierarchical_tree", map[string]int{"sub_manager": 1, "worker": 2}, [][2]string{{"root", "sub_manager"}, {"sub_manager", "worker_1"}, {"sub_manager", "worker_2"}}, []string{"root>sub_manager:subtask", "sub_manager>worker_1:task_assignment", "worker_1>sub_manager:handoff", "sub_manager>root:subtree_report"}},
	{"red_team_judge", nil, [][2]string{{"red_team", "judge"}, {"defender", "judge"}}, []string{"red_team>defender:attack", "defender>red_team:defense", "red_team>judge:attack", "defender>judge:defense"}},
	{"fact_check_verifier", nil, [][2]string{{"producer", "verifier"}, {"verifier", "judge"}}, []string{"producer>verifier:answer", "verifier>judge:check_report", "judge>producer:revise", "judge>producer:accept"}},
	{"plan_execute_reflect", nil, [][2]string{{"planner", "executor"}, {"executor", "observer"}, {"observer", "reflector"}}, []string{"reflector>planner:prompt", "planner>executor:prompt", "reflector>observer:reply"}},
	{"memory_sync", map[string]int{"member": 1}, [][2]string{{"member", "curator"}, {"curator", "memory"}}, []string{"member>curator:private_log", "curator>memory:memory_update"}},
	{"protocol_bridge", nil, [][2]string{{"bridge", "local_agent"}}, []string{"bridge>local_agent:request", "local_agent>bridge:response"}},
}

// drawOnly replaces the instantiated edges by the given ones, as the canvas draws an edge:
// the pattern's default termination and params, and no messages list.
func drawOnly(p pattern.Pattern, edges [][2]string) func(sg *pattern.Subgraph) {
	return func(sg *pattern.Subgraph) {
		model := sg.Interaction.Edges[0]
		sg.Interaction.Edges = nil
		for _, e := range edges {
			params := map[string]any{}
			for k, v := range p.DefaultParams {
				params[k] = v
			}
			sg.Interaction.Edges = append(sg.Interaction.Edges, pattern.Edge{Source: e[0], Target: e[1],
				Data: pattern.EdgeData{Topology: model.Data.Topology, MessageForm: model.Data.MessageForm, Sync: model.Data.Sync,
					Termination: p.DefaultTermination.Clone(), Params: params, Observability: model.Data.Observability}})
		}
	}
}

// TestSmallestDrawingsExchangeWithoutRefusals: every pattern, drawn with only the edges a
// user must draw (P05: the debaters to the judge), runs the exchanges its document describes
// (the debaters read each other's answers) and the bus refuses none of them: the access rules
// are the pattern's own routes between the roles present, plus the drawn edges.
func TestSmallestDrawingsExchangeWithoutRefusals(t *testing.T) {
	if len(smallestDrawings) != len(pattern.All()) {
		t.Errorf("%d drawings for %d patterns", len(smallestDrawings), len(pattern.All()))
	}
	for _, tc := range smallestDrawings {
		t.Run(tc.pattern, func(t *testing.T) {
			t.Parallel()
			p, _ := pattern.Lookup(tc.pattern)
			ws := gitWorkspace(t)
			dir := t.TempDir()
			f := patternFlow(t, ws, "drawn", flowSpec{pattern: tc.pattern, counts: tc.counts, runtime: scripted(t), edit: drawOnly(p, tc.edges), description: "the task"})
			out, err := Run(context.Background(), f, Options{Workspace: ws, Env: map[string]string{"AC_DIR": dir}})
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != StatusCompleted {
				t.Fatalf("run %s: %s", out.Status, out.Reason)
			}
			evs := events(t, ws, "drawn")
			for _, e := range evs {
				if e.Event == "message_refused" {
					t.Errorf("refused: %s %v → %v: %v", fld(e, "type"), fld(e, "from"), fld(e, "to"), fld(e, "error"))
				}
			}
			if out.Metrics.Refused != 0 {
				t.Errorf("metrics count %d refused messages", out.Metrics.Refused)
			}
			for _, w := range tc.want {
				if !sent(evs, w) {
					t.Errorf("no message %s was sent", w)
				}
			}
		})
	}
}

// sent: a message event matches want, "type" or "from>to:type".
func sent(evs []eventlog.Event, want string) bool {
	from, to, typ := "", "", want
	if route, t, ok := strings.Cut(want, ":"); ok {
		typ = t
		from, to, _ = strings.Cut(route, ">")
	}
	for _, e := range evs {
		if e.Event != "message" || fld(e, "type") != typ || (from != "" && fld(e, "from") != from) {
			continue
		}
		if to == "" {
			return true
		}
		switch got := fld(e, "to").(type) {
		case string:
			if got == to {
				return true
			}
		case []any:
			for _, x := range got {
				if x == to {
					return true
				}
			}
		}
	}
	return false
}

// proCon is the debate as most people draw it: each debater connected to the judge
// only, with free-text roles.
const proCon = `version: 0.2
description: Is 2+2 4?
agents:
  - {id: pro, role: pro, runtime: {backendId: command, command: [bash, AGENT], env: [AC_DIR]}}
  - {id: con, role: con, runtime: {backendId: command, command: [bash, AGENT], env: [AC_DIR]}}
systemNodes:
  - {id: judge, type: judge, runtime: {backendId: command, command: [bash, AGENT], env: [AC_DIR]}}
interactions:
  - id: debate
    patternId: debate_judge
    edges:
      - {source: pro, target: judge, data: {termination: {any: [{type: max_rounds, rounds: 3}, {type: judge_decision}]}, params: {timeout_ms: 600000}}}
      - {source: con, target: judge, data: {termination: {any: [{type: max_rounds, rounds: 3}, {type: judge_decision}]}, params: {timeout_ms: 600000}}}
`

// The second case, through real processes: the debaters read each other's answers
// (every round after the first), no message is refused, the error rate is 0.
func TestDebateDrawnToTheJudgeDebates(t *testing.T) {
	agent := script(t, t.TempDir(), "agent.sh", `prompt=$(cat)
n=$(ls "$AC_DIR" | grep -c "^$AGENTCANVAS_AGENT_ID\.")
printf '%s' "$prompt" >"$AC_DIR/$AGENTCANVAS_AGENT_ID.$n.prompt"
case "$AGENTCANVAS_AGENT_ID" in
judge) echo "DECISION: pro"; echo "REASON: sound" ;;
*) echo "ANSWER: $AGENTCANVAS_AGENT_ID says 4 in round $AGENTCANVAS_ROUND" ;;
esac
`)
	ws, f := workspace(t, strings.ReplaceAll(proCon, "AGENT", agent))
	dir := t.TempDir()
	out, err := Run(context.Background(), f, Options{Workspace: ws, Env: map[string]string{"AC_DIR": dir}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted || out.Interactions[0].Reason != "judge_decision" {
		t.Fatalf("outcome %+v", out.Interactions)
	}
	if out.Metrics.Refused != 0 || out.Metrics.ErrorRate != 0 {
		t.Errorf("%d refused, error rate %g; want none", out.Metrics.Refused, out.Metrics.ErrorRate)
	}
	for _, c := range []struct{ reader, writer string }{{"con", "pro"}, {"pro", "con"}} {
		p, err := os.ReadFile(filepath.Join(dir, c.reader+".1.prompt"))
		if err != nil || !strings.Contains(string(p), "ANSWER: "+c.writer+" says 4") {
			t.Errorf("%s's second-round prompt lacks %s's answer (%v):\n%s", c.reader, c.writer, err, p)
		}
	}
	if n := len(messages(events(t, ws, "t"), "answer")); n != 4 {
		t.Errorf("%d answer messages between the debaters, want 4 (rounds 2 and 3, each to the other)", n)
	}
}

// The access rules are the pattern's routes between the roles present plus the drawn edges:
// what the pattern exchanges goes through, what is outside it is refused.
func TestAccessRulesArePatternRoutesPlusEdges(t *testing.T) {
	_, f := workspace(t, strings.ReplaceAll(proCon, "AGENT", "agent.sh"))
	r := &run{f: f, o: Options{RoundCap: 10}}
	c, topology := r.castInteraction(f.Interactions[0])
	if got := c.cast; !slices.Equal(got["judge"], []string{"judge"}) || !slices.Equal(got["debater"], []string{"pro", "con"}) {
		t.Fatalf("cast %v", got)
	}
	b := c.newBus(topology)
	for _, m := range []struct {
		from, to, typ string
		ok            bool
	}{
		{"pro", "con", "answer", true},         // the pattern's route, no edge drawn
		{"con", "pro", "answer", true},         // and back
		{"pro", "con", "prompt", true},         // the engine's conversation along a route
		{"pro", "judge", "final_answer", true}, // route and drawn edge
		{"judge", "con", "prompt", true},       // the engine's conversation along a drawn edge
		{"pro", "con", "final_answer", false},  // a final answer goes to the judge, not the other side
		{"con", "pro", "task_assignment", false},
	} {
		_, err := b.Send(&bus.Envelope{From: m.from, To: bus.Recipients{m.to}, Type: m.typ})
		if (err == nil) != m.ok {
			t.Errorf("%s → %s %s: err %v, want allowed %v", m.from, m.to, m.typ, err, m.ok)
		}
	}
}

// Every role of every pattern is cast when the pattern is drawn as its template draws it, so
// no route names a role the engine never finds, and nobody plays two roles.
func TestEveryRoleIsCast(t *testing.T) {
	for _, p := range pattern.All() {
		ws := t.TempDir()
		f := patternFlow(t, ws, "cast", flowSpec{pattern: p.PatternID, runtime: map[string]any{"backendId": "dry-run"}})
		r := &run{f: f, o: Options{RoundCap: 10}}
		c, _ := r.castInteraction(f.Interactions[0])
		seen := map[string]string{}
		for _, role := range p.Roles {
			if len(c.cast[role.Role]) == 0 {
				t.Errorf("%s: nobody plays %s (cast %v)", p.ID, role.Role, c.cast)
			}
			for _, id := range c.cast[role.Role] {
				if other, dup := seen[id]; dup {
					t.Errorf("%s: %s plays both %s and %s", p.ID, id, other, role.Role)
				}
				seen[id] = role.Role
			}
		}
	}
}
