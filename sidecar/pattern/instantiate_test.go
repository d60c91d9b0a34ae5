package pattern

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func mustLookup(t testing.TB, id string) Pattern {
	t.Helper()
	p, ok := Lookup(id)
	if !ok {
		t.Fatalf("no pattern %s", id)
	}
	return p
}

// boxesOverlap reports whether two NodeWidth × NodeHeight boxes at top-left a and b intersect.
func boxesOverlap(a, b Position) bool {
	return a.X < b.X+NodeWidth && b.X < a.X+NodeWidth && a.Y < b.Y+NodeHeight && b.Y < a.Y+NodeHeight
}

// checkSubgraph asserts what every instantiation must satisfy.
func checkSubgraph(t *testing.T, p Pattern, sg Subgraph, existing map[string]bool) {
	t.Helper()
	seen := map[string]bool{}
	fresh := func(kind, id string) {
		if id == "" {
			t.Errorf("%s: empty %s id", p.ID, kind)
		}
		if existing[id] {
			t.Errorf("%s: %s id %q collides with an existing id", p.ID, kind, id)
		}
		if seen[id] {
			t.Errorf("%s: %s id %q used twice", p.ID, kind, id)
		}
		seen[id] = true
	}
	nodes := map[string]bool{}
	for _, a := range sg.Agents {
		fresh("agent", a.ID)
		nodes[a.ID] = true
		if a.Runtime.Kind != "cli" || a.Runtime.BackendID == "" || a.Role == "" || a.Name == "" {
			t.Errorf("%s: agent %+v incomplete", p.ID, a)
		}
	}
	for _, n := range sg.SystemNodes {
		fresh("system node", n.ID)
		nodes[n.ID] = true
		if n.Type == "" || n.Role == "" || n.Name == "" {
			t.Errorf("%s: system node %+v incomplete", p.ID, n)
		}
	}
	fresh("interaction", sg.Interaction.ID)
	if sg.Interaction.PatternID != p.PatternID {
		t.Errorf("%s: interaction patternId %q", p.ID, sg.Interaction.PatternID)
	}
	if len(sg.Interaction.Edges) == 0 {
		t.Errorf("%s: no edges", p.ID)
	}
	onEdge := map[string]bool{}
	for _, e := range sg.Interaction.Edges {
		fresh("edge", e.ID)
		if !nodes[e.Source] || !nodes[e.Target] || e.Source == e.Target {
			t.Errorf("%s: edge %s %s → %s does not join two new nodes", p.ID, e.ID, e.Source, e.Target)
		}
		onEdge[e.Source], onEdge[e.Target] = true, true
		d := e.Data
		if d.Topology != p.Topology || d.MessageForm == "" || d.Sync == "" || !d.Observability.Logs {
			t.Errorf("%s: edge %s data %+v lacks the pattern's axes", p.ID, e.ID, d)
		}
		if !reflect.DeepEqual(d.Termination, p.DefaultTermination) {
			t.Errorf("%s: edge %s termination %s, want the default %s", p.ID, e.ID, d.Termination, p.DefaultTermination)
		}
		for k, v := range p.DefaultParams {
			if !reflect.DeepEqual(d.Params[k], v) {
				t.Errorf("%s: edge %s params.%s = %v, want %v", p.ID, e.ID, k, d.Params[k], v)
			}
		}
		if probs := PolicyProblems(p.PatternID, d.Topology, d.Termination, d.Params); len(probs) > 0 {
			t.Errorf("%s: edge %s breaks spec §8: %q", p.ID, e.ID, probs)
		}
		if len(d.Sources) == 0 {
			t.Errorf("%s: edge %s has no sources", p.ID, e.ID)
		}
	}
	for id := range nodes {
		if !onEdge[id] {
			t.Errorf("%s: node %s is on no edge", p.ID, id)
		}
		if _, ok := sg.Layout[id]; !ok {
			t.Errorf("%s: node %s has no position", p.ID, id)
		}
	}
	if len(sg.Layout) != len(nodes) {
		t.Errorf("%s: layout has %d entries for %d nodes", p.ID, len(sg.Layout), len(nodes))
	}
	ids := sg.NodeIDs()
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			if boxesOverlap(sg.Layout[ids[i]], sg.Layout[ids[j]]) {
				t.Errorf("%s: %s and %s overlap at %v and %v", p.ID, ids[i], ids[j], sg.Layout[ids[i]], sg.Layout[ids[j]])
			}
		}
	}
}

func TestInstantiateEveryPattern(t *testing.T) {
	for _, p := range All() {
		sg := Instantiate(p, InstantiateOptions{})
		checkSubgraph(t, p, sg, nil)
		want := 0
		for _, r := range p.Roles {
			want += r.Count
		}
		if got := len(sg.Agents) + len(sg.SystemNodes); got != want {
			t.Errorf("%s: %d nodes, want %d (the roles' counts)", p.ID, got, want)
		}
	}
}

// addToFlow records a subgraph's ids and positions as part of the existing flow.
func addToFlow(ids map[string]bool, layout map[string]Position, sg Subgraph) {
	for _, id := range sg.NodeIDs() {
		ids[id] = true
	}
	ids[sg.Interaction.ID] = true
	for _, e := range sg.Interaction.Edges {
		ids[e.ID] = true
	}
	maps.Copy(layout, sg.Layout)
}

func TestRepeatedInsertionGetsFreshReadableIDs(t *testing.T) {
	p := mustLookup(t, "debate_judge")
	ids, layout := map[string]bool{}, map[string]Position{}
	var names [][]string
	for range 3 {
		sg := Instantiate(p, InstantiateOptions{ExistingIDs: ids, Origin: OriginBeside(layout)})
		checkSubgraph(t, p, sg, ids)
		names = append(names, append(sg.NodeIDs(), sg.Interaction.ID))
		addToFlow(ids, layout, sg)
	}
	want := [][]string{
		{"debater_1", "debater_2", "judge", "i1"},
		{"debater_3", "debater_4", "judge_2", "i2"},
		{"debater_5", "debater_6", "judge_3", "i3"},
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("ids %v\nwant %v", names, want)
	}
}

func TestInstantiateAvoidsExistingIDs(t *testing.T) {
	p := mustLookup(t, "P01")
	existing := map[string]bool{
		"manager": true, "manager_2": true, "worker_1": true, "worker_3": true,
		"i1": true, "i2_e1": true,
	}
	sg := Instantiate(p, InstantiateOptions{ExistingIDs: existing})
	checkSubgraph(t, p, sg, existing)
	if got := strings.Join(append(sg.NodeIDs(), sg.Interaction.ID, sg.Interaction.Edges[0].ID), " "); got != "manager_3 worker_2 worker_4 i2 i2_e2" {
		t.Errorf("ids = %s", got)
	}
	if len(existing) != 6 {
		t.Error("Instantiate changed ExistingIDs")
	}
}

func TestPrefix(t *testing.T) {
	sg := Instantiate(mustLookup(t, "P02"), InstantiateOptions{Prefix: "review_"})
	if got := strings.Join(append(sg.NodeIDs(), sg.Interaction.ID), " "); got != "review_user review_assistant review_i1" {
		t.Errorf("ids = %s", got)
	}
}

func TestPlacedBesideExistingGraph(t *testing.T) {
	// An existing graph with a negative corner and scattered nodes, then every pattern inserted
	// one after another: no new box may touch an existing one or the existing bounding box.
	ids := map[string]bool{"a1": true, "a2": true, "a3": true}
	layout := map[string]Position{"a1": {-300, -120}, "a2": {450, 610}, "a3": {90, 40}}
	for _, p := range All() {
		lo, hi, _ := Bounds(layout)
		origin := OriginBeside(layout)
		sg := Instantiate(p, InstantiateOptions{ExistingIDs: ids, Origin: origin})
		checkSubgraph(t, p, sg, ids)
		for id, pos := range sg.Layout {
			if pos.X < hi.X || pos.Y < lo.Y {
				t.Errorf("%s: %s at %v is inside or left of the existing box %v–%v", p.ID, id, pos, lo, hi)
			}
			for old, q := range layout {
				if boxesOverlap(pos, q) {
					t.Errorf("%s: %s at %v overlaps existing %s at %v", p.ID, id, pos, old, q)
				}
			}
		}
		addToFlow(ids, layout, sg)
	}
	if got := OriginBeside(nil); got != (Position{}) {
		t.Errorf("OriginBeside(empty) = %v", got)
	}
}

func TestLayoutShapes(t *testing.T) {
	origin := Position{1000, 500}
	mw := Instantiate(mustLookup(t, "P01"), InstantiateOptions{Origin: origin})
	m, w1, w2 := mw.Layout["manager"], mw.Layout["worker_1"], mw.Layout["worker_2"]
	if !(m.Y < w1.Y && w1.Y == w2.Y && w1.X < m.X && m.X < w2.X) {
		t.Errorf("manager %v should sit above and between workers %v %v", m, w1, w2)
	}
	if lo, _, _ := Bounds(mw.Layout); lo != origin {
		t.Errorf("subgraph's top-left is %v, want the origin %v", lo, origin)
	}

	dj := Instantiate(mustLookup(t, "P05"), InstantiateOptions{})
	j, d1, d2 := dj.Layout["judge"], dj.Layout["debater_1"], dj.Layout["debater_2"]
	if !(j.X > d1.X && d1.X == d2.X && d1.Y < j.Y && j.Y < d2.Y) {
		t.Errorf("judge %v should sit right of and between debaters %v %v", j, d1, d2)
	}

	cc := Instantiate(mustLookup(t, "P03"), InstantiateOptions{})
	prev := Position{X: -1}
	for _, id := range []string{"planner", "designer", "coder", "tester", "doc_writer"} {
		pos := cc.Layout[id]
		if pos.X <= prev.X || (prev.X >= 0 && pos.Y != prev.Y) {
			t.Errorf("pipeline stage %s at %v should be right of the previous stage at %v, same row", id, pos, prev)
		}
		prev = pos
	}
}

func TestCounts(t *testing.T) {
	p := mustLookup(t, "majority_vote")
	sg := Instantiate(p, InstantiateOptions{Counts: map[string]int{"voter": 5, "tiebreak": 0}})
	checkSubgraph(t, p, sg, nil)
	if len(sg.Agents) != 5 || len(sg.SystemNodes) != 1 || len(sg.Interaction.Edges) != 5 {
		t.Errorf("got %s, want 5 voters, an aggregator and 5 edges", sg)
	}
	sg = Instantiate(p, InstantiateOptions{Counts: map[string]int{"voter": 1, "aggregator": 500}})
	if len(sg.Agents) != 2 || len(sg.SystemNodes) != MaxRoleCount+1 {
		t.Errorf("counts not clamped to [minCount, count cap]: %s", sg)
	}
	sg = Instantiate(p, InstantiateOptions{Counts: map[string]int{"voter": 10_000}})
	if len(sg.Agents) != MaxRoleCount {
		t.Errorf("%d voters, want the cap %d", len(sg.Agents), MaxRoleCount)
	}
}

func TestTreePartitionsWorkers(t *testing.T) {
	p := mustLookup(t, "hierarchical_tree")
	for _, c := range []struct{ subs, workers int }{{2, 4}, {3, 7}, {1, 2}, {4, 2}} {
		sg := Instantiate(p, InstantiateOptions{Counts: map[string]int{"sub_manager": c.subs, "worker": c.workers}})
		checkSubgraph(t, p, sg, nil)
		parents := map[string]int{}
		perSub := map[string]int{}
		for _, e := range sg.Interaction.Edges {
			if strings.HasPrefix(e.Target, "worker_") {
				parents[e.Target]++
				perSub[e.Source]++
			}
		}
		for i := 1; i <= max(c.workers, 2); i++ {
			if w := fmt.Sprintf("worker_%d", i); parents[w] != 1 {
				t.Errorf("%v: %s has %d sub-managers, want 1", c, w, parents[w])
			}
		}
		lo, hi := 1<<30, 0
		for _, n := range perSub {
			lo, hi = min(lo, n), max(hi, n)
		}
		if hi-lo > 1 {
			t.Errorf("%v: workers per sub-manager %v not balanced", c, perSub)
		}
	}
}

func TestSubgraphSharesNothing(t *testing.T) {
	p := mustLookup(t, "P12")
	sg := Instantiate(p, InstantiateOptions{})
	sg.Interaction.Edges[0].Data.Params["topics"].([]any)[0] = "changed"
	sg.Interaction.Edges[0].Data.Termination.Ms = 1
	if reflect.DeepEqual(sg.Interaction.Edges[0].Data.Params, sg.Interaction.Edges[1].Data.Params) {
		t.Error("two edges share one params map")
	}
	if q := mustLookup(t, "P12"); q.DefaultParams["topics"].([]any)[0] != "updates" || q.DefaultTermination.Ms != 600000 {
		t.Error("changing a subgraph changed the library")
	}
}

// The subgraph marshals to the flow YAML's field names (spec §10, DESIGN.md additions).
func TestSubgraphYAML(t *testing.T) {
	sg := Instantiate(mustLookup(t, "P05"), InstantiateOptions{})
	marshal := func(v any) []byte {
		var b strings.Builder
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2) // the flow files' indentation
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return []byte(b.String())
	}
	out := marshal(sg.Interaction)
	text := string(out)
	for _, want := range []string{
		"id: i1\npatternId: debate_judge\nedges:\n",
		"  - id: i1_e1\n    source: debater_1\n    target: debater_2\n    data:\n",
		"      termination:\n        any:\n          - type: max_rounds\n            rounds: 3\n          - type: judge_decision\n          - type: timeout_ms\n            ms: 600000\n",
		"        timeout_ms: 600000\n",
		"      observability:\n        logs: true\n        traces: false\n",
		"      sources:\n        - kind: paper\n          ref: arXiv:1805.00899\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("YAML lacks %q:\n%s", want, text)
		}
	}
	agents := marshal(sg.Agents)
	if !strings.Contains(string(agents), "- id: debater_1\n  name: Debater 1\n  role: debater\n  runtime:\n    kind: cli\n    backendId: auto\n    cwdMode: agentHome\n") {
		t.Errorf("agents YAML:\n%s", agents)
	}
	var back Interaction
	if err := yaml.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Edges[0].Data.Termination, sg.Interaction.Edges[0].Data.Termination) {
		t.Errorf("termination did not survive YAML: %s", back.Edges[0].Data.Termination)
	}
}

func TestOmittedStageIsBridged(t *testing.T) {
	p := mustLookup(t, "chat_chain_pipeline")
	sg := Instantiate(p, InstantiateOptions{Counts: map[string]int{"designer": 0, "doc_writer": 0}})
	checkSubgraph(t, p, sg, nil)
	var got []string
	for _, e := range sg.Interaction.Edges {
		got = append(got, e.Source+"→"+e.Target)
	}
	if want := []string{"planner→coder", "coder→tester"}; !reflect.DeepEqual(got, want) {
		t.Errorf("edges %v, want %v", got, want)
	}
}

func TestClearMovesAPatternOffExistingNodes(t *testing.T) {
	// Every pattern dropped on top of a crowded layout (and at a spot already free) ends with no
	// box overlapping an existing one, and its own shape unchanged (one offset for all nodes).
	layout := map[string]Position{"a": {0, 0}, "b": {0, 140}, "c": {260, 0}, "d": {260, 140}, "e": {-300, 500}}
	for _, p := range All() {
		for _, drop := range []Position{{0, 0}, {130, 70}, {-300, 500}, {5000, 5000}} {
			sg := Instantiate(p, InstantiateOptions{Origin: drop})
			before := maps.Clone(sg.Layout)
			dx, dy := Clear(sg.Layout, layout)
			for id, pos := range sg.Layout {
				if pos != (Position{before[id].X + dx, before[id].Y + dy}) {
					t.Fatalf("%s at %v: %s moved by other than (%v, %v): %v → %v", p.ID, drop, id, dx, dy, before[id], pos)
				}
				for old, q := range layout {
					if boxesOverlap(pos, q) {
						t.Errorf("%s dropped at %v: %s at %v overlaps existing %s at %v", p.ID, drop, id, pos, old, q)
					}
				}
			}
			if drop == (Position{5000, 5000}) && (dx != 0 || dy != 0) {
				t.Errorf("%s dropped on free space was moved by (%v, %v)", p.ID, dx, dy)
			}
		}
	}
	// A single node dropped just left of a node moves one half step away, not across the canvas.
	sub := map[string]Position{"n": {100, 0}}
	if dx, dy := Clear(sub, map[string]Position{"a": {0, 0}}); dx != (NodeWidth+GapX)/2 || dy != 0 {
		t.Errorf("nearest free spot: offset (%v, %v), want (%v, 0)", dx, dy, (NodeWidth+GapX)/2)
	}
}
