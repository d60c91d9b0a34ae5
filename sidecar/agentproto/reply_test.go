package agentproto

import (
	"os"
	"strings"
	"testing"
)

const workerResponse = "I looked at the form first.\n" + `
## Intent
Add input validation to the signup form.

## Assumptions/Inputs
- src/signup/form.tsx (baseline in input/)
- Node 20; npm test available

## Plan
1. Write failing tests for malformed e-mail addresses
2. Add a validate() helper
3. Wire it into the form's submit handler
4. Run npm test

## Actions/Artifacts
- Changed src/signup/validate.ts
  and its test file
- npm test: 14 passed, 0 failed

## Risks/Safety Notes
- The error message text changed; screenshots in docs are stale

## Next Steps or DONE
DONE

HANDOFF
Context:        Added input validation to the signup form
Goal:           Reject malformed e-mail addresses before they reach the API
DoD:            npm test passes; 0 lint errors
SandboxWorkDir: .agentcanvas/sandboxes/run_42/coder/work
ProposalJson:   .agentcanvas/sandboxes/run_42/coder/proposal/proposal.json
ChangedFiles:
  - src/signup/validate.ts
Next:
  - Orchestrator: review + apply or request changes
`

func TestParseReplyResponse(t *testing.T) {
	r, err := ParseReply(workerResponse)
	if err != nil {
		t.Fatalf("ParseReply: %v", err)
	}
	if r.Form != FormResponse || r.Intent != "Add input validation to the signup form." || !r.Done {
		t.Errorf("form %s, intent %q, done %v", r.Form, r.Intent, r.Done)
	}
	if len(r.Plan) != 4 || r.Plan[1] != "Add a validate() helper" {
		t.Errorf("plan %q", r.Plan)
	}
	if len(r.Actions) != 2 || r.Actions[0] != "Changed src/signup/validate.ts and its test file" {
		t.Errorf("actions %q", r.Actions)
	}
	if len(r.Inputs) != 2 || len(r.Risks) != 1 || len(r.NextSteps) != 0 {
		t.Errorf("inputs %q risks %q next %q", r.Inputs, r.Risks, r.NextSteps)
	}
	// The HANDOFF's own "Next:" is a block field, not a second Next section.
	if len(r.Blocks) != 1 || r.Blocks[0].Kind != KindHandoff {
		t.Fatalf("blocks %+v", r.Blocks)
	}
	if len(r.Sections) != 6 {
		t.Errorf("%d sections, want 6", len(r.Sections))
	}
}

func TestParseReplyMessageStyles(t *testing.T) {
	msg := strings.Join([]string{
		"**Intent:** cache the pattern list",
		"**Inputs**",
		"* sidecar/pattern/*.go",
		"3. Plan",
		"- [ ] measure",
		"- [x] add the cache",
		"- [ ] invalidate on file change",
		"Actions: none yet",
		"Open Questions:",
		"- None",
	}, "\n")
	r, err := ParseReply(msg)
	if err != nil {
		t.Fatalf("ParseReply: %v", err)
	}
	if r.Form != FormMessage || r.Intent != "cache the pattern list" || len(r.Plan) != 3 ||
		r.Plan[1] != "add the cache" || len(r.Inputs) != 1 || len(r.OpenQuestions) != 0 || r.Actions[0] != "none yet" {
		t.Errorf("reply %+v", r)
	}
}

func TestParseReplyProblems(t *testing.T) {
	bad := strings.Join([]string{
		"Intent: one thing",
		"  and another line",
		"more intent",
		"Plan:",
		"- only one step",
		"Open Questions:",
		"1. a?", "2. b?", "3. c?", "4. d?",
		"Risks: none",
		"Plan: again",
	}, "\n")
	_, err := ParseReply(bad)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"section 'Intent' must be one line",
		"section 'Plan' must have 3 to 7 steps, has 1",
		"at most 3 questions, has 4",
		"missing section 'Assumptions/Inputs'",
		"missing section 'Actions/Artifacts'",
		"missing section 'Next Steps or DONE'",
		"line 12: section 'Plan' appears twice",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := ParseReply("just chatter\nno sections\n"); err == nil || !strings.Contains(err.Error(), "no standard sections") {
		t.Errorf("chatter: %v", err)
	}
}

// The format listings of docs/agent-protocol.md (Standard message and response sections) read as a
// message and a response with every section present.
func TestParseReplySpecListings(t *testing.T) {
	spec, err := os.ReadFile("testdata/scan/spec-agentcanvas-protocol.txt")
	if err != nil {
		t.Fatal(err)
	}
	listing := func(after string) string {
		s := string(spec)
		s = s[strings.Index(s, after):]
		s = s[strings.Index(s, "```\n")+4:]
		return s[:strings.Index(s, "```")]
	}
	m, err := ParseReply(listing("### 2.1"))
	if m.Form != FormMessage || len(m.Sections) != 5 || m.Intent != "한 줄 목표 (무엇을 하려는가)" {
		t.Errorf("message: form %s, %d sections, intent %q", m.Form, len(m.Sections), m.Intent)
	}
	if err == nil || !strings.Contains(err.Error(), "'Plan' must have 3 to 7 steps, has 1") {
		t.Errorf("message: error %v", err)
	}
	r, _ := ParseReply(listing("### 2.2"))
	if r.Form != FormResponse || len(r.Sections) != 6 || len(r.Risks) != 1 {
		t.Errorf("response: form %s, %d sections, %+v", r.Form, len(r.Sections), r)
	}
}
