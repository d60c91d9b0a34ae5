package validate

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// insertPattern inserts a pattern into src as the server's insertPattern does: the library
// instantiates it, and flow.Edit adds its nodes and its interaction. without drops the
// system nodes of one role and their edges (nil when no edge is left).
func insertPattern(t *testing.T, src []byte, p pattern.Pattern, without string) []byte {
	t.Helper()
	f := flow.Parse("f.yaml", src)
	taken := map[string]bool{}
	for _, a := range f.Agents {
		taken[a.ID] = true
	}
	for _, s := range f.SystemNodes {
		taken[s.ID] = true
	}
	for _, in := range f.Interactions {
		taken[in.ID] = true
		for _, e := range in.Edges {
			taken[e.ID] = true
		}
	}
	sg := pattern.Instantiate(p, pattern.InstantiateOptions{ExistingIDs: taken})
	if without != "" {
		// Drop the role's system nodes and the edges that touch them (Instantiate keeps
		// every required role, as it should).
		dropped := map[string]bool{}
		var keep []pattern.SystemNode
		for _, s := range sg.SystemNodes {
			if s.Role == without {
				dropped[s.ID] = true
			} else {
				keep = append(keep, s)
			}
		}
		sg.SystemNodes = keep
		var edges []pattern.Edge
		for _, e := range sg.Interaction.Edges {
			if !dropped[e.Source] && !dropped[e.Target] {
				edges = append(edges, e)
			}
		}
		sg.Interaction.Edges = edges
		if len(dropped) == 0 {
			t.Fatalf("%s has no %s node to drop", p.PatternID, without)
		}
		if len(edges) == 0 {
			return nil // every edge went through it (a vote's aggregator): nothing to check
		}
	}
	raw := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var ops []flow.Op
	for _, a := range sg.Agents {
		pos := flow.Point(sg.Layout[a.ID])
		ops = append(ops, flow.Op{Op: "addAgent", Agent: raw(a), Position: &pos})
	}
	for _, s := range sg.SystemNodes {
		pos := flow.Point(sg.Layout[s.ID])
		ops = append(ops, flow.Op{Op: "addSystemNode", Node: raw(s), Position: &pos})
	}
	ops = append(ops, flow.Op{Op: "addInteraction", Interaction: raw(sg.Interaction)})
	out, err := flow.EditText(src, "f.yaml", ops)
	if err != nil {
		t.Fatalf("%s: %v", p.PatternID, err)
	}
	return out
}

// TestInstantiatedPatternsValidateClean: each of the 20 patterns, inserted into an empty flow
// and then all together into one flow, validates clean; with one of its required system
// roles left out (a debate's judge, a router…) it does not.
func TestInstantiatedPatternsValidateClean(t *testing.T) {
	all := pattern.All()
	if len(all) != 20 {
		t.Fatalf("%d patterns", len(all))
	}
	empty := []byte("version: 0.2\nagents: []\ninteractions: []\n")
	together := empty
	for _, p := range all {
		if _, ok := roleRules[p.PatternID]; !ok {
			t.Errorf("no role rules for %s", p.PatternID)
		}
		src := insertPattern(t, empty, p, "")
		got, ds := codes(t, string(src), Workspace{})
		if len(got) != 0 {
			t.Errorf("%s inserted into an empty flow:\n%s%s", p.PatternID, src, formatGolden(ds))
		}
		together = insertPattern(t, together, p, "")
		for _, r := range p.Roles {
			if r.Kind != "system" || r.MinCount == 0 {
				continue
			}
			src := insertPattern(t, empty, p, r.Role)
			if src == nil {
				continue
			}
			if got, _ := codes(t, string(src), Workspace{}); !slices.Contains(got, CodeMissingRole) {
				t.Errorf("%s without its %s: codes %v, want missing-role", p.PatternID, r.Role, got)
			}
		}
	}
	if got, ds := codes(t, string(together), Workspace{}); len(got) != 0 {
		t.Errorf("all 20 patterns in one flow:\n%s", formatGolden(ds))
	}
	if len(roleRules) != 20 {
		t.Errorf("%d role rules for 20 patterns", len(roleRules))
	}
}

// TestEnumsMatchPatternLibrary: the validator's value lists and the library's agree.
func TestEnumsMatchPatternLibrary(t *testing.T) {
	for name, pair := range map[string][2][]string{
		"intent":       {Intents, pattern.Intents},
		"topology":     {Topologies, pattern.Topologies},
		"messageForm":  {MessageForms, pattern.MessageForms},
		"sync":         {SyncModes, pattern.SyncModes},
		"termination":  {TerminationTypes, pattern.TerminationTypes},
		"verification": {Verifications, pattern.Verifications},
		"systemNode":   {SystemNodeTypes, pattern.SystemTypes},
		"backendId":    {BackendIDs, pattern.BackendIDs},
	} {
		if !slices.Equal(pair[0], pair[1]) {
			t.Errorf("%s: validator %v, pattern library %v", name, pair[0], pair[1])
		}
	}
}
