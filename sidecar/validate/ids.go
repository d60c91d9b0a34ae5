package validate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// duplicateIDs: ids are unique across agents, system nodes, interactions and edges, because
// logs, layout and edit operations name things by id alone.
func (c *checker) duplicateIDs() {
	type owner struct{ what, path string }
	seen := map[string]owner{}
	all := map[string]bool{}
	for _, a := range c.f.Agents {
		all[a.ID] = true
	}
	for _, s := range c.f.SystemNodes {
		all[s.ID] = true
	}
	for _, in := range c.f.Interactions {
		all[in.ID] = true
		for _, e := range in.Edges {
			all[e.ID] = true
		}
	}
	fresh := func(id string) string {
		for n := 2; ; n++ {
			if cand := id + "_" + strconv.Itoa(n); !all[cand] {
				all[cand] = true
				return cand
			}
		}
	}
	check := func(id, what, path string, written bool) {
		if id == "" {
			return
		}
		first, dup := seen[id]
		if !dup {
			seen[id] = owner{what, path}
			return
		}
		idPath := path + "/id"
		where := fmt.Sprintf("%s at %s", first.what, c.line(first.path))
		if written {
			newID := fresh(id)
			c.report(idPath, c.at(idPath), diag.Error, CodeDuplicateID,
				fmt.Sprintf("id %q is already used by the %s; ids must be unique across agents, system nodes, interactions and edges: rename this one, e.g. to %q", id, where, newID),
				c.replaceFix(fmt.Sprintf("Rename to %q", newID), idPath, newID))
			return
		}
		newID := fresh(id)
		c.report(path, c.head(path), diag.Error, CodeDuplicateID,
			fmt.Sprintf("this edge's derived id %q is already used by the %s; give the edge an explicit unique id, e.g. id: %s", id, where, newID),
			c.setFix(fmt.Sprintf("Add id: %s", newID), idPath, newID))
	}
	for _, a := range c.f.Agents {
		check(a.ID, "agent", a.Path, true)
	}
	for _, s := range c.f.SystemNodes {
		check(s.ID, "system node", s.Path, true)
	}
	for _, in := range c.f.Interactions {
		check(in.ID, "interaction", in.Path, true)
		for _, e := range in.Edges {
			check(e.ID, "edge", e.Path, c.has(e.Path+"/id"))
		}
	}
	c.edgeIDs = map[string]bool{}
	for _, in := range c.f.Interactions {
		for _, e := range in.Edges {
			c.edgeIDs[e.ID] = true
		}
	}
}

// references: edge endpoints name nodes, dependsOn names interactions, layout names nodes
// and edges.
func (c *checker) references() {
	nodeIDs := make([]string, 0, len(c.nodes))
	for id := range c.nodes {
		nodeIDs = append(nodeIDs, id)
	}
	slices.Sort(nodeIDs)
	interactionIDs := make([]string, 0, len(c.f.Interactions))
	for _, in := range c.f.Interactions {
		interactionIDs = append(interactionIDs, in.ID)
	}
	endpoint := func(path, which, id string) {
		if id == "" {
			return
		}
		if _, ok := c.nodes[id]; ok {
			return
		}
		msg := fmt.Sprintf("the edge's %s %q names no agent or system node", which, id)
		var fix *diag.Fix
		if s := suggest(id, nodeIDs); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
			fix = c.replaceFix(fmt.Sprintf("Change to %q", s), path, s)
		} else {
			msg += "; add an agent with this id under agents: (or a system node under systemNodes:), or point the edge at an existing node"
		}
		c.report(path, c.at(path), diag.Error, CodeUnknownAgent, msg, fix)
	}
	for _, in := range c.f.Interactions {
		for _, e := range in.Edges {
			endpoint(e.Path+"/source", "source", e.Source)
			endpoint(e.Path+"/target", "target", e.Target)
			if e.Source != "" && e.Source == e.Target {
				// No pattern has a node talk to itself: the executors would wait on their own reply.
				p := e.Path + "/target"
				var fix *diag.Fix
				if len(in.Edges) > 1 { // removing an interaction's only edge leaves it invalid
					fix = c.deleteFix("Remove the edge", e.Path)
				}
				c.report(p, c.at(p), diag.Error, CodeUnknownAgent, fmt.Sprintf("the edge goes from %q to itself; point its target at another node or remove the edge", e.Source), fix)
			}
		}
		for i, dep := range in.DependsOn {
			p := fmt.Sprintf("%s/dependsOn/%d", in.Path, i)
			switch {
			case dep == in.ID:
				c.report(p, c.at(p), diag.Error, CodeUnknownAgent, fmt.Sprintf("interaction %q depends on itself and would never start; remove this entry", dep), c.deleteFix("Remove the self-dependency", p))
			case !slices.Contains(interactionIDs, dep):
				msg := fmt.Sprintf("dependsOn names %q, which is not an interaction in this flow", dep)
				var fix *diag.Fix
				if s := suggest(dep, interactionIDs); s != "" && s != in.ID {
					msg += fmt.Sprintf("; did you mean %q?", s)
					fix = c.replaceFix(fmt.Sprintf("Change to %q", s), p, s)
				} else {
					msg += "; list the ids of interactions that must finish first"
				}
				c.report(p, c.at(p), diag.Error, CodeUnknownAgent, msg, fix)
			}
		}
	}
	c.dependencyCycles()
	for _, id := range sortedKeys(c.f.Layout.Nodes) {
		if _, ok := c.nodes[id]; ok {
			continue
		}
		p := "/layout/nodes/" + escapeKey(id)
		c.report(p, c.f.KeySpan(p), diag.Warning, CodeUnknownAgent,
			fmt.Sprintf("layout.nodes has a position for %q, which is not an agent or system node; remove the entry", id),
			c.deleteFix("Remove the stale layout entry", p))
	}
	for _, id := range sortedKeys(c.f.Layout.Edges) {
		if c.edgeIDs[id] {
			continue
		}
		p := "/layout/edges/" + escapeKey(id)
		c.report(p, c.f.KeySpan(p), diag.Warning, CodeUnknownAgent,
			fmt.Sprintf("layout.edges has an entry for %q, which is not an edge id; remove the entry", id),
			c.deleteFix("Remove the stale layout entry", p))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// dependencyCycles reports dependsOn entries that close a cycle of two or more interactions
// (self-dependencies are reported above): such interactions would wait for each other forever.
func (c *checker) dependencyCycles() {
	byID := map[string]*flow.Interaction{}
	for _, in := range c.f.Interactions {
		if _, dup := byID[in.ID]; !dup {
			byID[in.ID] = in
		}
	}
	state := map[string]int{} // 1 on the current path, 2 done
	var path []string
	var visit func(in *flow.Interaction)
	visit = func(in *flow.Interaction) {
		state[in.ID] = 1
		path = append(path, in.ID)
		for i, dep := range in.DependsOn {
			next, ok := byID[dep]
			if !ok || dep == in.ID {
				continue
			}
			switch state[dep] {
			case 1:
				start := slices.Index(path, dep)
				cycle := append(append([]string(nil), path[start:]...), dep)
				p := fmt.Sprintf("%s/dependsOn/%d", in.Path, i)
				c.report(p, c.at(p), diag.Error, CodeUnknownAgent,
					fmt.Sprintf("interactions depend on each other in a cycle (%s) and none of them would ever start; remove one of these dependsOn entries", strings.Join(cycle, " → ")),
					c.deleteFix("Remove this dependency", p))
			case 0:
				visit(next)
			}
		}
		path = path[:len(path)-1]
		state[in.ID] = 2
	}
	for _, in := range c.f.Interactions {
		if state[in.ID] == 0 {
			visit(in)
		}
	}
}

// maxIDLen bounds an id: ids name folders, log fields and environment values.
const maxIDLen = 128

// idProblem says what is wrong with an id, or "": ids are letters and digits (any script),
// '_', '-', '.' and ':', starting with a letter, digit or '_', at most maxIDLen characters —
// an id becomes a sandbox folder, a log field and an agent's environment, where a newline, a
// NUL, a slash or a quote would break or forge them.
func idProblem(id string) string {
	if len([]rune(id)) > maxIDLen {
		return fmt.Sprintf("is %d characters long; keep ids to %d", len([]rune(id)), maxIDLen)
	}
	for i, r := range id {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || (i > 0 && strings.ContainsRune("-.:", r))
		if !ok {
			return fmt.Sprintf("has %s at position %d; use letters, digits, '_', '-', '.' and ':' (starting with a letter, digit or '_')", describeRune(r), len([]rune(id[:i]))+1)
		}
	}
	return ""
}

func describeRune(r rune) string {
	switch {
	case r == 0:
		return "a NUL character"
	case r == '\n':
		return "a line break"
	case unicode.IsSpace(r):
		return "a space"
	case unicode.IsControl(r) || !unicode.IsPrint(r):
		return fmt.Sprintf("the control character U+%04X", r)
	}
	return fmt.Sprintf("%q", r)
}

// unsafeIDs reports every written id outside the safe character set, naming it (quoted, so a
// control character shows as an escape, never raw on a terminal).
func (c *checker) unsafeIDs() {
	check := func(id, what, path string) {
		if p := idProblem(id); id != "" && p != "" {
			idPath := path + "/id"
			c.report(idPath, c.at(idPath), diag.Error, flow.CodeSchema, fmt.Sprintf("%s id %+q %s", what, id, p), nil)
		}
	}
	for _, a := range c.f.Agents {
		check(a.ID, "agent", a.Path)
	}
	for _, s := range c.f.SystemNodes {
		check(s.ID, "system node", s.Path)
	}
	for _, in := range c.f.Interactions {
		check(in.ID, "interaction", in.Path)
		for _, e := range in.Edges {
			if c.has(e.Path + "/id") {
				check(e.ID, "edge", e.Path)
			}
		}
	}
}
