package pattern

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agentcanvas/agentcanvas/patterns"
)

// libraryCopy returns the embedded pattern files as a MapFS that a test may change.
func libraryCopy(t testing.TB) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(patterns.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(patterns.FS(), p)
		m[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// editJSON decodes a template, lets f change it, and writes it back.
func editJSON(t *testing.T, m fstest.MapFS, name string, f func(map[string]any)) {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(m[name].Data, &v); err != nil {
		t.Fatal(err)
	}
	f(v)
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	m[name] = &fstest.MapFile{Data: data}
}

func TestLoadEmbedded(t *testing.T) {
	ps, err := Load(libraryCopy(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 20 {
		t.Fatalf("%d patterns", len(ps))
	}
}

func TestLoadReportsBrokenTemplates(t *testing.T) {
	const debate = "P05-debate_judge.json"
	roles := func(v map[string]any) []any { return v["roles"].([]any) }
	tests := []struct {
		name  string
		edit  func(t *testing.T, m fstest.MapFS)
		wants []string // every string must appear in the error
	}{
		{"json syntax", func(t *testing.T, m fstest.MapFS) {
			m[debate] = &fstest.MapFile{Data: []byte("{\n  \"id\": \"P05\",\n  \"name\": oops\n}")}
		}, []string{debate, "3:11:"}},
		{"unknown field", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, debate, func(v map[string]any) { v["colour"] = "red" })
		}, []string{debate, `unknown field "colour"`}},
		{"edge to undeclared role", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, debate, func(v map[string]any) {
				v["edges"].([]any)[1].(map[string]any)["target"] = "referee"
			})
		}, []string{debate, `edges[1].target: "referee" is not a declared role`}},
		{"route from an undeclared role", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, debate, func(v map[string]any) {
				v["routes"].([]any)[0].(map[string]any)["from"] = "referee"
			})
		}, []string{debate, `routes[0].from: "referee" is not a declared role`}},
		{"no routes", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, debate, func(v map[string]any) { v["routes"] = []any{} })
		}, []string{debate, "routes: list the messages"}},
		{"route without messages", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, debate, func(v map[string]any) {
				v["routes"].([]any)[1].(map[string]any)["messages"] = []any{}
			})
		}, []string{debate, "routes[1].messages: name what travels"}},
		{"document without a route", func(t *testing.T, m fstest.MapFS) {
			doc := strings.Replace(string(m["P05-debate_judge.md"].Data), "  - `debater → debater`: `answer`\n", "", 1)
			m["P05-debate_judge.md"] = &fstest.MapFile{Data: []byte(doc)}
		}, []string{"P05-debate_judge.md", "must list the route `debater → debater`: `answer`"}},
		{"duplicate role", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, debate, func(v map[string]any) { v["roles"] = append(roles(v), roles(v)[0]) })
		}, []string{debate, `roles[2].role: "debater" is declared twice`}},
		{"debate without timeout", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, debate, func(v map[string]any) {
				v["defaultTermination"] = map[string]any{"type": "max_rounds", "rounds": 3}
				delete(v["params"].(map[string]any), "timeout_ms")
			})
		}, []string{debate, "timeout required"}},
		{"timeout from params alone is enough, so only the doc drifts", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, debate, func(v map[string]any) {
				v["defaultTermination"] = map[string]any{"type": "max_rounds", "rounds": 3}
			})
		}, []string{"P05-debate_judge.md", "`max_rounds=3`"}},
		{"blackboard without retention", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, "P11-blackboard.json", func(v map[string]any) {
				v["params"].(map[string]any)["retention"] = map[string]any{"keep_last_n": 0}
			})
		}, []string{"P11-blackboard.json", "retention required"}},
		{"broker without rate limit", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, "P13-broker_facilitator.json", func(v map[string]any) {
				delete(v["params"].(map[string]any), "rate_limit_per_min")
			})
		}, []string{"P13-broker_facilitator.json", "rate limit required"}},
		{"router without rate limit", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, "P14-router_targeted.json", func(v map[string]any) {
				v["params"].(map[string]any)["rate_limit_per_min"] = 0
			})
		}, []string{"P14-router_targeted.json", "rate limit required"}},
		{"zero rounds", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, "P08-self_consistency.json", func(v map[string]any) {
				v["defaultTermination"] = map[string]any{"type": "max_rounds", "rounds": 0}
			})
		}, []string{"P08-self_consistency.json", "defaultTermination.rounds: must be at least 1"}},
		{"threshold above one", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, "P07-majority_vote.json", func(v map[string]any) {
				v["defaultTermination"].(map[string]any)["any"].([]any)[0].(map[string]any)["threshold"] = 1.5
			})
		}, []string{"P07-majority_vote.json", "defaultTermination.any[0].threshold: must be in (0, 1]"}},
		{"unknown topology", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, debate, func(v map[string]any) { v["topology"] = "mesh" })
		}, []string{debate, `topology: "mesh" is not one of`}},
		{"system role without type", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, debate, func(v map[string]any) { delete(roles(v)[1].(map[string]any), "systemType") })
		}, []string{debate, "roles[1].systemType"}},
		{"huge count", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, debate, func(v map[string]any) { roles(v)[0].(map[string]any)["count"] = 1e9 })
		}, []string{debate, "roles[0]: count must be 1…50"}},
		{"file name disagrees with id", func(t *testing.T, m fstest.MapFS) {
			m["P05-debate.json"] = m[debate]
			delete(m, debate)
		}, []string{"P05-debate.json: file name says P05-debate", "P05-debate_judge.json: missing from the pattern library"}},
		{"missing document", func(t *testing.T, m fstest.MapFS) {
			delete(m, "P09-contract_net.md")
		}, []string{"P09-contract_net.md: the document beside the template"}},
		{"document missing a section", func(t *testing.T, m fstest.MapFS) {
			doc := strings.Replace(string(m["P02-role_play_pair.md"].Data), "\n## When not to use\n", "\n## Caveats\n", 1)
			m["P02-role_play_pair.md"] = &fstest.MapFile{Data: []byte(doc)}
		}, []string{"P02-role_play_pair.md", `missing section "## When not to use"`}},
		{"document with the wrong title", func(t *testing.T, m fstest.MapFS) {
			m["P03-chat_chain_pipeline.md"] = &fstest.MapFile{Data: []byte("# Chat chain\n")}
		}, []string{"P03-chat_chain_pipeline.md: line 1"}},
		{"a pattern missing", func(t *testing.T, m fstest.MapFS) {
			delete(m, "P20-protocol_bridge.json")
		}, []string{"P20-protocol_bridge.json: missing from the pattern library"}},
		{"patternId of another pattern", func(t *testing.T, m fstest.MapFS) {
			editJSON(t, m, debate, func(v map[string]any) { v["patternId"] = "majority_vote" })
		}, []string{debate, `patternId: P05 is "debate_judge"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := libraryCopy(t)
			tc.edit(t, m)
			ps, err := Load(m)
			if err == nil {
				t.Fatal("Load accepted a broken library")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
			// Every other pattern still loads: one broken file does not hide the rest.
			if len(ps) < 19 {
				t.Errorf("only %d patterns loaded beside the broken one", len(ps))
			}
		})
	}
}

func TestParseTemplateRejectsTrailingData(t *testing.T) {
	m := libraryCopy(t)
	data := append(m["P01-manager_worker.json"].Data, []byte(`{"id":"P02"}`)...)
	if _, err := ParseTemplate(data); err == nil || !strings.Contains(err.Error(), "trailing data") {
		t.Fatalf("err = %v", err)
	}
}

func TestTerminationCheck(t *testing.T) {
	one := 1.0
	ok := []Termination{
		{Type: "max_rounds", Rounds: 1},
		{Type: "timeout_ms", Ms: 1},
		{Type: "judge_decision"},
		{Type: "consensus_threshold", Threshold: 1},
		{Type: "quality_gate", Metric: "score", Op: "<=", Value: new(float64)},
		{All: []Termination{{Type: "judge_decision"}, {Any: []Termination{{Type: "timeout_ms", Ms: 5}}}}},
		{Type: "max_cost_usd", USD: 0.5},
		{Type: "max_tokens", Tokens: 1},
	}
	for _, c := range ok {
		if err := c.Check(); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
	bad := map[string]Termination{
		"exactly one of type, any or all":      {},
		"exactly one of type, any or all ":     {Type: "judge_decision", Any: []Termination{{Type: "judge_decision"}}},
		"termination.any: is empty":            {Any: []Termination{}},
		"termination.rounds":                   {Type: "max_rounds"},
		"termination.ms":                       {Type: "timeout_ms", Ms: -5},
		"termination.threshold":                {Type: "consensus_threshold", Threshold: 0},
		"termination.op":                       {Type: "quality_gate", Metric: "m", Op: "==", Value: &one},
		"termination.metric":                   {Type: "quality_gate", Op: ">=", Value: &one},
		"termination.value":                    {Type: "quality_gate", Metric: "m", Op: ">="},
		"unknown termination type \"forever\"": {Type: "forever"},
		"termination.all[1].rounds":            {All: []Termination{{Type: "judge_decision"}, {Type: "max_rounds", Rounds: 0}}},
		"termination.usd":                      {Type: "max_cost_usd"},
		"termination.tokens":                   {Type: "max_tokens", Tokens: -1},
	}
	for want, c := range bad {
		err := c.Check()
		if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(want)) {
			t.Errorf("%+v: err = %v, want it to mention %q", c, err, want)
		}
	}
}

func TestPolicyHelpersAcceptDecodedNumbers(t *testing.T) {
	// YAML decodes to int, JSON to float64 or json.Number: all must count.
	for _, n := range []any{10, int64(10), 10.0, json.Number("10"), uint64(10)} {
		if !HasRateLimit(map[string]any{"rate_limit_per_min": n}) {
			t.Errorf("rate limit %T not accepted", n)
		}
		if !HasTimeout(Termination{Type: "max_rounds", Rounds: 1}, map[string]any{"timeout_ms": n}) {
			t.Errorf("timeout %T not accepted", n)
		}
		if !HasRetention(map[string]any{"retention": map[string]any{"keep_last_days": n}}) {
			t.Errorf("retention %T not accepted", n)
		}
	}
	for _, params := range []map[string]any{
		nil,
		{"rate_limit_per_min": "10"},
		{"rate_limit_per_min": -1},
		{"retention": map[string]any{"keep_last_n": 2.5}},
		{"retention": map[string]any{"keep": 5}},
		{"retention": 5},
	} {
		if HasRateLimit(params) || HasRetention(params) {
			t.Errorf("%v accepted", params)
		}
	}
	if !HasTimeout(Termination{Any: []Termination{{Type: "judge_decision"}, {All: []Termination{{Type: "timeout_ms", Ms: 9}}}}}, nil) {
		t.Error("a nested timeout_ms condition was not found")
	}
	if got := PolicyProblems("debate_judge", "debate_judge", Termination{Type: "max_rounds", Rounds: 3}, nil); len(got) != 1 {
		t.Errorf("PolicyProblems = %q, want one timeout problem", got)
	}
	if got := PolicyProblems("blackboard", "blackboard", Termination{Type: "max_rounds", Rounds: 1}, map[string]any{"retention": map[string]any{"keep_last_n": 1}}); len(got) != 0 {
		t.Errorf("PolicyProblems = %q, want none", got)
	}
}

func TestTerminationString(t *testing.T) {
	v := 7.0
	got := Termination{Any: []Termination{
		{Type: "max_rounds", Rounds: 2},
		{Type: "quality_gate", Metric: "score", Op: ">=", Value: &v},
		{All: []Termination{{Type: "judge_decision"}, {Type: "consensus_threshold", Threshold: 0.6}}},
		{Type: "timeout_ms", Ms: 600000},
		{Type: "max_cost_usd", USD: 2.5},
		{Type: "max_tokens", Tokens: 100000},
	}}.String()
	want := "any(max_rounds=2, quality_gate(score>=7), all(judge_decision, consensus_threshold=0.6), timeout_ms=600000, max_cost_usd=2.5, max_tokens=100000)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
