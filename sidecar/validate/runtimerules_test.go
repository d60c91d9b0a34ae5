package validate

import "testing"

// policy.dependencyTimeoutMs is a number of milliseconds of at least 1.
func TestDependencyTimeoutPolicy(t *testing.T) {
	runCases(t, Workspace{}, []ruleCase{
		{"set", "policy: {dependencyTimeoutMs: 600000}\n" + mw("{termination: {type: max_rounds, rounds: 2}}"), nil},
		{"zero", "policy: {dependencyTimeoutMs: 0}\n" + mw("{termination: {type: max_rounds, rounds: 2}}"), []string{CodeSchema}},
	})
}

// A system node param the run never reads is a warning: it would have no effect.
func TestSystemNodeParamsTheRunReads(t *testing.T) {
	router := func(params string) string {
		return head + `agents:
  - {id: p1, role: peer}
  - {id: p2, role: peer}
systemNodes:
  - {id: router, type: router, params: ` + params + `}
interactions:
  - id: i1
    patternId: router_targeted
    edges:
      - {source: p1, target: router, data: {termination: {type: max_rounds, rounds: 2}}}
      - {source: p2, target: router, data: {termination: {type: max_rounds, rounds: 2}}}
`
	}
	runCases(t, Workspace{}, []ruleCase{
		{"rate limit", router("{rate_limit_per_min: 2}"), nil},
		{"retention on a router", router("{rate_limit_per_min: 2, retention: {keep_last_n: 3}}"), []string{CodeSchema}},
	})
	_, ds := codes(t, router("{rate_limit_per_min: 2, retention: {keep_last_n: 3}}"), Workspace{})
	if len(ds) != 1 || ds[0].Message != "params.retention has no effect on a router node: the run reads only rate_limit_per_min there; set it on the interaction's edges if the pattern reads it, or remove it" {
		t.Errorf("%v", ds)
	}
}
