package server

import (
	"context"
	"encoding/json"
	"fmt"
)

func init() {
	register("agentcanvas/prepareSandbox", method{handle: (*Server).prepareSandbox, async: true})
	register("agentcanvas/createProposal", method{handle: (*Server).createProposal, async: true})
	register("agentcanvas/listProposals", method{handle: (*Server).listProposals, async: true})
	register("agentcanvas/getProposal", method{handle: (*Server).getProposal, async: true})
	register("agentcanvas/applyProposal", method{handle: (*Server).applyProposal, async: true})
	register("agentcanvas/rejectProposal", method{handle: (*Server).rejectProposal, async: true})
}

// workDone is the optional LSP work-done token a request may carry.
type workDone struct {
	WorkDoneToken any `json:"workDoneToken,omitempty"`
}

// workspace returns the session's workspace root, or an error for methods that need one.
func (s *Server) workspace() (string, error) {
	if root := s.workspaceRoot(); root != "" {
		return root, nil
	}
	return "", badParams("the session has no workspace folder (initialize's rootUri or workspaceFolders)")
}

// bindRef checks a proposal method's reference and gives it the session's workspace and the
// settings' folder rules.
func (s *Server) bindRef(r *ProposalRef) error {
	if r.RunID == "" || r.AgentID == "" {
		return badParams("runId and agentId are required")
	}
	root, err := s.proposalsWorkspace()
	if err != nil {
		return err
	}
	r.Workspace, r.Rules = root, s.limits().Rules
	return nil
}

func (s *Server) prepareSandbox(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		PrepareSandboxParams
		workDone
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.RunID == "" || p.AgentID == "" {
		return nil, badParams("runId and agentId are required")
	}
	if s.svc.Sandboxes == nil {
		return nil, notAvailable("sandbox preparation (sidecar/sandbox has not landed in this build)")
	}
	root, err := s.workspace()
	if err != nil {
		return nil, err
	}
	p.Workspace, p.Rules = root, s.limits().Rules
	pr := s.beginProgress(ctx, p.WorkDoneToken, "Preparing sandbox", p.AgentID)
	last := -1
	p.Progress = func(done, total int) { // serialised by the sandbox package
		if pct := done * 100 / max(total, 1); pct != last {
			last = pct
			pr.report(fmt.Sprintf("%d of %d files", done, total), pct)
		}
	}
	p.Notice = func(n string) { // an interrupted apply recovered before the copy
		s.logf("AgentCanvas: %s", n)
		s.notify("window/showMessage", map[string]any{"type": msgWarning, "message": "AgentCanvas: " + n})
	}
	r, err := s.svc.Sandboxes.Prepare(ctx, p.PrepareSandboxParams)
	pr.end(doneMessage(err))
	return r, err
}

func (s *Server) createProposal(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		CreateProposalParams
		workDone
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := s.bindRef(&p.ProposalRef); err != nil {
		return nil, err
	}
	pr := s.beginProgress(ctx, p.WorkDoneToken, "Creating proposal", p.AgentID)
	r, err := s.svc.Proposals.Create(ctx, p.CreateProposalParams)
	pr.end(doneMessage(err))
	return r, err
}

func (s *Server) listProposals(ctx context.Context, params json.RawMessage) (any, error) {
	var p ListProposalsParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	root, err := s.proposalsWorkspace()
	if err != nil {
		return nil, err
	}
	p.Workspace = root
	return s.svc.Proposals.List(ctx, p)
}

func (s *Server) getProposal(ctx context.Context, params json.RawMessage) (any, error) {
	var p ProposalRef
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := s.bindRef(&p); err != nil {
		return nil, err
	}
	return s.svc.Proposals.Get(ctx, p)
}

func (s *Server) applyProposal(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		ApplyProposalParams
		workDone
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := s.bindRef(&p.ProposalRef); err != nil {
		return nil, err
	}
	title := "Applying proposal"
	if p.Check {
		title = "Checking proposal"
	}
	pr := s.beginProgress(ctx, p.WorkDoneToken, title, p.AgentID)
	r, err := s.svc.Proposals.Apply(ctx, p.ApplyProposalParams)
	pr.end(doneMessage(err))
	return r, err
}

func (s *Server) rejectProposal(ctx context.Context, params json.RawMessage) (any, error) {
	var p RejectProposalParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := s.bindRef(&p.ProposalRef); err != nil {
		return nil, err
	}
	return s.svc.Proposals.Reject(ctx, p)
}

func doneMessage(err error) string {
	if err != nil {
		return "failed: " + err.Error()
	}
	return "done"
}

// proposalsWorkspace is the workspace root for a proposal method, or why it cannot run.
func (s *Server) proposalsWorkspace() (string, error) {
	if s.svc.Proposals == nil {
		return "", notAvailable("proposals (sidecar/proposal has not landed in this build)")
	}
	return s.workspace()
}
