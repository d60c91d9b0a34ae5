package pattern

import (
	"strings"
	"testing"
)

func TestMissingRoles(t *testing.T) {
	tests := []struct {
		pattern string
		counts  map[string]int
		wants   []string // substrings, one per expected problem; none for a clean result
	}{
		{"P05", map[string]int{"debater": 2, "judge": 1}, nil},
		{"P05", map[string]int{"debater": 3}, []string{`needs at least 1 "judge" (judge system node), found 0`}},
		{"P05", map[string]int{"debater": 1, "judge": 1}, []string{`at least 2 "debater"`}},
		{"P07", map[string]int{"voter": 3, "aggregator": 1}, nil},
		{"P07", map[string]int{"voter": 2, "aggregator": 1}, []string{"2 voters needs a tie-break judge"}},
		{"P07", map[string]int{"voter": 2, "aggregator": 1, "judge": 1}, nil}, // a judge node counts as the tie-break
		{"P09", map[string]int{"manager": 1}, []string{`at least 1 "bidder"`}},
		{"P03", map[string]int{"planner": 1, "coder": 1, "tester": 1}, nil},
		{"P17", map[string]int{"producer": 1}, []string{`"verifier"`, `"judge"`, "has 1 stage(s)"}},
		{"P04", map[string]int{"pm": 1}, []string{`"architect"`, `"engineer"`, `"qa"`, "has 1 stage(s)"}},
		{"P01", map[string]int{"manager": 1, "worker": 4}, nil},
		{"P11", map[string]int{"knowledge_source": 2}, []string{`"blackboard" (blackboard system node)`}},
	}
	for _, tc := range tests {
		got := mustLookup(t, tc.pattern).MissingRoles(tc.counts)
		if len(got) != len(tc.wants) {
			t.Errorf("%s %v: got %q, want %d problems", tc.pattern, tc.counts, got, len(tc.wants))
			continue
		}
		for i, w := range tc.wants {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s %v: problem %d = %q, want it to mention %s", tc.pattern, tc.counts, i, got[i], w)
			}
		}
	}
}

// A fresh instantiation never lacks a role.
func TestInstantiatedPatternsHaveTheirRoles(t *testing.T) {
	for _, p := range All() {
		sg := Instantiate(p, InstantiateOptions{})
		counts := map[string]int{}
		for _, a := range sg.Agents {
			counts[a.Role]++
		}
		for _, n := range sg.SystemNodes {
			counts[n.Role]++
		}
		if got := p.MissingRoles(counts); len(got) > 0 {
			t.Errorf("%s: %q", p.ID, got)
		}
	}
}
