package pattern

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

func TestLibraryLoadsAllTwenty(t *testing.T) {
	if err := Err(); err != nil {
		t.Fatal(err)
	}
	all := All()
	if len(all) != 20 {
		t.Fatalf("All() has %d patterns, want 20", len(all))
	}
	for i, p := range all {
		if want := fmt.Sprintf("P%02d", i+1); p.ID != want {
			t.Errorf("All()[%d].ID = %s, want %s", i, p.ID, want)
		}
		if p.PatternID != CanonicalIDs[i] {
			t.Errorf("%s: patternId %q, want %q (DESIGN.md)", p.ID, p.PatternID, CanonicalIDs[i])
		}
		if p.Name == "" || p.Doc == "" || len(p.Roles) == 0 {
			t.Errorf("%s: name, doc and roles must be set", p.ID)
		}
	}
}

// The topology of each pattern as spec §5 gives it ("broadcast → aggregation" is broadcast;
// P12's "broker (pub/sub)" is broker; P15's "manager_worker (recursive)" is manager_worker).
var specTopology = map[string]string{
	"P01": "manager_worker", "P02": "p2p", "P03": "pipeline", "P04": "pipeline", "P05": "debate_judge",
	"P06": "p2p", "P07": "broadcast", "P08": "broadcast", "P09": "market_auction", "P10": "p2p",
	"P11": "blackboard", "P12": "broker", "P13": "broker", "P14": "router_targeted", "P15": "manager_worker",
	"P16": "debate_judge", "P17": "pipeline", "P18": "pipeline", "P19": "blackboard", "P20": "broker",
}

func TestTopologiesMatchSpec(t *testing.T) {
	for _, p := range All() {
		if p.Topology != specTopology[p.ID] || p.Template.Topology != p.Topology {
			t.Errorf("%s: topology %q, spec §5 says %q", p.ID, p.Topology, specTopology[p.ID])
		}
	}
}

// TestTemplatesSatisfySpec8 restates the spec §8 rules independently of CheckTemplate, so a
// bug in the shared helpers cannot hide a template that breaks them.
func TestTemplatesSatisfySpec8(t *testing.T) {
	for _, p := range All() {
		term, params := p.DefaultTermination, p.DefaultParams
		if term.Type == "" && len(term.Any) == 0 && len(term.All) == 0 {
			t.Errorf("%s: no default termination", p.ID)
		}
		if err := term.Check(); err != nil {
			t.Errorf("%s: %v", p.ID, err)
		}
		leaves := term.Conditions()
		has := func(typ string) bool {
			return slices.ContainsFunc(leaves, func(c Termination) bool { return c.Type == typ })
		}
		if p.Topology == "debate_judge" || p.PatternID == "critic_refiner_curator" || p.PatternID == "bilateral_negotiation" {
			timeout := false
			for _, c := range leaves {
				timeout = timeout || (c.Type == "timeout_ms" && c.Ms > 0)
			}
			if ms, ok := params["timeout_ms"].(int64); ok && ms > 0 {
				timeout = true
			}
			if !timeout {
				t.Errorf("%s: spec §8 requires a timeout", p.ID)
			}
		}
		if p.Topology == "blackboard" {
			r, _ := params["retention"].(map[string]any)
			n, _ := r["keep_last_n"].(int64)
			d, _ := r["keep_last_days"].(int64)
			if n < 1 && d < 1 {
				t.Errorf("%s: spec §8 requires retention keep_last_n or keep_last_days, params %v", p.ID, params)
			}
		}
		if p.Topology == "broker" || p.Topology == "router_targeted" {
			if rl, _ := params["rate_limit_per_min"].(int64); rl != 10 {
				t.Errorf("%s: rate_limit_per_min = %v, want the spec §8 default 10", p.ID, params["rate_limit_per_min"])
			}
		}
		switch p.ID {
		case "P05": // the issue's own example
			if !has("max_rounds") || !has("judge_decision") || !has("timeout_ms") {
				t.Errorf("P05: want max_rounds + judge_decision + timeout_ms, got %s", term)
			}
			for _, c := range leaves {
				if c.Type == "max_rounds" && c.Rounds != 3 {
					t.Errorf("P05: rounds = %d, want 3", c.Rounds)
				}
			}
		case "P07":
			if !has("consensus_threshold") {
				t.Errorf("P07: want consensus_threshold, got %s", term)
			}
		}
	}
}

func TestTemplateRolesAndEdgesAreConsistent(t *testing.T) {
	for _, p := range All() {
		roles := map[string]bool{}
		for _, r := range p.Roles {
			if roles[r.Role] {
				t.Errorf("%s: role %q declared twice", p.ID, r.Role)
			}
			roles[r.Role] = true
			if r.Kind == "system" && !slices.Contains(SystemTypes, r.SystemType) {
				t.Errorf("%s: system role %q has type %q", p.ID, r.Role, r.SystemType)
			}
			if r.Kind == "agent" && (r.Runtime == nil || r.Runtime.BackendID != "auto") {
				t.Errorf("%s: agent role %q needs the default runtime backend auto", p.ID, r.Role)
			}
		}
		for _, e := range p.Template.Edges {
			if !roles[e.Source] || !roles[e.Target] {
				t.Errorf("%s: edge %s → %s names an undeclared role", p.ID, e.Source, e.Target)
			}
		}
	}
}

func TestLookup(t *testing.T) {
	for _, key := range []string{"P05", "p05", "debate_judge", "DEBATE_JUDGE", " Debate_Judge\n"} {
		p, ok := Lookup(key)
		if !ok || p.ID != "P05" {
			t.Errorf("Lookup(%q) = %s, %v; want P05", key, p.ID, ok)
		}
	}
	for _, key := range []string{"", "P21", "P5", "debate", "debate-judge", "P05-debate_judge"} {
		if p, ok := Lookup(key); ok {
			t.Errorf("Lookup(%q) found %s, want nothing", key, p.ID)
		}
	}
	for i, id := range CanonicalIDs {
		if p, ok := Lookup(id); !ok || p.ID != fmt.Sprintf("P%02d", i+1) {
			t.Errorf("Lookup(%q) = %s, %v", id, p.ID, ok)
		}
	}
}

func TestResultsAreCopies(t *testing.T) {
	p, _ := Lookup("P11")
	p.DefaultParams["retention"].(map[string]any)["keep_last_n"] = int64(-1)
	p.Roles[0].Runtime.BackendID = "changed"
	p.DefaultTermination.Any[0].Type = "changed"
	p.Template.Edges[0].Messages[0] = "changed"
	q, _ := Lookup("P11")
	if !HasRetention(q.DefaultParams) || q.Roles[0].Runtime.BackendID != "auto" ||
		q.DefaultTermination.Any[0].Type == "changed" || q.Template.Edges[0].Messages[0] == "changed" {
		t.Fatal("changing a looked-up pattern changed the library")
	}
}

func TestPatternJSONForRPC(t *testing.T) {
	p, _ := Lookup("P11")
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Pattern
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.ID != "P11" || back.PatternID != "blackboard" || back.Doc != p.Doc || !HasRetention(back.DefaultParams) ||
		back.DefaultTermination.String() != p.DefaultTermination.String() || len(back.Template.Edges) != 1 {
		t.Errorf("Pattern did not survive JSON: %s", data[:200])
	}
}
