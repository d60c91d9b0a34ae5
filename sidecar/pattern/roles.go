package pattern

import "fmt"

// MissingRoles reports, for the validator's missing-role rule, which of p's required roles an
// interaction lacks. counts holds how many of the interaction's nodes play each role, keyed by
// role id (an agent's `role`); a system role also counts nodes keyed by its system type (a judge
// node drawn without a role). Besides each role's minCount it applies the pattern rules the
// minimums cannot express: a vote with fewer than three voters needs a tie-break judge, and a
// pipeline needs at least two stages. Each message says what to add.
func (p Pattern) MissingRoles(counts map[string]int) []string {
	have := func(r Role) int {
		n := counts[r.Role]
		if n == 0 && r.Kind == "system" {
			n = counts[r.SystemType]
		}
		return n
	}
	var out []string
	for _, r := range p.Roles {
		if n := have(r); n < r.MinCount {
			what := "agent"
			if r.Kind == "system" {
				what = r.SystemType + " system node"
			}
			out = append(out, fmt.Sprintf("%s needs at least %d %q (%s), found %d: add %d", p.PatternID, r.MinCount, r.Role, what, n, r.MinCount-n))
		}
	}
	switch p.PatternID {
	case "majority_vote":
		voters, tiebreak := 0, 0
		for _, r := range p.Roles {
			switch r.Role {
			case "voter":
				voters = have(r)
			case "tiebreak":
				tiebreak = have(r)
			}
		}
		if voters > 0 && voters < 3 && tiebreak == 0 {
			out = append(out, fmt.Sprintf("majority_vote with %d voters needs a tie-break judge: add a third voter or a \"tiebreak\" judge", voters))
		}
	}
	if p.Topology == "pipeline" {
		stages := 0
		for _, r := range p.Roles {
			if have(r) > 0 {
				stages++
			}
		}
		if stages < 2 {
			out = append(out, fmt.Sprintf("%s is a pipeline and has %d stage(s): add at least two stages", p.PatternID, stages))
		}
	}
	return out
}
