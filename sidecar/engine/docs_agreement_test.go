package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// markersRead are the structured lines and reasons each executor reads or reports; the
// pattern's document ("How AgentCanvas runs it") must name every one, and docs/patterns.md
// the first ones, so the documents and the executors cannot drift apart unnoticed.
var markersRead = map[string][]string{
	"manager_worker":         {"ASSIGN <worker id>:", "HANDOFF", "METRIC: tests_passed", "test_command"},
	"role_play_pair":         {"<CAMEL_TASK_DONE>", "task_done"},
	"chat_chain_pipeline":    {"<INFO>", "phase_concluded"},
	"sop_assembly_line":      {"publishes", "watches", "METRIC: artifact_valid"},
	"debate_judge":           {"ANSWER:", "DECISION:", "judge_decision"},
	"critic_refiner_curator": {"METRIC: open_errors", "curator"},
	"majority_vote":          {"PROPOSAL:", "VOTE:", "DECISION:", "OPTIONS:"},
	"self_consistency":       {"ANSWER:", "tally"},
	"contract_net":           {"PERFORMATIVE:", "DECISION: <bidder id>", "accept-proposal", "reject-proposal", "inform-done", "failure", "COST:"},
	"bilateral_negotiation":  {`"act"`, "counteroffer", "deal_closed", "no deal"},
	"blackboard":             {"POST <kind>:", "solution", "quiescent"},
	"publish_subscribe":      {"PUBLISH <topic>:", "SUBSCRIBE <topic>", "UNSUBSCRIBE <topic>", "REPLY:", "all_unsubscribed", "quiescent"},
	"broker_facilitator":     {"REQUEST <capability>:", "register", "completed"},
	"router_targeted":        {`{"to":`, "undeliverable", "quiescent"},
	"hierarchical_tree":      {"ASSIGN", "HANDOFF", "tests_passed"},
	"red_team_judge":         {"ATTACK <n>:", "METRIC: score=", "STANDING:"},
	"fact_check_verifier":    {"CLAIM:", "CHECK <n>:", "DECISION: accept", "revise"},
	"plan_execute_reflect":   {"reflection", "memory"},
	"memory_sync":            {"## MEMORY", "## NOTES", "keep_last_days"},
	"protocol_bridge":        {"tools/call", "bridged"},
}

func TestPatternDocumentsNameWhatExecutorsRead(t *testing.T) {
	summary, err := os.ReadFile("../../docs/patterns.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pattern.All() {
		markers, ok := markersRead[p.PatternID]
		if !ok || executors[p.PatternID] == nil {
			t.Errorf("%s: no executor or no markers listed", p.PatternID)
			continue
		}
		doc, err := os.ReadFile(filepath.Join("../../patterns", p.ID+"-"+p.PatternID+".md"))
		if err != nil {
			t.Fatal(err)
		}
		how := section2(string(doc), "## How AgentCanvas runs it")
		line := section2(string(summary), "### "+p.ID+" ")
		for i, m := range markers {
			if !strings.Contains(how, m) {
				t.Errorf("%s.md, How AgentCanvas runs it: does not name %q", p.ID, m)
			}
			if i == 0 && !strings.Contains(line, strings.Fields(m)[0]) {
				t.Errorf("docs/patterns.md, %s: does not name %q", p.ID, strings.Fields(m)[0])
			}
		}
	}
}

// section2 is the text from the heading that starts with head to the next heading of its level.
func section2(doc, head string) string {
	i := strings.Index(doc, head)
	if i < 0 {
		return ""
	}
	level := head[:strings.Index(head, " ")+1]
	rest := doc[i+len(head):]
	if j := strings.Index(rest, "\n"+level); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// docs/runs.md's table of routes lists every pattern's routes as its template has them, and
// every route message is a type the bus knows; and every role a route names is cast.
func TestRoutesTableMatchesPatterns(t *testing.T) {
	doc, err := os.ReadFile("../../docs/runs.md")
	if err != nil {
		t.Fatal(err)
	}
	table := section2(string(doc), "## The message bus")
	for _, p := range pattern.All() {
		head := "| " + p.ID + " `" + p.PatternID + "` |"
		i := strings.Index(table, head)
		if i < 0 {
			t.Errorf("docs/runs.md has no row %q", head)
			continue
		}
		row := table[i:]
		row = row[:strings.Index(row, "\n")]
		for _, r := range p.Template.Routes {
			if !strings.Contains(row, r.Text()) {
				t.Errorf("docs/runs.md, %s: the row lacks the route %s", p.ID, r.Text())
			}
			for _, m := range r.Messages {
				if !slices.Contains(bus.Types, m) {
					t.Errorf("%s: route message %q is not a bus type", p.ID, m)
				}
			}
		}
	}
}
