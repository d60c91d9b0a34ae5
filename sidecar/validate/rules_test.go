package validate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// flowWith builds a small valid flow around the given interaction edges' data and extra
// top-level text, so each case states only what it is about.
const head = "version: 0.2\n"

// codes validates src and returns the codes found, sorted.
func codes(t *testing.T, src string, ws Workspace) ([]string, []diag.Diagnostic) {
	t.Helper()
	f := flow.Parse("t.yaml", []byte(src))
	ds := Flow(f, ws)
	var out []string
	for _, d := range ds {
		out = append(out, d.Code)
		if d.Range.Start.Line < 1 || d.Range.Start.Col < 1 || d.Message == "" {
			t.Errorf("diagnostic without a position or message: %+v", d)
		}
		if d.Range.End.Offset < d.Range.Start.Offset || d.Range.End.Offset > len(src) {
			t.Errorf("range outside the file: %+v", d)
		}
		if d.Fix != nil {
			checkFix(t, f, ws, ds, d)
		}
	}
	slices.Sort(out)
	return out, ds
}

type ruleCase struct {
	name string
	src  string
	want []string // codes, in any order; nil means clean
}

func runCases(t *testing.T, ws Workspace, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ds := codes(t, tc.src, ws)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("codes = %v, want %v\n%s", got, want, formatGolden(ds))
			}
		})
	}
}

// mw is a manager_worker flow with one edge whose data is given.
func mw(data string) string {
	return head + `agents:
  - {id: lead, role: manager}
  - {id: w1, role: worker}
interactions:
  - id: i1
    patternId: manager_worker
    edges:
      - source: lead
        target: w1
        data: ` + data + "\n"
}

// debate is a debate_judge flow with the data of its two edges.
func debate(data1, data2 string) string {
	return head + `agents:
  - {id: a, role: debater}
  - {id: b, role: debater}
systemNodes:
  - {id: j, type: judge}
interactions:
  - id: d
    patternId: debate_judge
    edges:
      - {source: a, target: j, data: ` + data1 + `}
      - {source: b, target: j, data: ` + data2 + `}
`
}

const term2 = "{termination: {type: max_rounds, rounds: 2}}"

func TestSchemaRule(t *testing.T) {
	runCases(t, Workspace{}, []ruleCase{
		{"clean", mw(term2), nil},
		{"all axes valid", mw("{intent: solve, topology: manager_worker, messageForm: structured_json, sync: req_res, verification: [tool_based, audit_log], termination: {type: max_rounds, rounds: 2}, sources: [{kind: paper, ref: x}]}"), nil},
		{"missing version", strings.TrimPrefix(mw(term2), head), []string{CodeSchema}},
		{"missing agents and interactions", head, []string{CodeSchema, CodeSchema}},
		{"bad topology", mw("{topology: star, termination: {type: max_rounds, rounds: 2}}"), []string{CodeSchema}},
		{"bad intent", mw("{intent: win, termination: {type: max_rounds, rounds: 2}}"), []string{CodeSchema}},
		{"bad messageForm", mw("{messageForm: yaml, termination: {type: max_rounds, rounds: 2}}"), []string{CodeSchema}},
		{"bad sync", mw("{sync: later, termination: {type: max_rounds, rounds: 2}}"), []string{CodeSchema}},
		{"bad verification scalar", mw("{verification: vibes, termination: {type: max_rounds, rounds: 2}}"), []string{CodeSchema}},
		{"bad termination type", mw("{termination: {type: forever}}"), []string{CodeSchema}},
		{"bad source kind", mw("{termination: {type: max_rounds, rounds: 2}, sources: [{kind: blog, ref: x}]}"), []string{CodeSchema}},
		{"source without ref", mw("{termination: {type: max_rounds, rounds: 2}, sources: [{kind: paper}]}"), []string{CodeSchema}},
		{"wrong type from the loader", mw("{termination: {type: max_rounds, rounds: two}}"), []string{CodeSchema}},
		{"agent without id", strings.Replace(mw(term2), "{id: w1, role: worker}", "{role: worker}", 1), []string{CodeSchema, CodeUnknownAgent}},
		{"edge without source", strings.Replace(mw(term2), "source: lead\n        target", "target", 1), []string{CodeSchema}},
		{"interaction without patternId", strings.Replace(mw(term2), "    patternId: manager_worker\n", "", 1), []string{CodeSchema}},
		{"interaction without edges", head + "agents: []\ninteractions:\n  - {id: i1, patternId: blackboard}\n", []string{CodeSchema}},
		{"system node type", head + "agents: []\nsystemNodes: [{id: s, type: oracle}]\ninteractions: []\n", []string{CodeSchema}},
		{"system node without type", head + "agents: []\nsystemNodes: [{id: s}]\ninteractions: []\n", []string{CodeSchema}},
		{"backend enum", head + "agents: [{id: a, runtime: {backendId: gpt}}]\ninteractions: []\n", []string{CodeSchema}},
		{"all runtime enums valid", head + "agents: [{id: a, runtime: {kind: cli, backendId: claude, cwdMode: agentHome, permissionMode: acceptEdits, maxTurns: 5, sessionLoop: {maxIterations: 3}}}]\ninteractions: []\n", nil},
		{"cwdMode and permissionMode and kind", head + "agents: [{id: a, runtime: {kind: http, cwdMode: home, permissionMode: yolo}}]\ninteractions: []\n", []string{CodeSchema, CodeSchema, CodeSchema}},
		{"command backend without command", head + "agents: [{id: a, runtime: {backendId: command}}]\ninteractions: []\n", []string{CodeSchema}},
		{"command backend with command", head + "agents: [{id: a, runtime: {backendId: command, command: [bash, x.sh]}}]\ninteractions: []\n", nil},
		{"network none on a command agent", head + "agents: [{id: a, runtime: {backendId: command, command: [bash, x.sh], network: none}}]\ninteractions: []\n", nil},
		{"network none on a CLI agent", head + "agents: [{id: a, runtime: {backendId: claude, network: none}}, {id: b, runtime: {network: none}}]\ninteractions: []\n", []string{CodeSchema, CodeSchema}},
		{"network enum", head + "agents: [{id: a, runtime: {backendId: command, command: [x], network: off}}]\ninteractions: []\n", []string{CodeSchema}},
		{"unixSockets grant is a warning", head + "agents: [{id: a, runtime: {backendId: command, command: [x], unixSockets: [/var/run/docker.sock, run/app.sock]}}]\ninteractions: []\n", []string{CodeSchema}},
		{"unixSockets empty and outside the workspace", head + "agents: [{id: a, runtime: {backendId: command, command: [x], unixSockets: [\"\", ../other/s.sock]}}]\ninteractions: []\n", []string{CodeSchema, CodeSchema, CodeSchema}},
		{"env names", head + "agents: [{id: a, runtime: {env: [GOOD_NAME, _ALSO, 9bad, has-dash, \"K=v\"]}}]\ninteractions: []\n", []string{CodeSchema, CodeSchema, CodeSchema}},
		{"maxTurns zero", head + "agents: [{id: a, runtime: {maxTurns: 0}}]\ninteractions: []\n", []string{CodeSchema}},
		{"maxCostUsd zero and a word", head + "agents: [{id: a, runtime: {maxCostUsd: 0}}, {id: b, runtime: {maxCostUsd: lots}}]\ninteractions: []\n", []string{CodeSchema, CodeSchema}},
		{"policy.pricing", "policy: {pricing: {openai: {gpt-5: {input: 1, output: 8}}}}\n" + mw(term2), nil},
		{"policy.pricing of no provider", "policy: {pricing: {acme: {x: {input: 1}}}}\n" + mw(term2), []string{CodeSchema}},
		{"policy.pricing negative", "policy: {pricing: {gemini: {gemini: {output: -1}}}}\n" + mw(term2), []string{CodeSchema}},
		{"params.max_cost_usd zero", mw("{termination: {type: judge_decision}, params: {max_cost_usd: 0, round_cap: 3}}"), []string{CodeSchema}},
		{"params.max_cost_usd", mw("{termination: {type: judge_decision}, params: {max_cost_usd: 1.5, round_cap: 3}}"), nil},
		{"maxCostUsd and network open", head + "agents: [{id: a, runtime: {backendId: claude, env: [ANTHROPIC_API_KEY], maxCostUsd: 0.5, network: open}}]\ninteractions: []\n", nil},
		{"maxCostUsd and network open off the gateway", head + "agents: [{id: a, runtime: {backendId: claude, maxCostUsd: 0.5, network: open}}, {id: b, runtime: {backendId: command, command: [x], env: [OPENAI_API_KEY], maxCostUsd: 1}}]\ninteractions: []\n", []string{CodeSchema, CodeSchema, CodeSchema}},
		{"sessionLoop zero", head + "agents: [{id: a, runtime: {sessionLoop: {maxIterations: 0}}}]\ninteractions: []\n", []string{CodeSchema}},
		// What the engine cannot honour (honour.go).
		{"sessionLoop negative delay", head + "agents: [{id: a, runtime: {sessionLoop: {maxIterations: 3, delayMs: -5}}}]\ninteractions: []\n", []string{CodeSchema}},
		{"runtime.secrets names", head + "agents: [{id: a, runtime: {secrets: [DB_PASSWORD, \"bad name\"]}}]\ninteractions: []\n", []string{CodeSchema}},
		{"params out of range", mw("{termination: {type: max_rounds, rounds: 2}, params: {ttl_s: -1, samples: 0, bid_deadline_ms: -3, rate_limit_per_min: -1}}"), []string{CodeSchema, CodeSchema, CodeSchema, CodeSchema}},
		{"params enums", mw("{termination: {type: max_rounds, rounds: 2}, params: {priority: urgent, award_rule: cheapest, select: weighted, match: fuzzy, schedule: hourly, repeat: true}}"), []string{CodeSchema, CodeSchema, CodeSchema, CodeSchema, CodeSchema, CodeSchema}},
		{"params enums valid", mw("{termination: {type: max_rounds, rounds: 2}, params: {priority: High, award_rule: best_bid, ttl_s: 0, verifier: lead}}"), nil},
		{"verifier names no agent", mw("{termination: {type: max_rounds, rounds: 2}, params: {verifier: nobody}}"), []string{CodeUnknownAgent}},
		{"retain_days while another interaction keeps its log", mw(term2) + `  - id: i2
    patternId: manager_worker
    edges:
      - source: lead
        target: w1
        data: {termination: {type: max_rounds, rounds: 2}, observability: {retain_days: 7}}
`, []string{CodeSchema}},
		{"retain_days everywhere, or on the only logged interaction", mw("{termination: {type: max_rounds, rounds: 2}, observability: {logs: false}}") + `  - id: i2
    patternId: manager_worker
    edges:
      - source: lead
        target: w1
        data: {termination: {type: max_rounds, rounds: 2}, observability: {retain_days: 7}}
`, nil},
		{"traces are not recorded apart", mw("{termination: {type: max_rounds, rounds: 2}, observability: {logs: true, traces: true}}"), []string{CodeSchema}},
		{"unknown field is an error", head + "agents: [{id: a, colour: red}]\ninteractions: []\n", []string{CodeSchema}},
	})
}

func TestYAMLSyntaxRule(t *testing.T) {
	runCases(t, Workspace{}, []ruleCase{
		{"unclosed flow mapping", head + "agents: [{id: a\n", []string{CodeYAMLSyntax}},
		{"two documents", mw(term2) + "---\nversion: 1\n", []string{CodeYAMLSyntax}},
		{"tab indentation", head + "agents:\n\t- id: a\n", []string{CodeYAMLSyntax}},
	})
}

func TestDuplicateIDRule(t *testing.T) {
	runCases(t, Workspace{}, []ruleCase{
		{"unique", mw(term2), nil},
		{"two agents", strings.Replace(mw(term2), "{id: w1, role: worker}", "{id: w1, role: worker}\n  - {id: w1}", 1), []string{CodeDuplicateID}},
		{"agent and system node", strings.Replace(mw(term2), "interactions:", "systemNodes: [{id: w1, type: judge}]\ninteractions:", 1), []string{CodeDuplicateID}},
		{"interaction named like an agent", strings.Replace(mw(term2), "id: i1", "id: lead", 1), []string{CodeDuplicateID}},
		{"explicit edge ids", strings.Replace(debate("{termination: {type: timeout_ms, ms: 5}}", "{termination: {type: timeout_ms, ms: 5}}"), "{source: a,", "{id: e1, source: a,", 1), nil},
		{"two equal explicit edge ids", strings.ReplaceAll(debate("{termination: {type: timeout_ms, ms: 5}}", "{termination: {type: timeout_ms, ms: 5}}"), "- {source:", "- {id: e, source:"), []string{CodeDuplicateID}},
		{"explicit edge id equal to a derived one", head + `agents: [{id: lead, role: manager}, {id: w1}]
interactions:
  - id: i1
    patternId: manager_worker
    edges:
      - {source: lead, target: w1, data: {termination: {type: max_rounds, rounds: 2}}}
      - {id: i1-e1, source: lead, target: w1, data: {termination: {type: max_rounds, rounds: 2}}}
`, []string{CodeDuplicateID}},
		{"derived edge id equal to an agent", head + `agents: [{id: lead, role: manager}, {id: w1}, {id: i1-e1}]
interactions:
  - id: i1
    patternId: manager_worker
    edges:
      - source: lead
        target: w1
        data: {termination: {type: max_rounds, rounds: 2}}
`, []string{CodeDuplicateID}},
	})
}

func TestUnknownAgentRule(t *testing.T) {
	runCases(t, Workspace{}, []ruleCase{
		{"known", mw(term2), nil},
		{"unknown target with a close match", strings.Replace(mw(term2), "target: w1", "target: w2", 1), []string{CodeUnknownAgent}},
		{"unknown source, no match", strings.Replace(mw(term2), "source: lead", "source: zebra", 1), []string{CodeUnknownAgent}},
		{"system node endpoint", strings.Replace(strings.Replace(mw(term2), "interactions:", "systemNodes: [{id: boss, type: manager}]\ninteractions:", 1), "source: lead", "source: boss", 1), nil},
		{"dependsOn known", strings.Replace(mw(term2), "patternId: manager_worker", "patternId: manager_worker\n    dependsOn: []", 1), nil},
		{"dependsOn unknown", strings.Replace(mw(term2), "patternId: manager_worker", "patternId: manager_worker\n    dependsOn: [i0]", 1), []string{CodeUnknownAgent}},
		{"dependsOn itself", strings.Replace(mw(term2), "patternId: manager_worker", "patternId: manager_worker\n    dependsOn: [i1]", 1), []string{CodeUnknownAgent}},
		{"dependsOn cycle of two", mw(term2) + `  - id: i2
    patternId: manager_worker
    dependsOn: [i1]
    edges:
      - source: lead
        target: w1
        data: {termination: {type: max_rounds, rounds: 2}}
`, nil},
		{"dependsOn cycle", strings.Replace(mw(term2), "patternId: manager_worker", "patternId: manager_worker\n    dependsOn: [i2]", 1) + `  - id: i2
    patternId: manager_worker
    dependsOn: [i1]
    edges:
      - source: lead
        target: w1
        data: {termination: {type: max_rounds, rounds: 2}}
`, []string{CodeUnknownAgent}},
		{"layout of known nodes and edges", mw(term2) + "layout:\n  nodes:\n    lead: {x: 0, y: 0}\n  edges:\n    i1-e1: {}\n", nil},
		{"layout of unknown node", mw(term2) + "layout:\n  nodes:\n    lead: {x: 0, y: 0}\n    gone: {x: 1, y: 1}\n", []string{CodeUnknownAgent}},
	})
	_, ds := codes(t, mw(term2)+"layout:\n  nodes:\n    gone: {x: 1, y: 1}\n", Workspace{})
	if len(ds) != 1 || ds[0].Severity != diag.Warning {
		t.Errorf("a stale layout entry is a warning: %v", ds)
	}
}

func TestUnknownPatternRule(t *testing.T) {
	runCases(t, Workspace{}, []ruleCase{
		{"canonical id", mw(term2), nil},
		{"alias", strings.Replace(mw(term2), "patternId: manager_worker", "patternId: P01", 1), nil},
		{"lower-case alias", strings.Replace(mw(term2), "patternId: manager_worker", "patternId: p01", 1), nil},
		{"typo", strings.Replace(mw(term2), "patternId: manager_worker", "patternId: manager-worker", 1), []string{CodeUnknownPattern}},
		{"unknown", strings.Replace(mw(term2), "patternId: manager_worker", "patternId: swarm", 1), []string{CodeUnknownPattern}},
	})
	// A topology name where a pattern id belongs points to the pattern that uses it.
	_, ds := codes(t, strings.Replace(mw(term2), "patternId: manager_worker", "patternId: market_auction", 1), Workspace{})
	if len(ds) == 0 || !strings.Contains(ds[0].Message, `"market_auction" is a topology, used by the pattern contract_net`) || ds[0].Fix == nil || ds[0].Fix.Title != `Change to "contract_net"` {
		t.Errorf("topology as pattern id: %v", ds)
	}
	for _, id := range PatternIDs() {
		if _, ok := lookupPattern(id); !ok {
			t.Errorf("%s not found", id)
		}
	}
	if len(PatternIDs()) != 20 {
		t.Errorf("%d patterns, want 20", len(PatternIDs()))
	}
}

func TestTerminationRequiredRule(t *testing.T) {
	runCases(t, Workspace{}, []ruleCase{
		{"present", mw(term2), nil},
		{"no data", strings.Replace(mw(term2), "        data: "+term2+"\n", "", 1), []string{CodeTerminationRequired}},
		{"data without termination", mw("{sync: req_res}"), []string{CodeTerminationRequired}},
		{"null termination", mw("{termination: null}"), []string{CodeTerminationRequired}},
		{"block data without termination", mw("\n          sync: req_res\n          params: {x: 1}"), []string{CodeTerminationRequired}},
		{"unknown pattern still needs one", strings.Replace(mw("{sync: req_res}"), "manager_worker", "nothing", 1), []string{CodeTerminationRequired, CodeUnknownPattern}},
	})
	// Every pattern's default termination is itself valid (the fix inserts it).
	for _, p := range pattern.All() {
		src := strings.Replace(mw("{sync: req_res}"), "patternId: manager_worker", "patternId: "+p.PatternID, 1)
		_, ds := codes(t, src, Workspace{})
		for _, d := range ds {
			if d.Code == CodeTerminationRequired && d.Fix == nil {
				t.Errorf("%s: termination-required without a fix", p.PatternID)
			}
		}
	}
}

func TestInvalidTerminationRule(t *testing.T) {
	runCases(t, Workspace{}, []ruleCase{
		{"every valid kind", mw(`{termination: {any: [{type: max_rounds, rounds: 1}, {type: timeout_ms, ms: 1}, {type: judge_decision}, {type: consensus_threshold, threshold: 1}, {all: [{type: quality_gate, metric: score, op: "<=", value: 0.5}, {type: quality_gate, metric: "custom:my_metric", op: ">=", value: 3}]}]}}`), nil},
		{"rounds 0", mw("{termination: {type: max_rounds, rounds: 0}}"), []string{CodeInvalidTermination}},
		{"rounds missing", mw("{termination: {type: max_rounds}}"), []string{CodeInvalidTermination}},
		{"ms 0", mw("{termination: {type: timeout_ms, ms: 0}}"), []string{CodeInvalidTermination}},
		{"ms missing", mw("{termination: {type: timeout_ms}}"), []string{CodeInvalidTermination}},
		{"threshold 0", mw("{termination: {type: consensus_threshold, threshold: 0}}"), []string{CodeInvalidTermination}},
		{"threshold 1.5", mw("{termination: {type: consensus_threshold, threshold: 1.5}}"), []string{CodeInvalidTermination}},
		{"threshold 150", mw("{termination: {type: consensus_threshold, threshold: 150}}"), []string{CodeInvalidTermination}},
		{"threshold missing", mw("{termination: {type: consensus_threshold}}"), []string{CodeInvalidTermination}},
		{"operator", mw(`{termination: {type: quality_gate, metric: score, op: "==", value: 1}}`), []string{CodeInvalidTermination}},
		{"operator >", mw(`{termination: {type: quality_gate, metric: score, op: ">", value: 1}}`), []string{CodeInvalidTermination}},
		{"operator missing", mw(`{termination: {type: quality_gate, metric: score, value: 1}}`), []string{CodeInvalidTermination}},
		{"metric unknown", mw(`{termination: {type: quality_gate, metric: happiness, op: ">=", value: 1}}`), []string{CodeInvalidTermination}},
		{"metric missing", mw(`{termination: {type: quality_gate, op: ">=", value: 1}}`), []string{CodeInvalidTermination}},
		{"value missing", mw(`{termination: {type: quality_gate, metric: score, op: ">="}}`), []string{CodeInvalidTermination}},
		{"no type", mw("{termination: {rounds: 3}}"), []string{CodeInvalidTermination}},
		{"empty any", mw("{termination: {any: []}}"), []string{CodeInvalidTermination}},
		{"empty all nested", mw("{termination: {any: [{type: judge_decision}, {all: []}]}}"), []string{CodeInvalidTermination}},
		{"type and any", mw("{termination: {type: judge_decision, any: [{type: judge_decision}]}}"), []string{CodeInvalidTermination}},
		{"any and all", mw("{termination: {any: [{type: judge_decision}], all: [{type: judge_decision}]}}"), []string{CodeInvalidTermination}},
	})
}

func TestTimeoutRequiredRule(t *testing.T) {
	tm := "{type: timeout_ms, ms: 600000}"
	runCases(t, Workspace{}, []ruleCase{
		{"timeout in termination", debate("{termination: "+tm+"}", "{termination: {any: [{type: judge_decision}, "+tm+"]}}"), nil},
		{"timeout in params", debate("{termination: {type: judge_decision}, params: {timeout_ms: 1000}}", "{termination: {all: [{type: judge_decision}, "+tm+"]}}"), nil},
		// The engine merges an interaction's edges: one edge's timeout bounds the interaction.
		{"one edge without", debate("{termination: {type: judge_decision}}", "{termination: "+tm+"}"), nil},
		{"no edge with one: one error, not one per edge", debate("{termination: {type: judge_decision}}", "{termination: {type: max_rounds, rounds: 3}}"), []string{CodeTimeoutRequired}},
		{"bad params timeout", debate("{termination: {type: judge_decision}, params: {timeout_ms: 0}}", "{termination: "+tm+"}"), []string{CodeTimeoutRequired}},
		{"fractional params timeout", debate("{termination: {type: judge_decision}, params: {timeout_ms: 1.5}}", "{termination: "+tm+"}"), []string{CodeTimeoutRequired}},
		{"string params timeout", debate("{termination: {type: judge_decision}, params: {timeout_ms: soon}}", "{termination: "+tm+"}"), []string{CodeTimeoutRequired}},
		{"debate topology on another pattern", strings.Replace(mw("{topology: debate_judge, termination: {type: max_rounds, rounds: 2}}"), "", "", 1), []string{CodeTimeoutRequired}},
		{"manager_worker needs none", mw(term2), nil},
		{"a debate drawn as p2p still needs one", debate("{topology: p2p, termination: {type: judge_decision}}", "{topology: p2p, termination: {type: judge_decision}}"), []string{CodeTimeoutRequired}},
		{"negotiation", strings.Replace(strings.Replace(mw(term2), "manager_worker", "bilateral_negotiation", 1), "{id: lead, role: manager}", "{id: lead, role: proposer}", 1), []string{CodeTimeoutRequired}},
		{"critic refiner curator", head + `agents: [{id: c, role: critic}, {id: r, role: refiner}, {id: j, role: judge}]
interactions:
  - id: i1
    patternId: critic_refiner_curator
    edges: [{source: c, target: r, data: {termination: {type: max_rounds, rounds: 3}}}, {source: r, target: j, data: {termination: {type: max_rounds, rounds: 2}}}]
`, []string{CodeTimeoutRequired}},
	})
}

func bb(params, nodeParams string) string {
	return head + `agents: [{id: a}, {id: b}]
systemNodes: [{id: board, type: blackboard` + nodeParams + `}]
interactions:
  - id: s
    patternId: blackboard
    edges:
      - {source: a, target: board, data: {termination: {type: max_rounds, rounds: 5}` + params + `}}
`
}

func TestRetentionRequiredRule(t *testing.T) {
	runCases(t, Workspace{}, []ruleCase{
		{"keep_last_n on the edge", bb(", params: {retention: {keep_last_n: 10}}", ""), nil},
		{"keep_last_days on the edge", bb(", params: {retention: {keep_last_days: 7}}", ""), nil},
		{"on the blackboard node", bb("", ", params: {retention: {keep_last_n: 10}}"), nil},
		{"missing", bb("", ""), []string{CodeRetentionRequired}},
		{"blackboard pattern with another topology", bb(", topology: broadcast", ""), []string{CodeRetentionRequired}},
		{"zero", bb(", params: {retention: {keep_last_n: 0}}", ""), []string{CodeRetentionRequired}},
		{"wrong key", bb(", params: {retention: {keep: 3}}", ""), []string{CodeRetentionRequired}},
		{"not a mapping", bb(", params: {retention: forever}", ""), []string{CodeRetentionRequired}},
		{"bad on the node", bb("", ", params: {retention: {keep_last_n: -1}}"), []string{CodeRetentionRequired}},
	})
}

func router(params, nodeParams string) string {
	return head + `agents: [{id: a}, {id: b}]
systemNodes: [{id: r, type: router` + nodeParams + `}]
interactions:
  - id: s
    patternId: router_targeted
    edges:
      - {source: a, target: r, data: {termination: {type: timeout_ms, ms: 5}` + params + `}}
      - {source: r, target: b, data: {termination: {type: timeout_ms, ms: 5}` + params + `}}
`
}

func TestRateLimitRequiredRule(t *testing.T) {
	runCases(t, Workspace{}, []ruleCase{
		{"on the edges", router(", params: {rate_limit_per_min: 10}", ""), nil},
		{"on the router", router("", ", params: {rate_limit_per_min: 5}"), nil},
		{"missing", router("", ""), []string{CodeRateLimitRequired}},
		{"router pattern with another topology", router(", topology: p2p", ""), []string{CodeRateLimitRequired}},
		{"zero", router(", params: {rate_limit_per_min: 0}", ""), []string{CodeRateLimitRequired, CodeRateLimitRequired}},
		{"broker topology", head + `agents: [{id: a}, {id: b}]
systemNodes: [{id: k, type: broker}]
interactions:
  - id: s
    patternId: broker_facilitator
    edges:
      - {source: a, target: k, data: {termination: {type: timeout_ms, ms: 5}}}
      - {source: k, target: b, data: {termination: {type: timeout_ms, ms: 5}}}
`, []string{CodeRateLimitRequired}},
	})
}

func TestMissingRoleRule(t *testing.T) {
	tm := "{termination: {type: timeout_ms, ms: 600000}}"
	vote := func(voters int, judge bool) string {
		var b strings.Builder
		b.WriteString(head + "agents:\n")
		for i := range voters {
			b.WriteString("  - {id: v" + string(rune('0'+i)) + ", role: evaluator}\n")
		}
		b.WriteString("systemNodes:\n  - {id: agg, type: aggregator}\n")
		if judge {
			b.WriteString("  - {id: tie, type: judge}\n")
		}
		b.WriteString("interactions:\n  - id: vote\n    patternId: majority_vote\n    edges:\n")
		for i := range voters {
			b.WriteString("      - {source: v" + string(rune('0'+i)) + ", target: agg, data: {termination: {any: [{type: consensus_threshold, threshold: 0.6}, {type: max_rounds, rounds: 2}]}}}\n")
		}
		if judge {
			b.WriteString("      - {source: agg, target: tie, data: {termination: {type: judge_decision}}}\n")
		}
		return b.String()
	}
	runCases(t, Workspace{}, []ruleCase{
		{"debate with judge", debate(tm, tm), nil},
		{"debate with an agent judge", head + `agents: [{id: a}, {id: b}, {id: j, role: judge}]
interactions:
  - id: d
    patternId: debate_judge
    edges: [{source: a, target: j, data: ` + tm + `}, {source: b, target: j, data: ` + tm + `}]
`, nil},
		{"debate without judge", head + `agents: [{id: a}, {id: b}]
interactions:
  - id: d
    patternId: debate_judge
    edges: [{source: a, target: b, data: ` + tm + `}]
`, []string{CodeMissingRole}},
		{"debate with one debater", head + `agents: [{id: a}]
systemNodes: [{id: j, type: judge}]
interactions:
  - id: d
    patternId: debate_judge
    edges: [{source: a, target: j, data: ` + tm + `}]
`, []string{CodeMissingRole}},
		{"red team and defender", head + `agents: [{id: r, role: red_team}, {id: d, role: defender}]
systemNodes: [{id: j, type: judge}]
interactions:
  - id: rt
    patternId: red_team_judge
    edges: [{source: r, target: j, data: ` + tm + `}, {source: d, target: j, data: ` + tm + `}]
`, nil},
		{"two red teams and no defender", head + `agents: [{id: r1, role: red_team}, {id: r2, role: attacker}]
systemNodes: [{id: j, type: judge}]
interactions:
  - id: rt
    patternId: red_team_judge
    edges: [{source: r1, target: j, data: ` + tm + `}, {source: r2, target: j, data: ` + tm + `}]
`, []string{CodeMissingRole}},
		{"a pair of three", head + `agents: [{id: u, role: user}, {id: a, role: assistant}, {id: x, role: assistant}]
interactions:
  - id: p
    patternId: role_play_pair
    edges: [{source: u, target: a, data: {termination: {type: max_rounds, rounds: 2}}}, {source: u, target: x, data: {termination: {type: max_rounds, rounds: 2}}}]
`, []string{CodeMissingRole}},
		{"vote of three", vote(3, false), nil},
		{"vote of two with tie-break", vote(2, true), nil},
		{"vote of two", vote(2, false), []string{CodeMissingRole}},
		{"vote of one with tie-break", vote(1, true), []string{CodeMissingRole}},
		{"contract net with bidders", head + `agents: [{id: m, role: manager}, {id: b1, role: bidder}]
interactions:
  - id: c
    patternId: contract_net
    edges: [{source: m, target: b1, data: ` + tm + `}]
`, nil},
		{"contract net without bidders", head + `agents: [{id: m, role: manager}]
systemNodes: [{id: agg, type: aggregator}]
interactions:
  - id: c
    patternId: contract_net
    edges: [{source: m, target: agg, data: ` + tm + `}]
`, []string{CodeMissingRole}},
		{"pipeline of two", head + `agents: [{id: a}, {id: b}]
interactions:
  - id: p
    patternId: P03
    edges: [{source: a, target: b, data: {termination: {type: max_rounds, rounds: 1}}}]
`, nil},
		{"pipeline of one", head + `agents: [{id: a}]
interactions:
  - id: p
    patternId: P03
    edges: [{source: a, target: a, data: {termination: {type: max_rounds, rounds: 1}}}]
`, []string{CodeMissingRole, CodeUnknownAgent}},
		{"manager_worker without manager", strings.Replace(strings.Replace(mw(term2), "{id: lead, role: manager}", "{id: boss, role: worker}", 1), "source: lead", "source: boss", 1), []string{CodeMissingRole}},
		{"blackboard without board", head + `agents: [{id: a}, {id: b}]
interactions:
  - id: s
    patternId: blackboard
    edges: [{source: a, target: b, data: {termination: {type: max_rounds, rounds: 5}, params: {retention: {keep_last_n: 1}}}}]
`, []string{CodeMissingRole}},
		{"router without router", head + `agents: [{id: a}, {id: b}]
interactions:
  - id: s
    patternId: router_targeted
    edges: [{source: a, target: b, data: {termination: {type: timeout_ms, ms: 5}, params: {rate_limit_per_min: 1}}}]
`, []string{CodeMissingRole}},
		{"critic without refiner", head + `agents: [{id: c, role: critic}, {id: x}]
systemNodes: [{id: j, type: judge}]
interactions:
  - id: i1
    patternId: critic_refiner_curator
    edges: [{source: c, target: x, data: ` + tm + `}, {source: x, target: j, data: ` + tm + `}]
`, []string{CodeMissingRole}},
	})
}

// secretFlow puts a value into params and the agent's env.
func secretFlow(value string) string {
	return mw("{termination: {type: max_rounds, rounds: 2}, params: {note: \"" + value + "\"}}")
}

func TestRawSecretRule(t *testing.T) {
	fake := map[string]string{
		"openai":             "sk-proj-" + strings.Repeat("Ab1", 12),
		"anthropic":          "sk-ant-api03-" + strings.Repeat("Xy9_", 10),
		"github":             "ghp_" + strings.Repeat("a1B2", 9),
		"github pat":         "github_pat_" + strings.Repeat("Z9y8", 8),
		"aws":                "AKIA" + "ABCDEFGHIJ234567",
		"google":             "AIza" + strings.Repeat("Sy0-", 9) + "abc",
		"slack":              "xoxb-" + "1234567890-abcdefABCDEF",
		"stripe":             "sk_live_" + strings.Repeat("4eC3", 6),
		"jwt":                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"in a longer string": "Authorization: Bearer ghp_" + strings.Repeat("a1B2", 9),
	}
	var cases []ruleCase
	for name, v := range fake {
		cases = append(cases, ruleCase{name, secretFlow(v), []string{CodeRawSecret}})
	}
	key := "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\\n-----END OPENSSH PRIVATE KEY-----"
	cases = append(cases,
		ruleCase{"private key", secretFlow(key), []string{CodeRawSecret}},
		ruleCase{"high entropy in params", mw("{termination: {type: max_rounds, rounds: 2}, params: {session: Zq8xW3vN7pL2kR9mT4yB6cH1jD5fG0sA}}"), []string{CodeRawSecret}},
		ruleCase{"high entropy in env", head + "agents: [{id: a, runtime: {env: [Zq8xW3vN7pL2kR9mT4yB6cH1jD5fG0sA]}}]\ninteractions: []\n", []string{CodeRawSecret}},
		ruleCase{"secret-named key", mw("{termination: {type: max_rounds, rounds: 2}, params: {client_secret: hunter2hunter2}}"), []string{CodeRawSecret}},
		ruleCase{"in an agent's instructions", head + "agents: [{id: a, instructions: \"use key sk-" + strings.Repeat("Ab1", 10) + " for calls\"}]\ninteractions: []\n", []string{CodeRawSecret}},
		// Not secrets:
		ruleCase{"env names", head + "agents: [{id: a, runtime: {env: [OPENAI_API_KEY, GITHUB_TOKEN]}}]\ninteractions: []\n", nil},
		ruleCase{"secret-named key holding a name", mw("{termination: {type: max_rounds, rounds: 2}, params: {api_key: OPENAI_API_KEY, token: \"${GH_TOKEN}\", password: \"env:DB_PASSWORD\"}}"), nil},
		ruleCase{"prose and paths", mw("{termination: {type: max_rounds, rounds: 2}, params: {task: \"Implement the sk-learn pipeline in src/ModelTrainingPipeline2024.py\", file: src/components/DataTableHeader12.tsx}}"), nil},
		ruleCase{"sk- prose", mw("{termination: {type: max_rounds, rounds: 2}, params: {lib: sk-learn-compatible-estimator-api}}"), nil},
		ruleCase{"commit id", mw("{termination: {type: max_rounds, rounds: 2}, params: {base: 3f2c9d1e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e}}"), nil},
		ruleCase{"CamelCase name", mw("{termination: {type: max_rounds, rounds: 2}, params: {name: TaskTemplateVersionTwoFinal2}}"), nil},
		ruleCase{"max_tokens", mw("{termination: {type: max_rounds, rounds: 2}, params: {max_tokens: 4000, token_budget: \"4000\"}}"), nil},
		ruleCase{"stop tokens", mw("{termination: {type: max_rounds, rounds: 2}, params: {done_token: \"<CAMEL_TASK_DONE>\", stop_token: ENDOFTASK42x, token: \"<|end|>\"}}"), nil},
	)
	runCases(t, Workspace{}, cases)

	// The message and the fix never repeat the secret.
	for name, v := range fake {
		_, ds := codes(t, secretFlow(v), Workspace{})
		for _, d := range ds {
			secretPart := v
			if i := strings.Index(v, "ghp_"); i > 0 {
				secretPart = v[i:]
			}
			text := d.Message
			if d.Fix != nil {
				text += d.Fix.Title
				for _, e := range d.Fix.Edits {
					text += e.NewText
				}
			}
			if strings.Contains(text, secretPart) || strings.Contains(text, secretPart[:12]) {
				t.Errorf("%s: the diagnostic repeats the secret: %s", name, text)
			}
		}
	}
}

func TestUnsafePathRule(t *testing.T) {
	agent := func(files, rules string) string {
		return head + "agents: [{id: a, files: " + files + ", rules: " + rules + "}]\ninteractions: []\n"
	}
	runCases(t, Workspace{}, []ruleCase{
		{"relative files", agent("[src/a.ts, ./README.md, docs/x/y.md]", "[rules/a.md, \"Keep functions short\"]"), nil},
		{"the whole workspace", agent("[\".\"]", "[]"), nil},
		{"the root spelled otherwise", agent("[\"./\", src/..]", "[]"), []string{CodeUnsafePath, CodeUnsafePath}},
		{"dot-dot", agent("[../x]", "[]"), []string{CodeUnsafePath}},
		{"absolute", agent("[/etc/passwd]", "[]"), []string{CodeUnsafePath}},
		{"windows absolute", agent("[\"C:/x\"]", "[]"), []string{CodeUnsafePath}},
		{"internal folders in any case", agent("[.git/config, .GIT/HEAD, .agentcanvas/x, node_modules/a, dist/b]", "[]"), []string{CodeUnsafePath, CodeUnsafePath, CodeUnsafePath, CodeUnsafePath, CodeUnsafePath}},
		{"rule file with dot-dot", agent("[]", "[../AGENTS.md]"), []string{CodeUnsafePath}},
		{"global refs", head + "commonRules: {ruleChainRefs: [\"CODEX_GLOBAL:~/.codex/AGENTS.md\", \"CLAUDE_GLOBAL:~/.claude/CLAUDE.md\", \"PROJECT:./AGENTS.md\", \"PROJECT:docs/RULES.md\"]}\nagents: []\ninteractions: []\n", nil},
		{"home in a project ref", head + "commonRules: {ruleChainRefs: [\"PROJECT:~/AGENTS.md\"]}\nagents: []\ninteractions: []\n", []string{CodeUnsafePath}},
		{"climbing out of home", head + "commonRules: {ruleChainRefs: [\"CODEX_GLOBAL:~/../x\"]}\nagents: []\ninteractions: []\n", []string{CodeUnsafePath}},
		{"absolute ref", head + "commonRules: {ruleChainRefs: [\"PROJECT:/etc/x\"]}\nagents: []\ninteractions: []\n", []string{CodeUnsafePath}},
	})
	// An absolute path inside the workspace gets a fix to its relative spelling.
	root := t.TempDir()
	src := head + "agents: [{id: a, files: [" + filepath.ToSlash(filepath.Join(root, "src", "a.ts")) + "]}]\ninteractions: []\n"
	_, ds := codes(t, src, Workspace{Root: root})
	if len(ds) != 1 || ds[0].Fix == nil || !strings.Contains(ds[0].Fix.Edits[0].NewText, "src/a.ts") {
		t.Errorf("absolute path inside the workspace: %v", ds)
	}
	// The person's rules add to the built-in ones, for agent files only.
	ws := Workspace{Rules: safepath.Rules{Allowed: []string{"src"}, Blocked: []string{"secret"}, AllowedFrom: "agentcanvas.allowedFolders", BlockedFrom: "--block"}}
	runCases(t, ws, []ruleCase{
		{"person's rules", agent("[src/a.ts, src/secret/a, dist/b, lib/c.ts]", "[docs/RULES.md]"), []string{CodeUnsafePath, CodeUnsafePath, CodeUnsafePath}},
	})
	_, ds = codes(t, agent("[src/a.ts, lib/c.ts, src/secret/k]", "[]"), ws)
	want := []string{
		`agent file "lib/c.ts" is refused: outside the allowed folders [src] (agentcanvas.allowedFolders); a sandbox copies files only from the allowed folders`,
		`agent file "src/secret/k" is refused: in the blocked folder secret (--block); a sandbox never copies a blocked folder`,
	}
	if len(ds) != 2 || ds[0].Message != want[0] || ds[1].Message != want[1] || ds[0].Path != "/agents/0/files/1" {
		t.Errorf("diagnostics: %v", ds)
	}
}

// workspaceDir makes a workspace with skills and an allowlist.
func workspaceDir(t *testing.T, allowlist string, skills map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range skills {
		dir := filepath.Join(root, ".agentcanvas", "skills", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if allowlist != "" {
		if err := os.MkdirAll(filepath.Join(root, ".agentcanvas"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, MCPAllowlistFile), []byte(allowlist), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestSkillInvalidRule(t *testing.T) {
	root := workspaceDir(t, "", map[string]string{
		"good":     "---\nname: good\ndescription: Does a good thing.\n---\nBody.\n",
		"crlf":     "---\r\nname: crlf\r\ndescription: Windows line ends.\r\n---\r\n",
		"nodesc":   "---\nname: nodesc\n---\n",
		"noname":   "---\ndescription: x\n---\n",
		"mismatch": "---\nname: other\ndescription: x\n---\n",
		"nofront":  "# Title\n",
		"unclosed": "---\nname: unclosed\ndescription: x\n",
		"badyaml":  "---\nname: [\n---\n",
	})
	skills := func(list string) string {
		return head + "agents: [{id: a, skills: " + list + "}]\ninteractions: []\n"
	}
	ws := Workspace{Root: root}
	runCases(t, ws, []ruleCase{
		{"valid skills", skills("[good, crlf]"), nil},
		{"missing", skills("[absent]"), []string{CodeSkillInvalid}},
		{"no description", skills("[nodesc]"), []string{CodeSkillInvalid}},
		{"no name", skills("[noname]"), []string{CodeSkillInvalid}},
		{"name differs from folder", skills("[mismatch]"), []string{CodeSkillInvalid}},
		{"no frontmatter", skills("[nofront]"), []string{CodeSkillInvalid}},
		{"unclosed frontmatter", skills("[unclosed]"), []string{CodeSkillInvalid}},
		{"frontmatter not YAML", skills("[badyaml]"), []string{CodeSkillInvalid}},
		{"path as a name", skills("[../good, a/b]"), []string{CodeSkillInvalid, CodeSkillInvalid}},
	})
	// Without a workspace root the rule is skipped.
	runCases(t, Workspace{}, []ruleCase{{"no root", skills("[absent]"), nil}})
}

func TestMCPPolicyRule(t *testing.T) {
	agent := func(list string) string {
		return head + "agents: [{id: a, mcp: " + list + "}]\ninteractions: []\n"
	}
	listed := workspaceDir(t, `{"servers": ["github", "jira", "browser"]}`, nil)
	runCases(t, Workspace{Root: listed}, []ruleCase{
		{"allowlisted", agent("[github, jira]"), nil},
		{"three servers", agent("[github, jira, browser]"), []string{CodeMCPPolicy}},
		{"not allowlisted", agent("[github, shell]"), []string{CodeMCPPolicy}},
	})
	none := workspaceDir(t, "", nil)
	runCases(t, Workspace{Root: none}, []ruleCase{{"no allowlist file", agent("[github]"), []string{CodeMCPPolicy}}})
	broken := workspaceDir(t, `{"servers": "github"}`, nil)
	runCases(t, Workspace{Root: broken}, []ruleCase{{"broken allowlist file", agent("[github]"), []string{CodeMCPPolicy}}})
	// The allowlist is read by mcpconfig (as the run engine reads it): its messages name the
	// file and the field, or the line and column of a syntax error.
	for allow, want := range map[string]string{
		`{"servers": "github"}`:              MCPAllowlistFile + ": servers: must be a list of server names",
		"{\n  \"servers\": [github]\n}":      MCPAllowlistFile + ": not valid JSON: line 2, column 15",
		`{"servers": [], "extra": true}`:     MCPAllowlistFile + `: unknown field "extra"`,
		`{"servers": ["jira"], "x": [1, 2]}`: MCPAllowlistFile + `: unknown field "x"`,
	} {
		_, ds := codes(t, agent("[github]"), Workspace{Root: workspaceDir(t, allow, nil)})
		if len(ds) != 1 || !strings.Contains(ds[0].Message, `MCP server "github" cannot be checked: `+want) || ds[0].Path != "/agents/0/mcp/0" {
			t.Errorf("allowlist %s: %v", allow, ds)
		}
	}
	runCases(t, Workspace{MCPAllowlist: []string{"github"}}, []ruleCase{
		{"allowlist given directly", agent("[github]"), nil},
		{"given directly, unlisted", agent("[jira]"), []string{CodeMCPPolicy}},
	})
	runCases(t, Workspace{}, []ruleCase{{"no workspace", agent("[anything]"), nil}})
	_, ds := codes(t, agent("[a, b, c]"), Workspace{})
	for _, d := range ds {
		if d.Severity != diag.Warning {
			t.Errorf("mcp-policy is a warning: %v", d)
		}
	}
}

func TestFindRoot(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, ".agentcanvas"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, ok := FindRoot(deep)
	if !ok || got != root {
		t.Errorf("FindRoot = %q %v, want %q", got, ok, root)
	}
	// A .git file (a git worktree) marks a root too.
	wt := filepath.Join(root, "a")
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := FindRoot(deep); got != wt {
		t.Errorf("FindRoot with a .git file = %q, want %q", got, wt)
	}
}

// The raw-secret fix of a runtime.env entry whose variable is listed already removes the
// entry instead of listing the name twice; a name listed twice is a warning whose fix
// removes the repeat.
func TestEnvSecretFixAndDuplicateNames(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("Ab1", 12)
	agentEnv := func(list string) string {
		return head + "agents:\n  - id: a\n    runtime:\n      env: " + list + "\n" + "interactions: []\n"
	}
	fixed := func(src string, code string) string {
		t.Helper()
		_, ds := codes(t, src, Workspace{})
		for _, d := range ds {
			if d.Code == code && d.Fix != nil {
				out, err := span.Apply([]byte(src), d.Fix.Edits)
				if err != nil {
					t.Fatal(err)
				}
				return string(out)
			}
		}
		t.Fatalf("no %s fix for:\n%s", code, src)
		return ""
	}
	for _, tc := range []struct{ env, want string }{
		{`[OPENAI_API_KEY, "` + key + `"]`, "[OPENAI_API_KEY]"},
		{`["` + key + `", OPENAI_API_KEY]`, "[OPENAI_API_KEY]"},
		{`[GITHUB_TOKEN, "` + key + `"]`, `[GITHUB_TOKEN, "OPENAI_API_KEY"]`},
		{"\n        - OPENAI_API_KEY\n        - \"" + key + "\"", "\n        - OPENAI_API_KEY"},
	} {
		got := fixed(agentEnv(tc.env), CodeRawSecret)
		if got != agentEnv(tc.want) {
			t.Errorf("raw-secret fix of env %s:\n%s\nwant:\n%s", tc.env, got, agentEnv(tc.want))
		}
		if c, _ := codes(t, got, Workspace{}); len(c) != 0 {
			t.Errorf("after the fix: %v", c)
		}
	}
	runCases(t, Workspace{}, []ruleCase{
		{"distinct names", agentEnv("[A_KEY, B_KEY]"), nil},
		{"a name twice", agentEnv("[A_KEY, B_KEY, A_KEY]"), []string{CodeSchema}},
		{"a name three times", agentEnv("[A_KEY, A_KEY, A_KEY]"), []string{CodeSchema, CodeSchema}},
	})
	_, ds := codes(t, agentEnv("[A_KEY, B_KEY, A_KEY]"), Workspace{})
	if len(ds) != 1 || ds[0].Severity != diag.Warning || ds[0].Path != "/agents/0/runtime/env/2" || !strings.Contains(ds[0].Message, "A_KEY twice") {
		t.Fatalf("duplicate env name: %v", ds)
	}
	if got := fixed(agentEnv("[A_KEY, B_KEY, A_KEY]"), CodeSchema); got != agentEnv("[A_KEY, B_KEY]") {
		t.Errorf("duplicate fix:\n%s", got)
	}
}

// A budget warns of agents whose spend no limit can count, unless the model gateway meters
// them (a CLI agent whose runtime.env names its API key variable).
func TestSpendUnknownRule(t *testing.T) {
	budget := "policy: {budget: {usd: 2}}\n"
	runCases(t, Workspace{}, []ruleCase{
		{"codex without a key variable", budget + head + "agents: [{id: a, runtime: {backendId: codex}}]\ninteractions: []\n", []string{CodeSpendUnknown}},
		{"codex through the gateway", budget + head + "agents: [{id: a, runtime: {backendId: codex, env: [OPENAI_API_KEY]}}]\ninteractions: []\n", nil},
		{"a command agent with a key variable", budget + head + "agents: [{id: a, runtime: {backendId: command, command: [x], env: [OPENAI_API_KEY]}}]\ninteractions: []\n", []string{CodeSpendUnknown}},
	})
}

func TestSharedAndSetupRule(t *testing.T) {
	agent := func(role, rt string) string {
		return head + "agents: [{id: a, role: " + role + ", runtime: {" + rt + "}}]\ninteractions: []\n"
	}
	runCases(t, Workspace{}, []ruleCase{
		{"a worker's shared folders and setup", agent("worker", "shared: [node_modules, web/node_modules, .venv], setup: [npm, ci]"), nil},
		{"climbing out", agent("worker", "shared: [../deps]"), []string{CodeUnsafePath}},
		{"absolute", agent("worker", "shared: [/usr/lib]"), []string{CodeUnsafePath}},
		{"internal folders", agent("worker", "shared: [.git, .agentcanvas/x]"), []string{CodeUnsafePath, CodeUnsafePath}},
		{"empty program", agent("worker", "setup: [\"\"]"), []string{CodeSchema}},
		{"not in a sandbox", agent("orchestrator", "setup: [npm, ci]"), []string{CodeSchema}},
		{"a worker in the workspace", agent("worker", "cwdMode: workspace, shared: [node_modules]"), []string{CodeSchema}},
	})
}

// runtime.setup's relative script is looked up as a command's is: missing, a warning.
func TestSetupCommandPath(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "scripts"), 0o755)
	os.WriteFile(filepath.Join(root, "scripts", "setup.sh"), []byte("true\n"), 0o755)
	src := func(script string) string {
		return head + "agents: [{id: a, role: worker, runtime: {setup: [bash, " + script + "]}}]\ninteractions: []\n"
	}
	if got, _ := codes(t, src("scripts/setup.sh"), Workspace{Root: root}); len(got) != 0 {
		t.Errorf("an existing setup script: %v", got)
	}
	if got, _ := codes(t, src("scripts/missing.sh"), Workspace{Root: root}); len(got) != 1 || got[0] != CodeCommandPath {
		t.Errorf("a missing setup script: %v, want %s", got, CodeCommandPath)
	}
}

// Ids outside the safe set (a newline, a NUL, a path) are errors naming the id escaped, so
// nothing raw reaches a terminal, a folder name or a log; letters of any script are fine.
func TestUnsafeIDs(t *testing.T) {
	src := head + "agents:\n  - {id: \"a\\nb\", role: worker}\n  - {id: \"c\\0d\", role: worker}\n  - {id: ../x, role: worker}\n  - {id: 코더-1, role: worker}\n  - {id: custom:coder.2, role: worker}\ninteractions: []\n"
	_, ds := codes(t, src, Workspace{})
	var msgs []string
	for _, d := range ds {
		msgs = append(msgs, d.Message)
	}
	want := []string{`agent id "a\nb" has a line break at position 2`, `agent id "c\x00d" has a NUL character at position 2`, `agent id "../x" has '.' at position 1`}
	if len(msgs) != len(want) {
		t.Fatalf("diagnostics: %q", msgs)
	}
	for i, w := range want {
		if !strings.HasPrefix(msgs[i], w) || strings.ContainsAny(msgs[i], "\n\x00") {
			t.Errorf("message %d = %q, want it to start %q", i, msgs[i], w)
		}
	}
}
