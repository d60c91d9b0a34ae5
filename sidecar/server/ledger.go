package server

import (
	"cmp"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

func init() {
	register("agentcanvas/revertProposal", method{handle: (*Server).revertProposal, async: true})
	register("agentcanvas/lineOrigins", method{handle: (*Server).lineOrigins, async: true})
}

// revertProposal takes one applied proposal's hunks back out (the apply ledger).
func (s *Server) revertProposal(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		RevertProposalParams
		workDone
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Entry != "" && !proposal.ValidLedgerID(p.Entry) {
		return nil, badParams("entry %q is not a ledger entry id (like 20261122T020000.000Z-1a2b3c4d)", p.Entry)
	}
	if p.Entry == "" {
		if err := s.bindRef(&p.ProposalRef); err != nil {
			return nil, err
		}
	} else {
		root, err := s.ledgerWorkspace()
		if err != nil {
			return nil, err
		}
		p.Workspace, p.Rules = root, s.limits().Rules
	}
	title := "Reverting proposal"
	if p.Check {
		title = "Checking the revert"
	}
	pr := s.beginProgress(ctx, p.WorkDoneToken, title, cmp.Or(p.AgentID, p.Entry))
	r, err := s.svc.Ledger.Revert(ctx, p.RevertProposalParams)
	pr.end(doneMessage(err))
	return r, err
}

// lineOrigins says which applied proposal wrote which lines of a workspace file.
func (s *Server) lineOrigins(ctx context.Context, params json.RawMessage) (any, error) {
	var p LineOriginsParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	root, err := s.ledgerWorkspace()
	if err != nil {
		return nil, err
	}
	file, err := uriPath(p.URI)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, badParams("uri %q: not a file of the workspace", p.URI)
	}
	p.Workspace, p.File = root, filepath.ToSlash(rel)
	return s.svc.Ledger.Origins(ctx, p)
}

func (s *Server) ledgerWorkspace() (string, error) {
	if s.svc.Ledger == nil {
		return "", notAvailable("the apply ledger")
	}
	return s.workspace()
}
