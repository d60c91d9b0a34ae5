package server

import (
	"context"
	"sort"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// Services are the domain packages behind the custom requests. Each is an interface at the
// seam so the server can be built and tested before a package lands; a nil service makes
// its methods answer CodeNotAvailable ("not available yet: …"). Results are plain values the
// domain package defines and the server encodes as JSON unchanged.
type Services struct {
	// EditFlow turns canvas edit operations into minimal text edits (default flow.Edit).
	EditFlow func(src []byte, file string, ops []flow.Op) ([]span.TextEdit, error)
	// ExpandPattern turns an insertPattern operation into addAgent, addSystemNode and
	// addInteraction operations with ids fresh with respect to existing (sidecar/pattern).
	// layout is the flow's current layout (a subgraph without a position goes beside it).
	ExpandPattern func(ctx context.Context, patternID string, existing []string, position *flow.Point, layout map[string]flow.Point) ([]flow.Op, error)
	// Patterns is the pattern catalog (sidecar/pattern).
	Patterns PatternCatalog
	// Sandboxes prepares agent sandboxes (sidecar/sandbox).
	Sandboxes Sandboxes
	// Proposals creates, reviews, applies and rejects proposals (sidecar/proposal).
	Proposals Proposals
	// Logs reads the JSONL event logs (sidecar/eventlog).
	Logs LogReader
	// NewRunEngine starts the run engine for a workspace; events go to sink.
	NewRunEngine func(workspace string, sink RunEventSink) (RunEngine, error)

	// Runs is the engine started for this session (set by the server).
	Runs RunEngine
}

func (s Services) withDefaults() Services {
	if s.EditFlow == nil {
		s.EditFlow = flow.Edit
	}
	if s.Patterns == nil {
		s.Patterns = libraryCatalog{}
	}
	if s.ExpandPattern == nil {
		s.ExpandPattern = expandPattern
	}
	if s.Sandboxes == nil {
		s.Sandboxes = sandboxService{}
	}
	if s.Proposals == nil {
		s.Proposals = proposalService{}
	}
	if s.Logs == nil {
		s.Logs = logService{}
	}
	return s
}

// available names the services present in this build (reported in initialize).
func (s Services) available() []string {
	var out []string
	add := func(ok bool, name string) {
		if ok {
			out = append(out, name)
		}
	}
	add(s.EditFlow != nil, "editFlow")
	add(s.ExpandPattern != nil, "insertPattern")
	add(s.Patterns != nil, "patterns")
	add(s.Sandboxes != nil, "sandboxes")
	add(s.Proposals != nil, "proposals")
	add(s.Logs != nil, "logs")
	add(s.NewRunEngine != nil, "runs")
	sort.Strings(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// PatternCatalog is the twenty interaction patterns.
type PatternCatalog interface {
	// List returns every pattern: {id:"P01", patternId, name, topology, roles, defaultTermination}.
	List(ctx context.Context) (any, error)
	// Doc returns a pattern's markdown documentation by id or alias ("P05", "debate_judge").
	Doc(idOrAlias string) (markdown string, ok bool)
	// Instantiate expands a pattern into a subgraph (agents, system nodes, the interaction,
	// positions) with ids fresh with respect to existing.
	Instantiate(ctx context.Context, p InstantiateParams) (any, error)
}

// InstantiateParams are agentcanvas/instantiatePattern's parameters, resolved.
type InstantiateParams struct {
	PatternID   string                `json:"patternId"`
	ExistingIDs []string              `json:"-"` // every id already in the flow
	Layout      map[string]flow.Point `json:"-"` // the flow's layout, to place the subgraph beside it
	Position    *Point                `json:"position,omitempty"`
	Prefix      string                `json:"prefix,omitempty"`
	Counts      map[string]int        `json:"counts,omitempty"` // role → instances
}

// Point is a canvas position.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Sandboxes prepares an agent's sandbox folders.
type Sandboxes interface {
	Prepare(ctx context.Context, p PrepareSandboxParams) (any, error)
}

// PrepareSandboxParams: agentcanvas/prepareSandbox.
type PrepareSandboxParams struct {
	Workspace string   `json:"-"`
	RunID     string   `json:"runId"`
	AgentID   string   `json:"agentId"`
	Files     []string `json:"files"`
	// Progress is called as files are copied (set by the server for $/progress).
	Progress func(done, total int) `json:"-"`
}

// Proposals is the proposal store of a workspace.
type Proposals interface {
	Create(ctx context.Context, p CreateProposalParams) (any, error)
	List(ctx context.Context, p ListProposalsParams) (any, error)
	Get(ctx context.Context, p ProposalRef) (any, error)
	Apply(ctx context.Context, p ApplyProposalParams) (any, error)
	Reject(ctx context.Context, p RejectProposalParams) (any, error)
}

// ProposalRef names one proposal: a run and an agent. Flow, when given, is the flow whose
// event log records what happens to the proposal.
type ProposalRef struct {
	Workspace string `json:"-"`
	RunID     string `json:"runId"`
	AgentID   string `json:"agentId"`
	Flow      string `json:"flow,omitempty"`
}

// CreateProposalParams: agentcanvas/createProposal.
type CreateProposalParams struct {
	ProposalRef
	Notes string `json:"notes,omitempty"`
}

// ListProposalsParams: agentcanvas/listProposals (filters are optional).
type ListProposalsParams struct {
	Workspace string `json:"-"`
	RunID     string `json:"runId,omitempty"`
	Status    string `json:"status,omitempty"`
}

// ApplyProposalParams: agentcanvas/applyProposal. An empty selection applies everything.
type ApplyProposalParams struct {
	ProposalRef
	// Files selects whole files by path; Hunks selects hunks by file and index.
	Files []string `json:"files,omitempty"`
	Hunks []struct {
		File  string `json:"file"`
		Index int    `json:"index"`
	} `json:"hunks,omitempty"`
	// Check only reports whether the selection would apply.
	Check bool `json:"check,omitempty"`
}

// RejectProposalParams: agentcanvas/rejectProposal.
type RejectProposalParams struct {
	ProposalRef
	Reason string `json:"reason,omitempty"`
}

// LogReader queries the JSONL event logs.
type LogReader interface {
	Query(ctx context.Context, p QueryLogsParams) (any, error)
}

// QueryLogsParams: agentcanvas/queryLogs.
type QueryLogsParams struct {
	Workspace string `json:"-"`
	Flow      string `json:"flow"`
	RunID     string `json:"runId,omitempty"`
	Event     string `json:"event,omitempty"`
	Since     string `json:"since,omitempty"` // RFC 3339
	Until     string `json:"until,omitempty"`
	Limit     int    `json:"limit,omitempty"`
}

// RunEngine runs flows. The run engine package implements it; until it lands the run
// methods answer "not available yet".
type RunEngine interface {
	Start(ctx context.Context, p StartRunParams) (RunInfo, error)
	Stop(ctx context.Context, runID string) error
	List(ctx context.Context) ([]RunInfo, error)
	Answer(ctx context.Context, p AnswerParams) error
	Provide(ctx context.Context, p DependencyParams) error
	Reject(ctx context.Context, p DependencyParams) error
	// Close stops every run (the session is ending).
	Close()
}

// RunEventSink receives run events; the server forwards each as agentcanvas/runEvent.
type RunEventSink func(RunEvent)

// RunEvent is one event of a run, as written to the JSONL log.
type RunEvent struct {
	Flow          string         `json:"flow"`
	RunID         string         `json:"runId"`
	Event         string         `json:"event"` // run_started, message, question, dependency_request, proposal, run_finished…
	TS            string         `json:"ts"`
	InteractionID string         `json:"interactionId,omitempty"`
	EdgeID        string         `json:"edgeId,omitempty"`
	AgentID       string         `json:"agentId,omitempty"`
	Data          map[string]any `json:"data,omitempty"`
}

// StartRunParams: agentcanvas/startRun.
type StartRunParams struct {
	Workspace      string `json:"-"`
	URI            string `json:"uri"`
	File           string `json:"-"` // the flow file, resolved from URI
	DryRun         bool   `json:"dryRun,omitempty"`
	NonInteractive bool   `json:"nonInteractive,omitempty"`
}

// RunInfo describes a run.
type RunInfo struct {
	RunID     string `json:"runId"`
	Flow      string `json:"flow"`
	State     string `json:"state"` // running, waiting, finished, failed, stopped
	StartedAt string `json:"startedAt"`
}

// AnswerParams: agentcanvas/answerQuestion.
type AnswerParams struct {
	RunID      string `json:"runId"`
	QuestionID string `json:"questionId"`
	Answer     string `json:"answer"`
}

// DependencyParams: agentcanvas/provideDependency and rejectDependency.
type DependencyParams struct {
	RunID     string `json:"runId"`
	RequestID string `json:"requestId"`
	Value     string `json:"value,omitempty"` // provideDependency: the value or an env var name
	Reason    string `json:"reason,omitempty"`
}
