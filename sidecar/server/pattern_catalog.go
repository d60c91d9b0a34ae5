package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// libraryCatalog is the PatternCatalog of the embedded pattern library (sidecar/pattern).
type libraryCatalog struct{}

// patternSummary is what agentcanvas/listPatterns answers per pattern: the command line's
// fields plus defaults and the document (the template itself stays in the sidecar).
type patternSummary struct {
	ID                 string              `json:"id"`
	PatternID          string              `json:"patternId"`
	Name               string              `json:"name"`
	Summary            string              `json:"summary"`
	Topology           string              `json:"topology"`
	Roles              []pattern.Role      `json:"roles"`
	DefaultTermination pattern.Termination `json:"defaultTermination"`
	DefaultParams      map[string]any      `json:"defaultParams"`
	Doc                string              `json:"doc"`
}

func (libraryCatalog) List(ctx context.Context) (any, error) {
	if err := pattern.Err(); err != nil {
		return nil, bugf("the embedded pattern library is broken: %v", err)
	}
	var out []patternSummary
	for _, p := range pattern.All() {
		out = append(out, patternSummary{p.ID, p.PatternID, p.Name, p.Template.Summary, p.Topology, p.Roles,
			p.DefaultTermination, p.DefaultParams, p.Doc})
	}
	return out, nil
}

func (libraryCatalog) Doc(idOrAlias string) (string, bool) {
	p, ok := pattern.Lookup(idOrAlias)
	if !ok {
		return "", false
	}
	return p.Doc, true
}

func (libraryCatalog) Instantiate(ctx context.Context, p InstantiateParams) (any, error) {
	return instantiate(p.PatternID, p.ExistingIDs, p.Position, p.Layout, p.Prefix, p.Counts)
}

func instantiate(id string, existing []string, pos *Point, layout map[string]flow.Point, prefix string, counts map[string]int) (pattern.Subgraph, error) {
	pat, ok := pattern.Lookup(id)
	if !ok {
		return pattern.Subgraph{}, fmt.Errorf("unknown pattern %q; pattern ids are %s (or P01…P20)", id, strings.Join(PatternIDs, ", "))
	}
	opts := pattern.InstantiateOptions{ExistingIDs: map[string]bool{}, Prefix: prefix, Counts: counts}
	for _, x := range existing {
		opts.ExistingIDs[x] = true
	}
	l := map[string]pattern.Position{}
	for k, v := range layout {
		l[k] = pattern.Position{X: v.X, Y: v.Y}
	}
	if pos == nil {
		opts.Origin = pattern.OriginBeside(l)
		return pattern.Instantiate(pat, opts), nil
	}
	// Where the user asked, but never on top of the nodes already there.
	opts.Origin = pattern.Position{X: pos.X, Y: pos.Y}
	sg := pattern.Instantiate(pat, opts)
	pattern.Clear(sg.Layout, l)
	return sg, nil
}

// expandPattern turns an insertPattern operation into flow edit operations.
func expandPattern(ctx context.Context, patternID string, existing []string, position *flow.Point, layout map[string]flow.Point) ([]flow.Op, error) {
	var pos *Point
	if position != nil {
		pos = &Point{X: position.X, Y: position.Y}
	}
	sg, err := instantiate(patternID, existing, pos, layout, "", nil)
	if err != nil {
		return nil, err
	}
	var ops []flow.Op
	at := func(id string) *flow.Point {
		if p, ok := sg.Layout[id]; ok {
			return &flow.Point{X: p.X, Y: p.Y}
		}
		return nil
	}
	for _, a := range sg.Agents {
		raw, err := json.Marshal(a)
		if err != nil {
			return nil, bugf("marshalling a pattern agent: %v", err)
		}
		ops = append(ops, flow.Op{Op: "addAgent", Agent: raw, Position: at(a.ID)})
	}
	for _, n := range sg.SystemNodes {
		// The flow has no "role" field on system nodes; the type says what it is.
		node := map[string]any{"id": n.ID, "type": n.Type, "name": n.Name}
		if n.Runtime != nil {
			node["runtime"] = n.Runtime
		}
		raw, err := json.Marshal(node)
		if err != nil {
			return nil, bugf("marshalling a pattern system node: %v", err)
		}
		ops = append(ops, flow.Op{Op: "addSystemNode", Node: raw, Position: at(n.ID)})
	}
	raw, err := json.Marshal(sg.Interaction)
	if err != nil {
		return nil, bugf("marshalling a pattern interaction: %v", err)
	}
	ops = append(ops, flow.Op{Op: "addInteraction", Interaction: raw})
	return ops, nil
}
