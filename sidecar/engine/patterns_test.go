package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// scripted is the runtime of every node in these tests: testdata/agent.sh through the
// command backend, a real process per turn.
func scripted(t testing.TB) map[string]any {
	script, err := filepath.Abs("testdata/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"kind": "cli", "backendId": "command", "command": []string{"bash", script}, "env": []string{"AC_DIR"}}
}

// steps lists the agents asked, in log order.
func steps(evs []eventlog.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Event == "step" {
			out = append(out, str(fld(e, "to")))
		}
	}
	return out
}

// matchOrder checks got against groups: each group (ids joined by "|") is a set of turns
// that may come in any order (agents run in parallel), groups in sequence.
// No groups means the case checks the order itself.
func matchOrder(got []string, groups []string) bool {
	if groups == nil {
		return true
	}
	i := 0
	for _, g := range groups {
		want := strings.Split(g, "|")
		if i+len(want) > len(got) {
			return false
		}
		have := slices.Clone(got[i : i+len(want)])
		sort.Strings(have)
		sort.Strings(want)
		if !slices.Equal(have, want) {
			return false
		}
		i += len(want)
	}
	return i == len(got)
}

func messages(evs []eventlog.Event, typ string) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range evs {
		if e.Event == "message" && fld(e, "type") == typ {
			out = append(out, e)
		}
	}
	return out
}

func eventsNamed(evs []eventlog.Event, name string) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range evs {
		if e.Event == name {
			out = append(out, e)
		}
	}
	return out
}

type patternCase struct {
	pattern string
	counts  map[string]int
	edit    func(sg *pattern.Subgraph)
	order   []string // groups of steps; "a|b" ran in parallel
	reason  string
	rounds  int
	result  string // a substring of the result
	check   func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event)
}

func setParam(key string, v any) func(sg *pattern.Subgraph) {
	return func(sg *pattern.Subgraph) {
		for i := range sg.Interaction.Edges {
			sg.Interaction.Edges[i].Data.Params[key] = v
		}
	}
}

var patternCases = []patternCase{
	{pattern: "manager_worker", order: []string{"manager", "worker_1|worker_2", "manager"}, reason: "quality_gate", rounds: 1, result: "ACCEPT all",
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			if len(out.Proposals) != 2 {
				t.Errorf("proposals = %v, want one per worker", out.Proposals)
			}
			if n := len(messages(evs, "task_assignment")); n != 2 {
				t.Errorf("%d task_assignment messages, want 2", n)
			}
		}},
	{pattern: "role_play_pair", order: []string{"user", "assistant", "user"}, reason: "quality_gate", rounds: 1, result: "Solution: hello 0"},
	{pattern: "chat_chain_pipeline", reason: "quality_gate", rounds: 2, result: "doc_writer concluded",
		order: []string{"planner", "designer", "planner", "designer", "designer", "coder", "coder", "tester", "tester", "doc_writer"},
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			// The coder's phase gets the designer's conclusion, found on its second round.
			p, _ := os.ReadFile(filepath.Join(dir, "designer.2.prompt"))
			if !strings.Contains(string(p), "designer concluded") {
				t.Errorf("the next phase did not get the conclusion:\n%s", p)
			}
		}},
	{pattern: "sop_assembly_line", order: []string{"pm", "architect", "engineer", "qa", "engineer", "qa"}, reason: "quality_gate", rounds: 2, result: "tests pass"},
	{pattern: "debate_judge", reason: "judge_decision", rounds: 3, result: "debater_1: 4",
		order: []string{"debater_1|debater_2", "debater_1", "debater_2", "debater_1", "debater_2", "judge"},
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			// Round 2: debater_1 sees debater_2's independent answer.
			p, _ := os.ReadFile(filepath.Join(dir, "debater_1.1.prompt"))
			if !strings.Contains(string(p), "ANSWER: 5") {
				t.Errorf("debater_1 did not see debater_2's answer:\n%s", p)
			}
		}},
	{pattern: "critic_refiner_curator", order: []string{"judge", "critic", "refiner", "judge", "curator"}, reason: "quality_gate", rounds: 2, result: "revised solution 0",
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			if !memoryNotesContain(t, ws, "Lesson: check step 2 first") {
				t.Error("the curator's note is not in today's memory notes")
			}
		}},
	{pattern: "majority_vote", order: []string{"voter_1|voter_2|voter_3", "voter_1|voter_2|voter_3"}, reason: "consensus_threshold", rounds: 1, result: "red"},
	// sampler_5 writes no ANSWER: line: it is asked once more (repair), then its sample is dropped.
	{pattern: "self_consistency", order: []string{"sampler_1|sampler_2|sampler_3|sampler_4|sampler_5|sampler_5"}, reason: "max_rounds", rounds: 1, result: "42",
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			p, _ := os.ReadFile(filepath.Join(dir, "sampler_5.1.prompt"))
			if !strings.Contains(string(p), "Solve independently") || !strings.Contains(string(p), "no idea") || !strings.HasSuffix(strings.TrimSpace(string(p)), "\nANSWER: <final answer>") {
				t.Errorf("sampler_5's repair prompt lacks its prompt, its last reply or the exact format:\n%s", p)
			}
			if r := eventsNamed(evs, "reply_repair"); len(r) != 1 || fld(r[0], "agent") != "sampler_5" {
				t.Errorf("reply_repair events %v", r)
			}
			if out.Interactions[0].Result != "42" {
				t.Errorf("result %q, want the normalised majority 42", out.Interactions[0].Result)
			}
			if tally := eventsNamed(evs, "tally"); len(tally) != 1 || fld(tally[0], "samples") != float64(5) {
				t.Errorf("tally events %v", tally)
			}
		}},
	{pattern: "contract_net", order: []string{"manager", "bidder_1|bidder_2|bidder_3", "manager", "bidder_2"}, reason: "max_rounds", rounds: 1, result: "inform-done by bidder_2",
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			for typ, n := range map[string]int{"cfp": 3, "propose": 2, "refuse": 1, "accept-proposal": 1, "reject-proposal": 1, "inform-done": 1} {
				if got := len(messages(evs, typ)); got != n {
					t.Errorf("%d %s messages, want %d", got, typ, n)
				}
			}
			if m := messages(evs, "accept-proposal"); len(m) == 1 && fld(m[0], "to") != "bidder_2" {
				t.Errorf("accept-proposal went to %v", fld(m[0], "to"))
			}
			// A bid is words: bidders are not told they changed nothing (only the winner edits).
			for _, w := range eventsNamed(evs, "warning") {
				if strings.Contains(fmt.Sprint(fld(w, "message")), "changed nothing") {
					t.Errorf("warning for a bid: %v", fld(w, "message"))
				}
			}
		}},
	{pattern: "bilateral_negotiation", order: []string{"proposer", "responder", "proposer", "responder"}, reason: "quality_gate", rounds: 2, result: `deal: {"price":9}`},
	{pattern: "blackboard", order: []string{"knowledge_source_1", "knowledge_source_2", "knowledge_source_3"}, reason: "quality_gate", rounds: 3, result: "s3",
		edit: setParam("retention", map[string]any{"keep_last_n": 3}),
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			posts := eventsNamed(evs, "blackboard_posted")
			if len(posts) != 3 {
				t.Fatalf("%d posts, want 3", len(posts))
			}
			last := posts[2]
			if fld(last, "kept") != float64(3) || fld(last, "trimmed") != float64(1) {
				t.Errorf("retention keep_last_n 3 after 4 entries: kept %v trimmed %v", fld(last, "kept"), fld(last, "trimmed"))
			}
			p, _ := os.ReadFile(filepath.Join(dir, "knowledge_source_3.0.prompt"))
			if !strings.Contains(string(p), "partial_result by knowledge_source_2") {
				t.Errorf("the third source did not see the board:\n%s", p)
			}
		}},
	{pattern: "publish_subscribe", order: []string{"publisher", "subscriber_1|subscriber_1|subscriber_2", "publisher", "subscriber_1"}, reason: "all_unsubscribed", rounds: 2, result: "4 event(s) delivered",
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			if n := len(messages(evs, "notification")); n != 3 {
				t.Errorf("%d notifications, want 3", n)
			}
		}},
	{pattern: "broker_facilitator", order: []string{"requester", "provider_1", "requester", "provider_2", "requester"}, reason: "completed", rounds: 2, result: "answer from provider_2",
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			if n := len(eventsNamed(evs, "register")); n != 2 {
				t.Errorf("%d register events, want 2", n)
			}
		}},
	{pattern: "router_targeted", order: []string{"peer_1|peer_2|peer_3", "peer_1|peer_2|peer_3"}, reason: "quiescent", rounds: 2, result: "3 message(s) delivered, 0 held",
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			if n := len(eventsNamed(evs, "undeliverable")); n != 1 {
				t.Errorf("%d undeliverable, want 1", n)
			}
			p, _ := os.ReadFile(filepath.Join(dir, "peer_1.1.prompt"))
			if !strings.Contains(string(p), "to all peers") || !strings.Contains(string(p), "ack: delivered to peer_2") {
				t.Errorf("peer_1's second prompt lacks its delivery or its ack:\n%s", p)
			}
		}},
	// Subtrees run independently, so only the order within each subtree is fixed: the root
	// first and last; each sub-manager plans before its workers and reviews after them.
	{pattern: "hierarchical_tree", reason: "quality_gate", rounds: 1, result: "ACCEPT all",
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			got := steps(evs)
			src, err := os.ReadFile(filepath.Join(ws, ".agentcanvas", "flows", "e2e.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			f := flow.Parse("e2e.yaml", src)
			if len(got) < 2 || got[0] != "root" || got[len(got)-1] != "root" {
				t.Fatalf("steps %v: the root must plan first and review last", got)
			}
			for _, e := range f.Interactions[0].Edges {
				if e.Source == "root" {
					continue
				}
				first, last, child := -1, -1, -1
				for i, s := range got {
					switch s {
					case e.Source:
						if first < 0 {
							first = i
						}
						last = i
					case e.Target:
						child = i
					}
				}
				if !(first < child && child < last) {
					t.Errorf("steps %v: %s must plan before %s and review after it", got, e.Source, e.Target)
				}
			}
		}},
	{pattern: "red_team_judge", order: []string{"red_team", "defender", "judge", "red_team", "defender", "judge"}, reason: "quality_gate", rounds: 2, result: "score 8"},
	{pattern: "fact_check_verifier", order: []string{"producer", "verifier", "judge", "producer", "verifier", "judge"}, reason: "quality_gate", rounds: 2, result: "moon is rock",
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			p, _ := os.ReadFile(filepath.Join(dir, "producer.1.prompt"))
			if !strings.Contains(string(p), "it is rock") {
				t.Errorf("the producer did not get the failed claim's evidence:\n%s", p)
			}
			v, _ := os.ReadFile(filepath.Join(dir, "verifier.0.prompt"))
			if strings.Contains(string(v), "Answer with sources") {
				t.Error("the verifier saw the producer's prompt, not only the claims")
			}
		}},
	{pattern: "plan_execute_reflect", order: []string{"planner", "executor", "observer", "reflector"}, reason: "max_rounds", rounds: 1, result: "keep steps small",
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			if !memoryNotesContain(t, ws, "reflection: keep steps small") {
				t.Error("the reflection is not in today's memory notes")
			}
		}},
	{pattern: "memory_sync", order: []string{"member_1|member_2", "curator"}, reason: "max_rounds", rounds: 1, result: "synced",
		check: func(t *testing.T, ws, dir string, out *Outcome, evs []eventlog.Event) {
			b, err := os.ReadFile(filepath.Join(ws, MemoryDir, "MEMORY.md"))
			if err != nil || !strings.Contains("\n"+string(b), "\n- durable fact from curator\n") {
				t.Errorf("MEMORY.md = %q, %v", b, err)
			}
		}},
	{pattern: "protocol_bridge", order: []string{"local_agent"}, reason: "bridged", rounds: 1, result: "pong"},
}

func memoryNotesContain(t *testing.T, ws, s string) bool {
	ents, _ := os.ReadDir(filepath.Join(ws, MemoryDir))
	for _, e := range ents {
		if e.Name() != "MEMORY.md" {
			if b, _ := os.ReadFile(filepath.Join(ws, MemoryDir, e.Name())); strings.Contains(string(b), s) {
				return true
			}
		}
	}
	return false
}

// TestPatternsEndToEnd runs every pattern with scripted agents as real processes and checks
// who was asked in which order, the termination reason and the result.
func TestPatternsEndToEnd(t *testing.T) {
	if len(patternCases) != len(pattern.All()) {
		t.Errorf("%d cases for %d patterns", len(patternCases), len(pattern.All()))
	}
	for _, tc := range patternCases {
		t.Run(tc.pattern, func(t *testing.T) {
			t.Parallel()
			ws := gitWorkspace(t)
			dir := t.TempDir()
			f := patternFlow(t, ws, "e2e", flowSpec{pattern: tc.pattern, counts: tc.counts, runtime: scripted(t), edit: tc.edit, description: "the task"})
			out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Env: map[string]string{"AC_DIR": dir}})
			if err != nil {
				t.Fatal(err)
			}
			evs := events(t, ws, "e2e")
			if out.Status != StatusCompleted || len(out.Interactions) != 1 {
				t.Fatalf("outcome %+v", out)
			}
			ic := out.Interactions[0]
			if got := steps(evs); !matchOrder(got, tc.order) {
				t.Errorf("steps %v, want %v", got, tc.order)
			}
			if ic.Reason != tc.reason || ic.Rounds != tc.rounds {
				t.Errorf("reason %q after %d round(s), want %q after %d", ic.Reason, ic.Rounds, tc.reason, tc.rounds)
			}
			if !strings.Contains(ic.Result, tc.result) {
				t.Errorf("result %q does not contain %q", ic.Result, tc.result)
			}
			term := eventsNamed(evs, "terminated")
			if len(term) != 1 || fld(term[0], "reason") != tc.reason {
				t.Errorf("terminated events %v", term)
			}
			// The executors send only what the pattern's routes and the drawn edges allow, and
			// the bus knows; nothing the pattern exchanges is refused (routes_test.go).
			for _, e := range eventsNamed(evs, "message_refused") {
				t.Errorf("a message of the pattern was refused: %s %v → %v: %v", fld(e, "type"), fld(e, "from"), fld(e, "to"), fld(e, "error"))
			}
			if tc.check != nil {
				tc.check(t, ws, dir, out, evs)
			}
		})
	}
}

// fld is an event field decoded from the log.
func fld(e eventlog.Event, key string) any {
	raw, ok := e.Fields[key]
	if !ok {
		return nil
	}
	if r, ok := raw.(json.RawMessage); ok {
		var v any
		if json.Unmarshal(r, &v) == nil {
			return v
		}
	}
	return raw
}

// P01's params.test_command decides tests_passed (over the manager's METRIC line): run in
// every worker's sandbox, its output kept as proposal/test.log.
func TestManagerWorkerTestCommand(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command []any
		reason  string
		rounds  int
	}{
		{"passes", []any{"sh", "-c", "cat work-*.txt"}, "quality_gate", 1},
		{"fails", []any{"sh", "-c", "echo broken; exit 1"}, "max_rounds", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := gitWorkspace(t)
			t.Setenv("AC_DIR", t.TempDir())
			f := patternFlow(t, ws, "tests", flowSpec{pattern: "manager_worker", runtime: scripted(t), description: "the task", edit: setParam("test_command", tc.command)})
			out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws})
			if err != nil {
				t.Fatal(err)
			}
			ic := out.Interactions[0]
			if ic.Reason != tc.reason || ic.Rounds != tc.rounds {
				t.Errorf("reason %q after %d round(s), want %q after %d", ic.Reason, ic.Rounds, tc.reason, tc.rounds)
			}
			runs := eventsNamed(events(t, ws, "tests"), "tests_run")
			if len(runs) != 2*tc.rounds {
				t.Errorf("%d tests_run events, want one per worker and round", len(runs))
			}
			log, err := os.ReadFile(filepath.Join(ws, ".agentcanvas", "sandboxes", out.RunID, "worker_1", "proposal", "test.log"))
			if err != nil {
				t.Fatal(err)
			}
			want := "edit by worker_1"
			if tc.name == "fails" {
				want = "broken"
			}
			if !strings.Contains(string(log), want) {
				t.Errorf("test.log = %q, want %q in it", log, want)
			}
		})
	}
}
