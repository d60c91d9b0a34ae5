package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
	label := fmt.Sprintf("agent %s (role %s), run %s, round %d", s.AgentID, role, orNone(s.RunID), s.Round)
	var b strings.Builder
	section := func(n int, title, body string) { fmt.Fprintf(&b, "%d. %s\n%s\n\n", n, title, body) }
	section(1, "Intent", "- Dry run of "+label+": a deterministic reply, no model was called.")
	inputs := fmt.Sprintf("- Prompt of %d bytes; turn %d.", len(in.prompt), in.turn)
	if s.MCPServers != nil { // what a real agent would have been given (AGENTCANVAS_MCP_SERVERS)
		inputs += "\n- MCP servers: " + orNone(mcpNames(s.MCPServers)) + "."
	}
	section(2, "Assumptions/Inputs", inputs)
	if m := patternLines(s, in.prompt); m != "" {
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
		return strings.Join(append(lines, "METRIC: tests_passed=1", "PERFORMATIVE: cfp"), "\n")
	case has("user"):
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
// work folder, through os.Root so the write cannot leave it.
func dryRunEdit(s *Spec, label string) (string, error) {
	name := "dry-run-" + strings.Trim(unsafeNameRE.ReplaceAllString(s.AgentID, "_"), "._") + ".md"
	root, err := os.OpenRoot(s.SandboxWork)
	if err != nil {
		return "", fmt.Errorf("dry-run: sandbox work folder: %w", err)
	}
	defer root.Close()
	old, err := root.ReadFile(name)
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
