package server

import (
	"sort"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

func TestPatternIDsMatchTheLibrary(t *testing.T) {
	all := pattern.All()
	if len(all) != len(PatternIDs) {
		t.Fatalf("library has %d patterns, PatternIDs %d", len(all), len(PatternIDs))
	}
	for i, p := range all {
		if p.PatternID != PatternIDs[i] {
			t.Errorf("P%02d: library %q, PatternIDs %q", i+1, p.PatternID, PatternIDs[i])
		}
		if canon, alias, ok := patternAlias(p.ID); !ok || canon != p.PatternID || alias != p.ID {
			t.Errorf("patternAlias(%q) = %q %q %v", p.ID, canon, alias, ok)
		}
	}
}

func TestPatternsOnTheBinary(t *testing.T) {
	root, uri := workspace(t, "p.yaml", goodFlow)
	c := startBinary(t)
	c.initialize(root)
	var list []patternSummary
	c.mustCall("agentcanvas/listPatterns", nil, &list)
	if len(list) != 20 || list[4].ID != "P05" || list[4].PatternID != "debate_judge" || len(list[4].Roles) == 0 || !strings.Contains(list[4].Doc, "Debate") {
		t.Fatalf("listPatterns: %d patterns, P05 = %+v", len(list), list[4])
	}
	// Instantiating beside an existing flow: ids fresh with respect to it.
	var sg pattern.Subgraph
	c.mustCall("agentcanvas/instantiatePattern", map[string]any{"patternId": "P01", "uri": uri}, &sg)
	if len(sg.Agents) == 0 || sg.Interaction.ID == "i1" || sg.Interaction.PatternID != "manager_worker" {
		t.Fatalf("instantiatePattern: %+v", sg)
	}
	if _, err := c.call("agentcanvas/instantiatePattern", map[string]any{"patternId": "nope"}); err == nil || err.Code != int(CodeRequestFailed) || !strings.Contains(err.Message, "unknown pattern") {
		t.Errorf("unknown pattern: %v", err)
	}
	// Hover on a patternId shows the pattern's document.
	c.open(uri, goodFlow, 1)
	var h clientHover
	c.mustCall("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 11, "character": 16}}, &h)
	if !strings.HasPrefix(h.Contents.Value, "# P01") {
		t.Errorf("hover on manager_worker: %.80q", h.Contents.Value)
	}
	// editFlow's insertPattern: the server expands it; the result parses and adds the nodes.
	var ef editFlowResult
	c.mustCall("agentcanvas/editFlow", map[string]any{"uri": uri, "version": 1, "ops": []any{map[string]any{"op": "insertPattern", "patternId": "debate_judge"}}}, &ef)
	edits := append([]protocol.TextEdit(nil), ef.Edits...)
	sort.SliceStable(edits, func(i, j int) bool { return !posLess(edits[i].Range.Start, edits[j].Range.Start) })
	var changes []protocol.TextDocumentContentChangeEvent
	for _, e := range edits {
		r := e.Range
		changes = append(changes, rangeChange(r, e.NewText))
	}
	c.change(uri, 2, changes...)
	var lf struct {
		Flow struct {
			Agents       []struct{ ID string } `json:"agents"`
			SystemNodes  []struct{ ID, Type string }
			Interactions []struct{ ID, PatternID string }
		} `json:"flow"`
		Diags []clientDiagnostic `json:"diagnostics"`
	}
	c.mustCall("agentcanvas/loadFlow", map[string]any{"uri": uri, "version": 2}, &lf)
	if len(lf.Flow.Interactions) != 2 || lf.Flow.Interactions[1].PatternID != "debate_judge" || len(lf.Flow.Agents) < 4 {
		t.Errorf("after insertPattern: %+v", lf.Flow)
	}
	for _, d := range lf.Diags {
		if d.Severity == 1 {
			t.Errorf("inserted pattern has an error: %s: %s", d.Code, d.Message)
		}
	}
	c.shutdownExit()
}
