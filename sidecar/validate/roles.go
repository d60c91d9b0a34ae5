package validate

import (
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// roles checks that an interaction's participants (its edges' endpoints) cover the roles its
// pattern needs: a debate has a judge and two debaters, a vote three voters or a tie-break…
func (c *checker) roles(in *flow.Interaction, p patternInfo) {
	var parts []flow.Node
	seen := map[string]bool{}
	for _, e := range in.Edges {
		for _, id := range []string{e.Source, e.Target} {
			n, ok := c.nodes[id]
			if !ok {
				return // unknown-agent said what is wrong; roles would only repeat it
			}
			if !seen[id] {
				seen[id] = true
				parts = append(parts, n)
			}
		}
	}
	if len(parts) == 0 {
		return // nothing to judge: the edges are missing or name unknown nodes
	}
	at := c.at(in.Path + "/patternId")
	if !c.has(in.Path + "/patternId") {
		at = c.head(in.Path)
	}
	miss := func(msg string) {
		c.report(in.Path, at, diag.Error, CodeMissingRole, fmt.Sprintf("%s (%s) %s", p.PatternID, p.ID, msg), nil)
	}
	special := map[string]bool{}
	for _, r := range p.Roles {
		n := 0
		for _, node := range parts {
			if plays(node, r) {
				n++
				special[node.ID] = true
			}
		}
		if n < r.Min {
			how := fmt.Sprintf("an agent with role: %s", r.Name)
			if r.System != "" {
				how = fmt.Sprintf("a system node of type %s (or %s)", r.System, how)
			}
			miss(fmt.Sprintf("needs a %s and none of the interaction's nodes is one; add %s and connect it with an edge", r.Name, how))
		}
	}
	others := 0 // workers, debaters, bidders… are agents
	for _, node := range parts {
		if node.Agent != nil && !special[node.ID] {
			others++
		}
	}
	if p.Others > 0 && others < p.Others {
		why := ""
		if p.OthersWhy != "" {
			why = " (" + p.OthersWhy + ")"
		}
		miss(fmt.Sprintf("needs at least %d %s%s and has %d%s; add agents and connect them with edges", p.Others, p.OthersName, plural(p.Others), others, why))
	}
	if p.Stages > 0 && len(parts) < p.Stages {
		what := "needs at least %d different nodes and has %d; connect another agent with an edge"
		if p.Topology == "pipeline" {
			what = "is a pipeline with one stage; it needs at least %d stages (different nodes) and has %d: add a stage and an edge stage → stage"
		}
		miss(fmt.Sprintf(what, p.Stages, len(parts)))
	}
	if p.Parties > 0 && len(parts) > p.Parties {
		var extra []string
		for _, n := range parts[p.Parties:] {
			extra = append(extra, n.ID)
		}
		miss(fmt.Sprintf("runs between exactly %d parties and has %d nodes: %s would never take part; draw them in an interaction of their own", p.Parties, len(parts), strings.Join(extra, ", ")))
	}
	if p.PatternID == "majority_vote" {
		tie := roleReq{Name: "tie-break judge", System: "judge", Words: []string{"judge", "tiebreak", "tie_break", "tie-break"}}
		agg := aggregatorRole
		voters, hasTie := 0, false
		for _, node := range parts {
			switch {
			case plays(node, tie):
				hasTie = true
			case plays(node, agg):
			default:
				voters++
			}
		}
		if voters < 3 && !hasTie {
			miss(fmt.Sprintf("has %d voter%s and no tie-break; add voters until there are at least three, or a judge (system node type judge) to break ties", voters, plural(voters)))
		} else if voters < 2 {
			miss(fmt.Sprintf("has %d voter; a vote needs at least two", voters))
		}
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// plays reports whether a node plays a role: a system node by its type, an agent by its
// role, id or name.
func plays(n flow.Node, r roleReq) bool {
	if n.System != nil {
		if r.System != "" && n.System.Type == r.System {
			return true
		}
		return matchWords(r.Words, n.System.ID, n.System.Name) && r.System == ""
	}
	if n.Agent != nil {
		return matchWords(r.Words, n.Agent.Role, n.Agent.ID, n.Agent.Name)
	}
	return false
}

func matchWords(words []string, fields ...string) bool {
	for _, f := range fields {
		lf := strings.ToLower(f)
		for _, w := range words {
			if w != "" && strings.Contains(lf, w) {
				return true
			}
		}
	}
	return false
}
