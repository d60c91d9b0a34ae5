package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// The default Sandboxes, Proposals and LogReader: the sandbox, proposal and eventlog packages.

type sandboxService struct{}

func (sandboxService) Prepare(ctx context.Context, p PrepareSandboxParams) (any, error) {
	return sandbox.Prepare(ctx, sandbox.Options{Workspace: p.Workspace, RunID: p.RunID, AgentID: p.AgentID,
		Files: p.Files, Progress: p.Progress, Rules: p.Rules, Notice: p.Notice})
}

type proposalService struct{}

// ref is the proposal's agent folder, absolute (a relative reference would be tried against
// the server's working folder first).
func (r ProposalRef) ref() (string, error) {
	rel, err := sandbox.RelDir(r.RunID, r.AgentID)
	if err != nil {
		return "", badParams("%v", err)
	}
	return filepath.Join(r.Workspace, filepath.FromSlash(rel)), nil
}

func (proposalService) Create(ctx context.Context, p CreateProposalParams) (any, error) {
	c, err := proposal.Create(ctx, proposal.CreateOptions{Workspace: p.Workspace, RunID: p.RunID, AgentID: p.AgentID,
		Notes: p.Notes, Flow: p.Flow, Rules: p.Rules})
	if err != nil {
		return nil, err
	}
	return c.Proposal, nil
}

func (proposalService) List(ctx context.Context, p ListProposalsParams) (any, error) {
	all, err := proposal.List(p.Workspace)
	if err != nil {
		return nil, err
	}
	out := []proposal.Summary{}
	for _, s := range all {
		if (p.RunID == "" || s.RunID == p.RunID) && (p.Status == "" || s.State == p.Status) {
			out = append(out, s)
		}
	}
	return out, nil
}

func (proposalService) Get(ctx context.Context, p ProposalRef) (any, error) {
	ref, err := p.ref()
	if err != nil {
		return nil, err
	}
	return proposal.GetReview(ctx, p.Workspace, ref, proposal.ReviewOptions{ApplyOptions: proposal.ApplyOptions{Flow: p.Flow, Rules: p.Rules}})
}

func (proposalService) Apply(ctx context.Context, p ApplyProposalParams) (any, error) {
	ref, err := p.ref()
	if err != nil {
		return nil, err
	}
	sel := proposal.Selection{Files: p.Files, Hunks: hunkMap(p.Hunks), Merge: hunkMap(p.Merge), Against: p.Against}
	for _, r := range p.Resolve {
		sel.Resolve = append(sel.Resolve, proposal.Resolution{Path: r.File, Hunk: r.Index, Take: r.Take, Text: r.Text})
	}
	o := proposal.ApplyOptions{DryRun: p.Check, Flow: p.Flow, Rules: p.Rules, Confirm: p.Confirm, Reviewed: p.Reviewed}
	return refusal(proposal.Apply(ctx, p.Workspace, ref, sel, o))
}

// refusal turns a refused apply or revert into a request-failed error whose data carries the
// problems (or the held files a person must confirm): the workspace is unchanged, and the
// review UI lists them.
func refusal(res *proposal.Result, err error) (any, error) {
	var refused *proposal.RefusedError
	if errors.As(err, &refused) {
		return nil, &dataError{fmt.Errorf("%w (the workspace is unchanged)", err), map[string]any{"problems": refused.Problems}}
	}
	var held *proposal.HeldError
	if errors.As(err, &held) && len(held.Held) > 0 {
		return nil, &dataError{fmt.Errorf("%w (the workspace is unchanged)", err), map[string]any{"held": held.Held}}
	}
	return res, err
}

type ledgerService struct{}

func (ledgerService) Revert(ctx context.Context, p RevertProposalParams) (any, error) {
	ref := p.Entry
	if ref == "" {
		var err error
		if ref, err = p.ref(); err != nil {
			return nil, err
		}
	}
	return refusal(proposal.Revert(ctx, p.Workspace, ref, proposal.ApplyOptions{DryRun: p.Check, Flow: p.Flow, Rules: p.Rules}))
}

func (ledgerService) Origins(ctx context.Context, p LineOriginsParams) (any, error) {
	var text []byte
	if p.Text != nil {
		text = []byte(*p.Text)
	}
	origins, err := proposal.LineOrigins(p.Workspace, p.File, text)
	if origins == nil {
		origins = []proposal.LineOrigin{}
	}
	if err != nil && len(origins) == 0 {
		return nil, err
	}
	return map[string]any{"origins": origins}, nil
}

// hunkMap groups hunk references by file (nil for none).
func hunkMap(refs []HunkRef) map[string][]int {
	if len(refs) == 0 {
		return nil
	}
	m := map[string][]int{}
	for _, h := range refs {
		m[h.File] = append(m[h.File], h.Index)
	}
	return m
}

func (proposalService) Reject(ctx context.Context, p RejectProposalParams) (any, error) {
	ref, err := p.ref()
	if err != nil {
		return nil, err
	}
	return nil, proposal.Reject(p.Workspace, ref, p.Reason, p.Flow)
}

type logService struct{}

type queryLogsResult struct {
	Events []eventlog.Event `json:"events"`
	// Truncated says older events matched but were left out by limit.
	Truncated bool `json:"truncated"`
	// Warnings name log lines that were skipped (a write cut short): the events are the rest.
	Warnings []string `json:"warnings,omitempty"`
}

func (logService) Query(ctx context.Context, p QueryLogsParams) (any, error) {
	var since, until int64
	for _, b := range []struct {
		s   string
		out *int64
	}{{p.Since, &since}, {p.Until, &until}} {
		if b.s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, b.s)
		if err != nil {
			return nil, badParams("since/until %q: not an RFC 3339 time", b.s)
		}
		*b.out = t.UnixMilli()
	}
	if err := eventlog.CheckFlowName(p.Flow); err != nil {
		return nil, badParams("%v", err)
	}
	all, err := eventlog.ReadAll(p.Workspace, p.Flow)
	if err != nil && len(all) == 0 && !eventlog.Skipped(err) {
		return nil, err
	}
	r := queryLogsResult{Events: []eventlog.Event{}}
	if err != nil {
		r.Warnings = strings.Split(err.Error(), "\n")
	}
	for _, e := range all {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if (p.RunID != "" && e.RunID != p.RunID) || (p.Event != "" && e.Event != p.Event) ||
			(since != 0 && e.TS < since) || (until != 0 && e.TS > until) {
			continue
		}
		r.Events = append(r.Events, e)
	}
	if p.Limit > 0 && len(r.Events) > p.Limit {
		r.Events, r.Truncated = r.Events[len(r.Events)-p.Limit:], true
	}
	return r, nil
}
