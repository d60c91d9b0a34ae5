package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// RevisionRequest asks the worker behind a pending proposal for changes: the person's
// comments on its hunks become the task of a new turn in the worker's own sandbox (work/ as
// it left it), and what it then changes becomes the proposal's next revision.
type RevisionRequest struct {
	// Proposal is the proposal as proposal.Load takes it (a proposal.json, an agent folder).
	Proposal string
	// Comments are added to the proposal before the request; the request carries every
	// comment not yet answered (these and earlier ones).
	Comments []proposal.Comment
}

// RevisionOutcome is the revision run's outcome and what it did to the proposal.
type RevisionOutcome struct {
	*Outcome
	Proposal string                   `json:"proposal"` // workspace-relative proposal.json
	Result   *proposal.RevisionResult `json:"revision"`
}

// maxPatchInPrompt bounds the current changes quoted in a revision prompt.
const maxPatchInPrompt = 48 << 10

// Revise runs a revision of a pending proposal as a run of its own: one turn of the worker
// that made it, with the same definition (backend, instructions, runtime, confinement) it had
// in its flow, the time and spend limits of the interaction it worked in, and the flow's
// budget (a revision is one more round of that worker). o.RunID, when set, names the
// revision run; o.SandboxOf and o.Task are set here.
func Revise(ctx context.Context, req RevisionRequest, o Options) (*RevisionOutcome, error) {
	rv, err := prepareRevision(req, o)
	if err != nil {
		return nil, err
	}
	out, err := Run(ctx, rv.f, rv.o)
	if err != nil {
		rv.abandon()
		return nil, err
	}
	return rv.finish(out)
}

// revision is a revision run made ready: its flow and options, and what it was sent.
type revision struct {
	f     *flow.Flow
	o     Options
	req   RevisionRequest
	start *proposal.RevisionStart
	flow  string // the original flow's name (its log)
}

// prepareRevision adds the request's comments, marks the proposal as being revised, keeps
// its current revision and writes the revision run's flow.
func prepareRevision(req RevisionRequest, o Options) (*revision, error) {
	if len(req.Comments) > 0 {
		if _, _, err := proposal.AddComments(o.Workspace, req.Proposal, req.Comments); err != nil {
			return nil, err
		}
	}
	l, err := proposal.Load(o.Workspace, req.Proposal)
	if err != nil {
		return nil, err
	}
	if l.Proposal == nil {
		return nil, fmt.Errorf("%s is a bare patch: only a worker's proposal can be revised", req.Proposal)
	}
	pr := l.Proposal
	orig, err := ReadState(o.Workspace, pr.RunID)
	if err != nil {
		return nil, fmt.Errorf("proposal %s/%s: its run's state cannot be read (%w); only a proposal a run made can go back to its worker", pr.RunID, pr.AgentID, err)
	}
	// The run's flow file, as the run recorded it, is found from the run's workspace, never
	// from the folder the revision is asked from.
	flowFile := inWorkspace(o.Workspace, orig.FlowFile)
	src, err := os.ReadFile(flowFile)
	if err != nil {
		return nil, fmt.Errorf("proposal %s/%s: the flow of run %s: %w", pr.RunID, pr.AgentID, pr.RunID, err)
	}
	f := flow.Parse(flowFile, src)
	if f.Doc == nil {
		return nil, fmt.Errorf("%s no longer parses: fix it, then ask again", flowFile)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RunID == "" {
		o.RunID = NewRunID(o.Now())
	}
	start, err := proposal.BeginRevision(o.Workspace, req.Proposal, o.RunID)
	if err != nil {
		return nil, err
	}
	for _, n := range start.Notices {
		if o.Sink != nil {
			o.Sink(eventlog.Event{TS: o.Now().UnixMilli(), Flow: f.Name, RunID: pr.RunID, Event: "warning", Fields: map[string]any{"agent": pr.AgentID, "message": n}})
		}
	}
	rv := &revision{o: o, req: req, start: start, flow: f.Name}
	if rv.f, err = writeRevisionFlow(o.Workspace, o.RunID, f, pr.AgentID); err != nil {
		rv.abandon()
		return nil, err
	}
	rv.o.SandboxOf = map[string]string{pr.AgentID: pr.RunID}
	rv.o.Task = revisionTask(start)
	rv.o.DryRun = o.DryRun || orig.DryRun
	rv.o.Backend = firstNonEmpty(o.Backend, orig.Backend)
	return rv, nil
}

// inWorkspace is a path a run recorded, resolved against the run's workspace when relative.
func inWorkspace(workspace, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(workspace, p)
}

// abandon ends a revision that never ran: the proposal stays as it was.
func (rv *revision) abandon() {
	proposal.FinishRevision(rv.o.Workspace, rv.req.Proposal, rv.o.RunID, rv.start.Comments, nil, false)
}

// finish records the revision run's end on the proposal (a new revision when it changed it,
// the worker's answers) and logs proposal_revised in the original flow's log.
func (rv *revision) finish(out *Outcome) (*RevisionOutcome, error) {
	reply := ""
	for _, in := range out.Interactions {
		reply = in.Result
	}
	o, pr := rv.o, rv.start.Loaded.Proposal
	res, err := proposal.FinishRevision(o.Workspace, rv.req.Proposal, o.RunID, rv.start.Comments, parseAnswers(reply, rv.start.Comments), out.Status == StatusCompleted)
	if err != nil {
		return nil, err
	}
	ref, _ := filepath.Rel(o.Workspace, filepath.Join(rv.start.Loaded.AgentDir, proposal.JSONFile))
	ref = filepath.ToSlash(ref)
	fields := map[string]any{"agent": pr.AgentID, "proposal": ref, "revision": res.Revision, "changed": res.Changed, "revisionRun": o.RunID, "comments": len(rv.start.Comments), "answered": len(res.Answered)}
	ev := eventlog.Event{TS: o.Now().UnixMilli(), Flow: rv.flow, RunID: pr.RunID, Event: "proposal_revised", Fields: fields}
	if log, err := eventlog.Open(o.Workspace, rv.flow); err == nil {
		log.Append(ev)
		log.Close()
	}
	if o.Sink != nil {
		o.Sink(ev)
	}
	return &RevisionOutcome{Outcome: out, Proposal: ref, Result: res}, nil
}

// writeRevisionFlow writes the flow of a revision run into the run's folder, under the
// original flow's file name so its events join that flow's log: P20 with the person as the
// bridge's caller, handing the comments to the worker, whose definition is copied from the
// original flow as it stands.
func writeRevisionFlow(workspace, runID string, f *flow.Flow, agentID string) (*flow.Flow, error) {
	agent, err := agentDefinition(f, agentID)
	if err != nil {
		return nil, err
	}
	agent["role"] = "worker" // P20's local agent; its sandbox and edit rights are a worker's
	delete(agent, "position")
	term, params := revisionBounds(f, agentID)
	doc := map[string]any{
		"version":     firstNonEmpty(f.Version, "0.2"),
		"name":        "Revision of " + agentID + "'s proposal",
		"description": "A worker revises its proposal from the reviewer's comments.",
		"agents":      []any{agent},
		"systemNodes": []any{map[string]any{"id": revisionBridge, "type": "bridge", "name": "Reviewer"}},
		"interactions": []any{map[string]any{
			"id":        "revise",
			"patternId": "protocol_bridge",
			"edges": []any{map[string]any{
				"source": revisionBridge,
				"target": agentID,
				"data":   map[string]any{"termination": term, "params": params},
			}},
		}},
	}
	if f.Policy.Budget != nil {
		b := map[string]any{}
		if f.Policy.Budget.USD != nil {
			b["usd"] = *f.Policy.Budget.USD
		}
		if f.Policy.Budget.Tokens != nil {
			b["tokens"] = *f.Policy.Budget.Tokens
		}
		doc["policy"] = map[string]any{"budget": b}
	}
	body, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(f.File)
	src := append([]byte("# Written by AgentCanvas for a revision of "+agentID+"'s proposal, from "+f.File+".\n"), body...)
	if err := writeRunFile(workspace, runID, name, src, true); err != nil {
		return nil, err
	}
	rf := flow.Parse(filepath.Join(workspace, RunsDir, runID, name), src)
	if rf.Doc == nil {
		return nil, errors.New("engine: the revision flow does not parse")
	}
	return rf, nil
}

// revisionBridge is the system node standing for the reviewer in a revision flow.
const revisionBridge = "reviewer"

// agentDefinition is the YAML mapping of agent id in f, decoded as it is written.
func agentDefinition(f *flow.Flow, id string) (map[string]any, error) {
	root := f.Doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	var agents *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "agents" {
			agents = root.Content[i+1]
		}
	}
	if agents != nil {
		for _, n := range agents.Content {
			var m map[string]any
			if err := n.Decode(&m); err == nil && fmt.Sprint(m["id"]) == id {
				return m, nil
			}
		}
	}
	return nil, fmt.Errorf("agent %s is no longer in %s: put it back to ask it for changes", id, f.File)
}

// revisionBounds are the revision's termination and params: the time and spend limits of
// the interactions the worker took part in (the tightest of each), else the skill runs'
// half hour.
func revisionBounds(f *flow.Flow, agentID string) (any, map[string]any) {
	var ms int64
	var usd *float64
	var tokens *int64
	for _, in := range f.Interactions {
		for _, e := range in.Edges {
			if e.Source != agentID && e.Target != agentID {
				continue
			}
			e.Data.Termination.Walk(func(t *flow.Termination) {
				switch {
				case t.Type == "timeout_ms" && t.Ms != nil && (ms == 0 || *t.Ms < ms):
					ms = *t.Ms
				case t.Type == "max_cost_usd" && t.USD != nil && (usd == nil || *t.USD < *usd):
					usd = t.USD
				case t.Type == "max_tokens" && t.Tokens != nil && (tokens == nil || *t.Tokens < *tokens):
					tokens = t.Tokens
				}
			})
		}
	}
	if ms == 0 {
		ms = skillTimeoutMS
	}
	conds := []any{map[string]any{"type": "timeout_ms", "ms": ms}}
	if usd != nil {
		conds = append(conds, map[string]any{"type": "max_cost_usd", "usd": *usd})
	}
	if tokens != nil {
		conds = append(conds, map[string]any{"type": "max_tokens", "tokens": *tokens})
	}
	var term any = conds[0]
	if len(conds) > 1 {
		term = map[string]any{"any": conds}
	}
	return term, map[string]any{"protocol": protocolPerson, "timeout_ms": ms, "rate_limit_per_min": 10}
}

// revisionTask is what the worker is sent: each open comment with its place, the changes it
// made so far, and how to answer.
func revisionTask(s *proposal.RevisionStart) string {
	var b strings.Builder
	fmt.Fprintf(&b, "A reviewer read revision %d of the changes you proposed and asks for changes. Your working folder is as you left it. ", s.State.Revision)
	b.WriteString("Change your files there to answer each comment below (or leave them and say why). In your reply, write one line per comment: ANSWER <id>: what you did. " +
		"Then end with a HANDOFF block, as in your first turn: Goal, DoD, SandboxWorkDir, ProposalJson, ChangedFiles (every file your changes touch, not only this turn's) and Tests.\n\nComments:\n")
	for _, c := range s.Comments {
		where := c.Path
		if c.Line > 0 {
			where = fmt.Sprintf("%s line %d", c.Path, c.Line)
		}
		kind := ""
		if c.Kind == proposal.CommentReject {
			kind = " (the reviewer rejects this change; take it out or redo it)"
		}
		fmt.Fprintf(&b, "- [%s] %s%s: %s\n", c.ID, where, kind, c.Text)
	}
	if n := s.Loaded.Proposal.Notes; strings.TrimSpace(n) != "" && !strings.HasPrefix(n, noHandoffNotes) {
		fmt.Fprintf(&b, "\nYour notes with revision %d:\n%s\n", s.State.Revision, truncate(n, 4000))
	}
	if t := proposal.ReadTests(s.Loaded.AgentDir, s.Patch); t != nil {
		if f := t.FirstFailure(); f != nil {
			b.WriteString("\n" + proposal.FailurePrompt(f))
		}
	}
	patch := string(s.Patch)
	if len(patch) > maxPatchInPrompt {
		patch = patch[:maxPatchInPrompt] + "\n… (cut; your working folder has it all)\n"
	}
	fmt.Fprintf(&b, "\nYour changes so far (revision %d, as a patch against the files you were given):\n%s", s.State.Revision, patch)
	return b.String()
}

var answerLine = regexp.MustCompile(`(?m)^\s*(?:[-*]\s*)?ANSWER\s+\[?(c\d+)\]?\s*:\s*(.+?)\s*$`)

// parseAnswers reads the worker's "ANSWER <id>: text" lines for the comments it was sent.
func parseAnswers(reply string, sent []proposal.Comment) map[string]string {
	known := map[string]bool{}
	for _, c := range sent {
		known[c.ID] = true
	}
	out := map[string]string{}
	for _, m := range answerLine.FindAllStringSubmatch(reply, -1) {
		if known[m[1]] {
			out[m[1]] = truncate(m[2], 2000)
		}
	}
	return out
}

// carriedNotes are the notes a revision run's proposal keeps when the worker wrote no valid
// HANDOFF block this time: the revision before it's, unless those say no block came either.
func (r *run) carriedNotes(node string) string {
	if _, revising := r.o.SandboxOf[node]; !revising {
		return ""
	}
	dir, err := sandbox.RelDir(r.sandboxRun(node), node)
	if err != nil {
		return ""
	}
	l, err := proposal.Load(r.o.Workspace, filepath.Join(dir, proposal.JSONFile))
	if err != nil || l.Proposal == nil || strings.HasPrefix(l.Proposal.Notes, noHandoffNotes) {
		return ""
	}
	return l.Proposal.Notes
}
