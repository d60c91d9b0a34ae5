package validate

import "testing"

// policy.dependencyTimeoutMs is a number of milliseconds of at least 1.
func TestDependencyTimeoutPolicy(t *testing.T) {
	runCases(t, Workspace{}, []ruleCase{
		{"set", "policy: {dependencyTimeoutMs: 600000}\n" + mw("{termination: {type: max_rounds, rounds: 2}}"), nil},
		{"zero", "policy: {dependencyTimeoutMs: 0}\n" + mw("{termination: {type: max_rounds, rounds: 2}}"), []string{CodeSchema}},
	})
}
