package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/safefile"
)

// dryRunBackend is built in: deterministic replies for every role, so any flow runs end to
// end with no CLI and no key. It runs in-process (no OS process) but its text goes through the
// same protocol parser and events as every other backend.
//
//   - judges (role contains judge, verifier, aggregator, arbiter or tiebreak) print a
//     structured verdict line: VERDICT: {"decision":"accept",…}
//   - voters (voter, evaluator, responder) agree: VOTE: {"vote":"agree",…}
//   - workers (any other role with a sandbox work folder) write dry-run-<agent>.md in it and
//     print a valid HANDOFF block naming that file
//   - everyone else answers in the standard response format and declares DONE.
//
// Every reply also carries the pattern marker its role prints (patternLines), so a dry run of
// each pattern ends for its natural reason, not its round cap.
type dryRunBackend struct{}

func (dryRunBackend) id() string                              { return BackendDryRun }
func (dryRunBackend) argv(*Spec, turnInput) ([]string, error) { return []string{"(dry-run)"}, nil }
func (dryRunBackend) stdin(*Spec, turnInput) string           { return "" }
func (dryRunBackend) newDecoder(*Spec, turnInput) decoder     { return &textDecoder{name: "dry-run"} }
func (dryRunBackend) followUp(o, a, _ string) turnInput       { return turnInput{prompt: o + "\n\n" + a} }

var (
	judgeRoleRE  = regexp.MustCompile(`(?i)judge|verifier|aggregator|arbiter|tiebreak`)
	voterRoleRE  = regexp.MustCompile(`(?i)voter|evaluator|responder`)
	unsafeNameRE = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
)

// dryRunReply is the dry-run agent's whole stdout for one turn; workers' edits happen here.
func dryRunReply(s *Spec, in turnInput) (string, error) {
	role := s.Role
	if role == "" {
		role = "agent"
	}
	label := fmt.Sprintf("agent %s (role %s), run %s, round %d", s.AgentID, role, orNone(s.RunID), s.Round+1) // counted from 1, as people read it
	var b strings.Builder
	section := func(n int, title, body string) { fmt.Fprintf(&b, "%d. %s\n%s\n\n", n, title, body) }
	section(1, "Intent", "- Dry run of "+label+": a deterministic reply, no model was called.")
	inputs := fmt.Sprintf("- Prompt of %d bytes; turn %d.", len(in.prompt), in.turn)
	if s.MCPServers != nil { // what a real agent would have been given (AGENTCANVAS_MCP_SERVERS)
		inputs += "\n- MCP servers: " + orNone(mcpNames(s.MCPServers)) + "."
	}
	section(2, "Assumptions/Inputs", inputs)
	marks := patternLines(s, in.prompt)
	if m := strings.TrimSpace(marks + "\n" + askedLines(s, in.prompt, marks)); m != "" {
		b.WriteString(m + "\n\n")
	}
	switch {
	case judgeRoleRE.MatchString(role):
		section(3, "Plan", "- Read the candidates.\n- Compare them against the task.\n- Decide.")
		section(4, "Actions/Artifacts", `VERDICT: {"decision":"accept","winner":"","score":1,"reason":"dry-run: the deterministic judge accepts"}`)
		section(5, "Risks/Safety Notes", "- None: nothing was evaluated.")
		b.WriteString("6. Next Steps or DONE\n- DONE\n")
	case voterRoleRE.MatchString(role):
		section(3, "Plan", "- Read the proposal.\n- Weigh it against the task.\n- Vote.")
		section(4, "Actions/Artifacts", `VOTE: {"vote":"agree","reason":"dry-run: the deterministic voter agrees"}`)
		section(5, "Risks/Safety Notes", "- None: nothing was evaluated.")
		b.WriteString("6. Next Steps or DONE\n- DONE\n")
	case s.SandboxWork != "":
		name, err := dryRunEdit(s, label)
		if err != nil {
			return "", err
		}
		work, proposal := handoffPaths(s)
		section(3, "Plan", "- Make one small labelled edit in the sandbox work folder.\n- Describe it.\n- Hand off.")
		section(4, "Actions/Artifacts", "- Wrote "+name)
		section(5, "Risks/Safety Notes", "- The edit only adds a labelled note file.")
		b.WriteString("6. Next Steps or DONE\n")
		fmt.Fprintf(&b, "HANDOFF\nContext:        dry run of %s\nGoal:           a small labelled edit in the sandbox\n", label)
		fmt.Fprintf(&b, "DoD:            %s exists in the sandbox work folder and names this agent and round\n", name)
		fmt.Fprintf(&b, "SandboxWorkDir: %s\nProposalJson:   %s\n", work, proposal)
		fmt.Fprintf(&b, "ChangedFiles:\n  - %s\nTests:\n  - (none: dry run)\nNext:\n  - Orchestrator: review + apply or request changes\n", name)
	default:
		section(3, "Plan", "- Read the task.\n- Coordinate the other agents.\n- Report.")
		section(4, "Actions/Artifacts", "- None: dry run.")
		section(5, "Risks/Safety Notes", "- None.")
		b.WriteString("6. Next Steps or DONE\n- DONE\n")
	}
	return b.String(), nil
}

// askedLines are the structured lines the prompt asks for that the role's lines lack, whatever
// the agent's role is called (a blackboard's "researcher", a pipeline's first stage): the
// engine asks once more, and then fails the step, when a line it needs is missing
// (docs/runs.md, *Replies*).
func askedLines(s *Spec, prompt, marks string) string {
	asks := func(format string) bool { return strings.Contains(prompt, format) }
	first := s.Round == 0
	var out []string
	for _, a := range []struct {
		format string
		line   string
	}{
		{"ASSIGN <member id>", assignLines(prompt)},
		{"ACCEPT <member id>", "ACCEPT all\nMETRIC: tests_passed=1"},
		{"POST <kind>:", "POST solution: dry-run solution"},
		{"PUBLISH <topic>:", "PUBLISH updates: dry-run update"},
		{"REQUEST <capability>:", map[bool]string{true: "REQUEST provider: dry-run request"}[first]},
		{`{"to": [`, map[bool]string{true: routeLine(s, prompt)}[first]},
		{"ATTACK <n>: <claim>", "ATTACK 1: dry-run attack — read the task once more"},
		{"ATTACK <n>: <fix", "ATTACK 1: dry-run defence — nothing to fix"},
		{"CLAIM: <claim>", "CLAIM: dry-run claim [1]"},
		{"CHECK <n>:", "CHECK 1: pass — dry run"},
		{"ANSWER: <", "ANSWER: dry-run"},
		{"PROPOSAL: <", "PROPOSAL: agree"},
		{"PERFORMATIVE: propose", "PERFORMATIVE: propose\nCOST: 1"},
		{"PERFORMATIVE: inform-done", "PERFORMATIVE: inform-done"},
		{"METRIC: open_errors", "METRIC: open_errors=0"},
		{"METRIC: score", "METRIC: score=10"},
		{"## MEMORY", "## NOTES\n- dry-run note"},
		{`{"act":`, map[bool]string{true: `{"act": "accept"}`, false: `{"act": "offer", "terms": {"price": 1}}`}[strings.Contains(prompt, "Respond to the last offer")]},
	} {
		key, _, _ := strings.Cut(a.line, ":")
		if asks(a.format) && a.line != "" && !strings.Contains(marks, key) {
			out = append(out, a.line)
		}
	}
	return strings.Join(out, "\n")
}

// assignLines are a manager's ASSIGN lines, one per member its prompt lists.
func assignLines(prompt string) string {
	var lines []string
	for _, id := range teamIDs(prompt) {
		lines = append(lines, "ASSIGN "+id+": dry-run part of the task")
	}
	return strings.Join(lines, "\n")
}

// patternLines are the structured lines of the patterns (patterns/P*.md) a role prints.
func patternLines(s *Spec, prompt string) string {
	role := strings.ToLower(s.Role)
	has := func(w ...string) bool {
		for _, x := range w {
			if strings.Contains(role, x) {
				return true
			}
		}
		return false
	}
	switch {
	case has("judge", "tiebreak", "verifier"):
		out := "DECISION: accept\nMETRIC: open_errors=0 score=10\nSTANDING: none"
		if has("verifier") {
			out += "\nCHECK 1: pass — dry run"
		}
		return out
	case has("manager", "root", "orchestrator", "coordinator", "lead"):
		var lines []string
		for _, id := range teamIDs(prompt) {
			lines = append(lines, "ASSIGN "+id+": dry-run part of the task")
		}
		if id := firstProposer(prompt); id != "" { // P09's award
			lines = append(lines, "DECISION: "+id)
		}
		return strings.Join(append(lines, "ACCEPT all", "METRIC: tests_passed=1", "PERFORMATIVE: cfp"), "\n")
	case has("voter", "evaluator"):
		return "PROPOSAL: agree"
	case has("red_team", "red team", "attacker"):
		return "ATTACK 1: dry-run attack — read the task once more"
	case has("defender"):
		return "ATTACK 1: dry-run defence — nothing to fix"
	case has("peer"):
		if s.Round == 0 {
			return routeLine(s, prompt)
		}
	case has("user"):
		if strings.Contains(prompt, "(none yet)") { // P02: instruct once, then end the task
			return "Instruction: dry-run instruction — carry out the task in one step"
		}
		return "<CAMEL_TASK_DONE>"
	case has("bidder"):
		if strings.Contains(prompt, "accept-proposal") {
			return "PERFORMATIVE: inform-done"
		}
		return "PERFORMATIVE: propose\nCOST: 1"
	case has("proposer"):
		return `{"act": "offer", "terms": {"price": 1}}`
	case has("responder"):
		return `{"act": "accept"}`
	case has("knowledge"):
		return "POST solution: dry-run solution"
	case has("publisher"):
		return "PUBLISH updates: dry-run update"
	case has("requester"):
		if s.Round == 0 {
			return "REQUEST provider: dry-run request"
		}
	case has("sampler", "debater"):
		return "ANSWER: dry-run"
	case has("producer"):
		return "CLAIM: dry-run claim [1]"
	case has("qa", "tester"):
		return "METRIC: artifact_valid=1\n<INFO> dry-run: tests pass"
	case has("curator"):
		return "## NOTES\n- dry-run note"
	}
	return "<INFO> dry-run conclusion of " + s.AgentID + "\nMETRIC: artifact_valid=1"
}

// routeLine is a P14 peer's message, addressed to the first other peer its prompt lists
// ("Peers: frontend (tags frontend, worker); …"), so a dry run delivers it.
func routeLine(s *Spec, prompt string) string {
	to := "peer"
	for _, l := range strings.Split(prompt, "\n") {
		if i := strings.Index(l, "Peers: "); i >= 0 {
			if id, _, ok := strings.Cut(l[i+len("Peers: "):], " ("); ok && id != "" {
				to = id
			}
			break
		}
	}
	return `{"to": ["` + to + `"], "text": "dry-run message from ` + s.AgentID + `"}`
}

// firstProposer is the first bidder whose proposal an award prompt quotes ("Proposal of b1:").
func firstProposer(prompt string) string {
	const mark = "Proposal of "
	if i := strings.Index(prompt, mark); i >= 0 && strings.Contains(prompt, "Award the contract") {
		id, _, ok := strings.Cut(prompt[i+len(mark):], ":")
		if ok && !strings.ContainsAny(id, " \n") {
			return id
		}
	}
	return ""
}

// teamIDs are the member ids a manager's prompt lists on its "Team: a, b" line.
func teamIDs(prompt string) []string {
	for _, l := range strings.Split(prompt, "\n") {
		if i := strings.Index(l, "Team: "); i >= 0 {
			var ids []string
			for _, id := range strings.Split(l[i+len("Team: "):], ",") {
				if id = strings.TrimSpace(id); id != "" {
					ids = append(ids, id)
				}
			}
			return ids
		}
	}
	return nil
}

// dryRunEdit writes (or, in later rounds, appends to) dry-run-<agent>.md in the sandbox
// work folder, through safefile so the write cannot leave it (nor hang on a FIFO there).
func dryRunEdit(s *Spec, label string) (string, error) {
	name := "dry-run-" + strings.Trim(unsafeNameRE.ReplaceAllString(s.AgentID, "_"), "._") + ".md"
	root, err := safefile.Open(s.SandboxWork)
	if err != nil {
		return "", fmt.Errorf("dry-run: sandbox work folder: %w", err)
	}
	defer root.Close()
	old, err := root.ReadFile(name, maxHomeFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("dry-run: %s: %w", name, err)
	}
	if len(old) == 0 {
		old = []byte("# Dry-run edit\n\nThis file was written by AgentCanvas's dry-run backend.\n\n")
	}
	content := append(old, []byte("- Edited by "+label+"\n")...)
	if err := root.WriteFile(name, content, 0o644); err != nil {
		return "", fmt.Errorf("dry-run: %s: %w", name, err)
	}
	return name, nil
}

// handoffPaths are SandboxWorkDir and ProposalJson for the HANDOFF block: relative to the
// workspace when the sandbox is inside it (as .agentcanvas/sandboxes/<run>/<agent>/work).
func handoffPaths(s *Spec) (work, proposal string) {
	work = s.SandboxWork
	if s.Workspace != "" {
		if rel, err := filepath.Rel(s.Workspace, s.SandboxWork); err == nil && !strings.HasPrefix(rel, "..") {
			work = rel
		}
	}
	work = filepath.ToSlash(work)
	proposal = strings.TrimSuffix(work, "/work")
	if proposal == work {
		proposal = filepath.ToSlash(filepath.Dir(s.SandboxWork))
	}
	return work, proposal + "/proposal/proposal.json"
}
