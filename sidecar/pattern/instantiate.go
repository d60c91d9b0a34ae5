package pattern

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Agent is an agent node as the flow YAML writes it (`agents:` entries).
type Agent struct {
	ID      string  `json:"id" yaml:"id"`
	Name    string  `json:"name" yaml:"name"`
	Role    string  `json:"role" yaml:"role"`
	Runtime Runtime `json:"runtime" yaml:"runtime"`
}

// SystemNode is a system node (judge, blackboard, router, broker, manager, aggregator,
// curator, bridge). Role is the pattern role it plays (a vote's "tiebreak" is a judge);
// Runtime is set for system nodes that need a model to decide (judges, curators).
type SystemNode struct {
	ID      string   `json:"id" yaml:"id"`
	Name    string   `json:"name" yaml:"name"`
	Type    string   `json:"type" yaml:"type"`
	Role    string   `json:"role" yaml:"role"`
	Runtime *Runtime `json:"runtime,omitempty" yaml:"runtime,omitempty"`
}

// EdgeData is an interaction edge's `data` (spec §4.2 InteractionEdgeData plus intent and
// verification, the other two taxonomy axes).
type EdgeData struct {
	Intent        string         `json:"intent,omitempty" yaml:"intent,omitempty"`
	Topology      string         `json:"topology" yaml:"topology"`
	MessageForm   string         `json:"messageForm" yaml:"messageForm"`
	Sync          string         `json:"sync" yaml:"sync"`
	Termination   Termination    `json:"termination" yaml:"termination"`
	Verification  string         `json:"verification,omitempty" yaml:"verification,omitempty"`
	Params        map[string]any `json:"params" yaml:"params"`
	Observability Observability  `json:"observability" yaml:"observability"`
	Sources       []Source       `json:"sources,omitempty" yaml:"sources,omitempty"`
}

// Edge is one interaction edge. ID is unique among all ids in the flow (the log's edgeId).
type Edge struct {
	ID     string   `json:"id,omitempty" yaml:"id,omitempty"`
	Source string   `json:"source" yaml:"source"`
	Target string   `json:"target" yaml:"target"`
	Data   EdgeData `json:"data" yaml:"data"`
}

// Interaction is an `interactions:` entry.
type Interaction struct {
	ID        string `json:"id" yaml:"id"`
	PatternID string `json:"patternId" yaml:"patternId"`
	Edges     []Edge `json:"edges" yaml:"edges"`
}

// Position is a node's top-left corner on the canvas (the flow's layout.nodes values).
type Position struct {
	X float64 `json:"x" yaml:"x"`
	Y float64 `json:"y" yaml:"y"`
}

// Subgraph is what inserting a pattern adds to a flow. Layout has a position for every new
// agent and system node, keyed by id.
type Subgraph struct {
	Agents      []Agent             `json:"agents" yaml:"agents"`
	SystemNodes []SystemNode        `json:"systemNodes,omitempty" yaml:"systemNodes,omitempty"`
	Interaction Interaction         `json:"interaction" yaml:"interaction"`
	Layout      map[string]Position `json:"layout" yaml:"layout"`
}

// NodeIDs lists the ids of the new agents then the new system nodes.
func (s Subgraph) NodeIDs() []string {
	ids := make([]string, 0, len(s.Agents)+len(s.SystemNodes))
	for _, a := range s.Agents {
		ids = append(ids, a.ID)
	}
	for _, n := range s.SystemNodes {
		ids = append(ids, n.ID)
	}
	return ids
}

// The canvas grid the layout assumes: a node's box and the gaps between boxes.
const (
	NodeWidth  = 180.0
	NodeHeight = 60.0
	GapX       = 80.0
	GapY       = 80.0
	// MaxRoleCount caps InstantiateOptions.Counts.
	MaxRoleCount = 50
)

// InstantiateOptions says where the subgraph goes and which ids are taken.
type InstantiateOptions struct {
	// ExistingIDs are every id already in the flow (agents, system nodes, interactions,
	// edges); no new id equals one of them.
	ExistingIDs map[string]bool
	// Origin is the top-left corner of the new subgraph; OriginBeside computes one to the
	// right of an existing layout.
	Origin Position
	// Prefix is put before every new id (e.g. "review_"); it must itself be a valid id start.
	Prefix string
	// Counts overrides how many instances of a role are created (role id → count), clamped
	// to [the role's minCount, MaxRoleCount]. Roles with minCount 0 may be left out with 0.
	Counts map[string]int
}

// Instantiate builds the subgraph for p: one agent or system node per role instance, with
// fresh ids; one interaction whose edges join the instances as the template's role edges
// say, each edge carrying the pattern's axes, default termination, params (plus the edge's
// `messages`), observability and sources; and a layered layout from opts.Origin, a band per
// role layer (rows for layout TB, e.g. manager above workers; columns for LR, e.g. judge to
// the right of the debaters), instances spread across the band, bands centred on each other.
func Instantiate(p Pattern, opts InstantiateOptions) Subgraph {
	b := &builder{
		t: p.Template, opts: opts,
		ids:       idPool{existing: opts.ExistingIDs, claimed: map[string]bool{}, next: map[string]int{}},
		sg:        Subgraph{Agents: []Agent{}, Layout: map[string]Position{}},
		instances: map[string][]string{},
	}
	// Ids are claimed in this order (nodes, the interaction, its edges), so the same flow
	// always gets the same ids.
	for _, r := range b.t.Roles {
		b.addRole(r)
	}
	b.sg.Interaction = Interaction{ID: b.ids.interaction(opts.Prefix), PatternID: b.t.PatternID, Edges: []Edge{}}
	b.connect()
	b.layOut()
	return b.sg
}

// idPool hands out ids that are in neither the flow nor the subgraph so far.
// existing (the flow's) is read, never copied or changed: a flow may hold thousands of ids.
type idPool struct {
	existing map[string]bool
	claimed  map[string]bool
	next     map[string]int // numbered role base → the next number to try
}

func (ids *idPool) taken(id string) bool { return ids.existing[id] || ids.claimed[id] }

func (ids *idPool) claim(id string) string { ids.claimed[id] = true; return id }

// fresh is base itself if free, else base_2, base_3, … .
func (ids *idPool) fresh(base string) string {
	if !ids.taken(base) {
		return ids.claim(base)
	}
	for n := 2; ; n++ {
		if id := base + "_" + strconv.Itoa(n); !ids.taken(id) {
			return ids.claim(id)
		}
	}
}

// numbered is the next free base<k>, so a second insertion continues debater_3, debater_4
// instead of debater_1_2.
func (ids *idPool) numbered(base string) (id string, k int) {
	k = max(ids.next[base], 1)
	for ids.taken(base + strconv.Itoa(k)) {
		k++
	}
	ids.next[base] = k + 1
	return ids.claim(base + strconv.Itoa(k)), k
}

// interaction is the first free i1, i2, … as in the spec's examples (a pattern id would clash
// with role names: P11's blackboard node is "blackboard").
func (ids *idPool) interaction(prefix string) string {
	for n := 1; ; n++ {
		if id := prefix + "i" + strconv.Itoa(n); !ids.taken(id) {
			return ids.claim(id)
		}
	}
}

// builder is one Instantiate under way.
type builder struct {
	t         Template
	opts      InstantiateOptions
	ids       idPool
	sg        Subgraph
	instances map[string][]string // role → node ids, in creation order
	order     []placed            // every node in creation order, for the layout
	edgeNo    int                 // the last edge number tried
}

type placed struct {
	id    string
	layer int
}

// addRole adds a role's instances: its count, or the count opts asks for clamped to
// [minCount, MaxRoleCount]; one instance keeps the role's name, several are numbered.
func (b *builder) addRole(r Role) {
	count := r.Count
	if c, ok := b.opts.Counts[r.Role]; ok {
		count = max(r.MinCount, min(c, MaxRoleCount))
	}
	for i := 0; i < count; i++ {
		var id, name string
		if count == 1 {
			id, name = b.ids.fresh(b.opts.Prefix+r.Role), r.Name
		} else {
			var k int
			id, k = b.ids.numbered(b.opts.Prefix + r.Role + "_")
			name = r.Name + " " + strconv.Itoa(k)
		}
		b.instances[r.Role] = append(b.instances[r.Role], id)
		b.order = append(b.order, placed{id, r.Layer})
		b.addNode(r, id, name)
	}
}

// addNode adds one instance: a system node, or an agent with the role's runtime or the
// spec §6.2 default.
func (b *builder) addNode(r Role, id, name string) {
	if r.Kind == "system" {
		n := SystemNode{ID: id, Name: name, Type: r.SystemType, Role: r.Role}
		if r.Runtime != nil {
			rt := *r.Runtime
			n.Runtime = &rt
		}
		b.sg.SystemNodes = append(b.sg.SystemNodes, n)
		return
	}
	rt := Runtime{Kind: "cli", BackendID: "auto", CwdMode: "agentHome"} // the spec §6.2 default
	if r.Runtime != nil {
		rt = *r.Runtime
	}
	b.sg.Agents = append(b.sg.Agents, Agent{ID: id, Name: name, Role: r.Role, Runtime: rt})
}

// connect turns each role edge into edges between instances: every pair within a role for
// an edge to itself, each target to one source for a partition, all to all otherwise.
func (b *builder) connect() {
	for _, te := range bridgeOmitted(b.t.Edges, b.instances) {
		srcs, dsts := b.instances[te.Source], b.instances[te.Target]
		switch {
		case te.Source == te.Target:
			for i := range srcs {
				for j := i + 1; j < len(srcs); j++ {
					b.addEdge(te, srcs[i], srcs[j])
				}
			}
		case te.Mode == "partition":
			if len(srcs) == 0 {
				continue
			}
			for j, d := range dsts {
				b.addEdge(te, srcs[j*len(srcs)/len(dsts)], d)
			}
		default:
			for _, s := range srcs {
				for _, d := range dsts {
					b.addEdge(te, s, d)
				}
			}
		}
	}
}

// addEdge adds edge <interaction>_e<n>, the next free n, carrying the pattern's axes and
// defaults; its params are its own copy, plus the role edge's messages.
func (b *builder) addEdge(te TemplateEdge, src, dst string) {
	t := b.t
	var id string
	for {
		b.edgeNo++
		if id = b.sg.Interaction.ID + "_e" + strconv.Itoa(b.edgeNo); !b.ids.taken(id) {
			break
		}
	}
	b.ids.claim(id)
	params := cloneParams(t.Params)
	if params == nil {
		params = map[string]any{}
	}
	msgs := make([]any, len(te.Messages))
	for i, m := range te.Messages {
		msgs[i] = m
	}
	params["messages"] = msgs
	b.sg.Interaction.Edges = append(b.sg.Interaction.Edges, Edge{
		ID: id, Source: src, Target: dst,
		Data: EdgeData{
			Intent: t.Intent, Topology: t.Topology, MessageForm: t.MessageForm, Sync: t.Sync,
			Termination: t.DefaultTermination.Clone(), Verification: t.Verification,
			Params: params, Observability: t.Observability, Sources: slices.Clone(t.Sources),
		},
	})
}

// layOut places the nodes in layered bands, in layer order, each band centred on the widest.
func (b *builder) layOut() {
	bands := map[int][]string{}
	for _, pl := range b.order {
		bands[pl.layer] = append(bands[pl.layer], pl.id)
	}
	layers := slices.Sorted(maps.Keys(bands))
	widest := 0
	for _, ids := range bands {
		widest = max(widest, len(ids))
	}
	stepX, stepY := NodeWidth+GapX, NodeHeight+GapY
	origin := b.opts.Origin
	for band, l := range layers {
		ids := bands[l]
		shift := float64(widest-len(ids)) / 2
		for k, id := range ids {
			across, along := float64(band), shift+float64(k)
			if b.t.Layout == "LR" {
				b.sg.Layout[id] = Position{X: origin.X + across*stepX, Y: origin.Y + along*stepY}
			} else {
				b.sg.Layout[id] = Position{X: origin.X + along*stepX, Y: origin.Y + across*stepY}
			}
		}
	}
}

// bridgeOmitted rewrites the role edges for roles given no instances (optional roles set to
// 0 by InstantiateOptions.Counts): each edge into such a role is joined to each edge out of it,
// so a pipeline without its designer runs planner → coder. The outgoing edge's messages and
// mode are kept; an edge that already exists is not added twice.
func bridgeOmitted(edges []TemplateEdge, instances map[string][]string) []TemplateEdge {
	out := slices.Clone(edges)
	for {
		omitted := ""
		for _, e := range out {
			for _, r := range []string{e.Source, e.Target} {
				if len(instances[r]) == 0 {
					omitted = r
				}
			}
		}
		if omitted == "" {
			return out
		}
		var outs []TemplateEdge
		for _, e := range out {
			if e.Source == omitted && e.Target != omitted {
				outs = append(outs, e)
			}
		}
		has := func(l []TemplateEdge, src, dst string) bool {
			return slices.ContainsFunc(l, func(e TemplateEdge) bool { return e.Source == src && e.Target == dst })
		}
		var kept []TemplateEdge
		for _, e := range out {
			switch {
			case e.Source == omitted:
			case e.Target == omitted: // replaced in place, so the pipeline order stays
				for _, o := range outs {
					if e.Source != o.Target && !has(out, e.Source, o.Target) && !has(kept, e.Source, o.Target) {
						kept = append(kept, TemplateEdge{Source: e.Source, Target: o.Target, Mode: o.Mode, Messages: o.Messages})
					}
				}
			default:
				kept = append(kept, e)
			}
		}
		out = kept
	}
}

// Bounds returns the box covering every node of a layout (top-left positions, NodeWidth ×
// NodeHeight boxes): lo is its top-left corner, hi its bottom-right. ok is false when empty.
func Bounds(layout map[string]Position) (lo, hi Position, ok bool) {
	for _, p := range layout {
		if !ok {
			lo, hi, ok = p, Position{p.X + NodeWidth, p.Y + NodeHeight}, true
			continue
		}
		lo.X, lo.Y = min(lo.X, p.X), min(lo.Y, p.Y)
		hi.X, hi.Y = max(hi.X, p.X+NodeWidth), max(hi.Y, p.Y+NodeHeight)
	}
	return lo, hi, ok
}

// OriginBeside is where a new subgraph goes: two gaps to the right of the existing layout's
// box, level with its top; (0, 0) for an empty layout.
func OriginBeside(layout map[string]Position) Position {
	lo, hi, ok := Bounds(layout)
	if !ok {
		return Position{}
	}
	return Position{X: hi.X + 2*GapX, Y: lo.Y}
}

// String names a subgraph briefly for logs and test failures.
func (s Subgraph) String() string {
	return fmt.Sprintf("%s: %d agents, %d system nodes, %d edges", s.Interaction.ID, len(s.Agents), len(s.SystemNodes), len(s.Interaction.Edges))
}

// Clear moves a subgraph laid out by Instantiate so none of its boxes overlaps an existing
// node's box (with half a gap between them), keeping it as near the requested spot as it can:
// a dropped or palette-inserted pattern lands where the user looked, never on top of a node they
// already placed. It tries the spot itself, then spots stepping outwards right, down, left and
// up by half a grid cell; if none within 40 steps is free it goes beside the whole layout.
// sub is changed in place; the offset applied is returned.
func Clear(sub, existing map[string]Position) (dx, dy float64) {
	if len(sub) == 0 || len(existing) == 0 {
		return 0, 0
	}
	overlaps := func(dx, dy float64) bool {
		for _, s := range sub {
			for _, e := range existing {
				if s.X+dx < e.X+NodeWidth+GapX/2 && e.X < s.X+dx+NodeWidth+GapX/2 &&
					s.Y+dy < e.Y+NodeHeight+GapY/2 && e.Y < s.Y+dy+NodeHeight+GapY/2 {
					return true
				}
			}
		}
		return false
	}
	stepX, stepY := (NodeWidth+GapX)/2, (NodeHeight+GapY)/2
	found := !overlaps(0, 0)
	for d := 1.0; !found && d <= 40; d++ {
		for _, c := range [][2]float64{{d * stepX, 0}, {0, d * stepY}, {-d * stepX, 0}, {0, -d * stepY}} {
			if !overlaps(c[0], c[1]) {
				dx, dy, found = c[0], c[1], true
				break
			}
		}
	}
	if !found {
		lo, _, _ := Bounds(sub)
		beside := OriginBeside(existing)
		dx, dy = beside.X-lo.X, beside.Y-lo.Y
	}
	for id, p := range sub {
		sub[id] = Position{X: p.X + dx, Y: p.Y + dy}
	}
	return dx, dy
}
