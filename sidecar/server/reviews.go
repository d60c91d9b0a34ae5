package server

import (
	"context"
	"encoding/json"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// The review loop: comments on a proposal's lines and hunks, kept with it; hunks marked
// reviewed; a request for changes that sends the open comments back to the worker as a
// revision run; the interdiff between two revisions (sidecar/proposal, sidecar/engine).
// Every change lands in the proposal's folder, so the watcher's proposalChanged tells the editor.

func init() {
	register("agentcanvas/getReviewComments", method{handle: (*Server).getReviewComments, async: true})
	register("agentcanvas/addReviewComment", method{handle: (*Server).addReviewComment, async: true})
	register("agentcanvas/deleteReviewComment", method{handle: (*Server).deleteReviewComment, async: true})
	register("agentcanvas/markHunksReviewed", method{handle: (*Server).markHunksReviewed, async: true})
	register("agentcanvas/requestChanges", method{handle: (*Server).requestChanges, async: true})
	register("agentcanvas/getInterdiff", method{handle: (*Server).getInterdiff, async: true})
	register("agentcanvas/getProposalSides", method{handle: (*Server).getProposalSides, async: true})
}

// reviewRef binds a review method's proposal reference and returns its agent folder.
func (s *Server) reviewRef(r *ProposalRef) (string, error) {
	if err := s.bindRef(r); err != nil {
		return "", err
	}
	return r.ref()
}

func (s *Server) getReviewComments(ctx context.Context, params json.RawMessage) (any, error) {
	var p ProposalRef
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ref, err := s.reviewRef(&p)
	if err != nil {
		return nil, err
	}
	l, err := proposal.Load(p.Workspace, ref)
	if err != nil {
		return nil, err
	}
	return proposal.ReadReviewState(l.AgentDir, l.Proposal)
}

// AddReviewCommentParams: agentcanvas/addReviewComment.
type AddReviewCommentParams struct {
	ProposalRef
	Path string `json:"path"`
	Line int    `json:"line,omitempty"` // 1-based, in the file as the proposal leaves it; 0: the file
	Kind string `json:"kind,omitempty"` // comment (default) or reject
	Text string `json:"text"`
}

func (s *Server) addReviewComment(ctx context.Context, params json.RawMessage) (any, error) {
	var p AddReviewCommentParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ref, err := s.reviewRef(&p.ProposalRef)
	if err != nil {
		return nil, err
	}
	st, added, err := proposal.AddComments(p.Workspace, ref, []proposal.Comment{{Path: p.Path, Line: p.Line, Kind: p.Kind, Text: p.Text}})
	if err != nil {
		return nil, badParams("%v", err)
	}
	return map[string]any{"comment": added[0], "review": st}, nil
}

func (s *Server) deleteReviewComment(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		ProposalRef
		ID string `json:"id"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ref, err := s.reviewRef(&p.ProposalRef)
	if err != nil {
		return nil, err
	}
	st, err := proposal.DeleteComment(p.Workspace, ref, p.ID)
	if err != nil {
		return nil, badParams("%v", err)
	}
	return st, nil
}

func (s *Server) markHunksReviewed(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		ProposalRef
		Keys     []string `json:"keys"`
		Reviewed bool     `json:"reviewed"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ref, err := s.reviewRef(&p.ProposalRef)
	if err != nil {
		return nil, err
	}
	return proposal.MarkReviewed(p.Workspace, ref, p.Keys, p.Reviewed)
}

// RequestChangesParams: agentcanvas/requestChanges. Comments are added first; every open
// comment goes to the worker.
type RequestChangesParams struct {
	ProposalRef
	Comments []proposal.Comment `json:"comments,omitempty"`
	DryRun   bool               `json:"dryRun,omitempty"`
	Backend  string             `json:"backend,omitempty"`
	// Env: secret values from the editor's secret storage, as startRun's.
	Env map[string]string `json:"env,omitempty"`
}

func (s *Server) requestChanges(ctx context.Context, params json.RawMessage) (any, error) {
	var p RequestChangesParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ref, err := s.reviewRef(&p.ProposalRef)
	if err != nil {
		return nil, err
	}
	e, err := s.engine()
	if err != nil {
		return nil, err
	}
	info, err := e.StartRevision(ctx, engine.RevisionRequest{Proposal: ref, Comments: p.Comments}, engine.StartParams{DryRun: p.DryRun, Backend: p.Backend, Env: p.Env})
	if err != nil {
		return nil, badParams("%v", err)
	}
	return info, nil
}

func (s *Server) getInterdiff(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		ProposalRef
		From int `json:"from,omitempty"`
		To   int `json:"to,omitempty"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ref, err := s.reviewRef(&p.ProposalRef)
	if err != nil {
		return nil, err
	}
	id, err := proposal.GetInterdiff(p.Workspace, ref, p.From, p.To)
	if err != nil {
		return nil, badParams("%v", err)
	}
	return id, nil
}

// getProposalSides: each file of a proposal as its patch makes it, for the editor's
// side-by-side diff (never the worker's work/ as it is now).
func (s *Server) getProposalSides(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		ProposalRef
		Path string `json:"path,omitempty"` // one file's sides; all when empty
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ref, err := s.reviewRef(&p.ProposalRef)
	if err != nil {
		return nil, err
	}
	sides, err := proposal.GetPatchSides(p.Workspace, ref, p.Rules, p.Path)
	if err != nil {
		return nil, badParams("%v", err)
	}
	return sides, nil
}
