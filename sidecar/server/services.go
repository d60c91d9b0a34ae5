package server

import (
	"context"
	"sort"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
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
	// Ledger reverts applies and tells where lines came from (sidecar/proposal's apply ledger).
	Ledger Ledger
	// Logs reads the JSONL event logs (sidecar/eventlog).
	Logs LogReader
	// NewRunEngine starts the run engine for a workspace; events go to sink, and limits gives
	// the person's current limits (the editor's settings) at each use.
	NewRunEngine func(workspace string, sink RunEventSink, limits func() engine.Limits) (RunEngine, error)

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
	if s.Ledger == nil {
		s.Ledger = ledgerService{}
	}
	if s.Logs == nil {
		s.Logs = logService{}
	}
	if s.NewRunEngine == nil {
		s.NewRunEngine = newManagerEngine
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
	add(s.Ledger != nil, "ledger")
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
	// Rules are the allowed and blocked folders of the settings (set by the server).
	Rules safepath.Rules `json:"-"`
	// Notice hears what the recovery before the copy did (set by the server: a notification).
	Notice func(string) `json:"-"`
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
	// Rules are the allowed and blocked folders of the settings (set by the server).
	Rules safepath.Rules `json:"-"`
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
	Files []string  `json:"files,omitempty"`
	Hunks []HunkRef `json:"hunks,omitempty"`
	// Merge picks hunks of the three-way merge of files the workspace has changed since the
	// proposal was made (index as getProposal's files[].merge.hunks number them); Resolve
	// settles their conflicts (take: mine, theirs, both, edit with text, markers); Against is
	// the workspace blob id each merge was reviewed against (files[].merge.workspace).
	Merge   []HunkRef `json:"merge,omitempty"`
	Resolve []struct {
		File  string `json:"file"`
		Index int    `json:"index"`
		Take  string `json:"take"`
		Text  string `json:"text,omitempty"`
	} `json:"resolve,omitempty"`
	Against map[string]string `json:"against,omitempty"`
	// Check only reports whether the selection would apply.
	Check bool `json:"check,omitempty"`
	// Confirm names the held files (getProposal's held: control files, names that look like
	// others) the person confirmed by name; an apply touching any other held file is refused
	// with the held files in the error's data.
	Confirm []string `json:"confirm,omitempty"`
	// Reviewed is getProposal's patchDigest of the review the person applies from: a patch
	// changed since is refused.
	Reviewed string `json:"reviewed,omitempty"`
}

// HunkRef names one hunk of one file.
type HunkRef struct {
	File  string `json:"file"`
	Index int    `json:"index"`
}

// Ledger is the workspace's apply ledger.
type Ledger interface {
	Revert(ctx context.Context, p RevertProposalParams) (any, error)
	Origins(ctx context.Context, p LineOriginsParams) (any, error)
}

// RevertProposalParams: agentcanvas/revertProposal. Entry names a ledger entry; without it, the
// proposal's latest apply is reverted.
type RevertProposalParams struct {
	ProposalRef
	Entry string `json:"entry,omitempty"`
	Check bool   `json:"check,omitempty"`
}

// LineOriginsParams: agentcanvas/lineOrigins. Text is the document as the editor holds it
// (unsaved edits included); without it the file on disk is read.
type LineOriginsParams struct {
	Workspace string  `json:"-"`
	URI       string  `json:"uri"`
	Text      *string `json:"text,omitempty"`
	File      string  `json:"-"` // workspace-relative, from URI
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

// RunEngine runs flows (default: sidecar/engine's Manager). Results are the engine's own
// values, encoded as JSON unchanged.
type RunEngine interface {
	// Start starts a run of f and returns at once with the run's description.
	Start(ctx context.Context, f *flow.Flow, p StartRunParams) (any, error)
	// StartSkill starts a run of p.Skill, likewise.
	StartSkill(ctx context.Context, p StartRunParams) (any, error)
	// StartRevision starts a revision run of a pending proposal (agentcanvas/requestChanges).
	StartRevision(ctx context.Context, req engine.RevisionRequest, p engine.StartParams) (any, error)
	Stop(ctx context.Context, runID string) error
	// List lists the runs: live ones and those on disk.
	List(ctx context.Context) (any, error)
	Answer(ctx context.Context, p AnswerParams) error
	Provide(ctx context.Context, p DependencyParams) error
	Reject(ctx context.Context, p DependencyParams) error
	// Close stops every run (the session is ending) and waits for them.
	Close()
}

// RunEventSink receives run events; the server forwards each as agentcanvas/runEvent, in
// the JSONL log's form.
type RunEventSink func(eventlog.Event)

// StartRunParams: agentcanvas/startRun.
type StartRunParams struct {
	flowRef
	Workspace string `json:"-"`
	DryRun    bool   `json:"dryRun,omitempty"`
	// Backend overrides every agent's backendId (auto, claude, codex, gemini, command, dry-run).
	Backend string `json:"backend,omitempty"`
	// Task is the user's request, given to the flow's first agents.
	Task string `json:"task,omitempty"`
	// ResumeRunID continues that interrupted run (completed interactions are kept).
	ResumeRunID string `json:"resumeRunId,omitempty"`
	// Env holds secret values from the editor's secret storage, by variable name. They reach
	// the agents' processes only: never logged, echoed or written to disk.
	Env map[string]string `json:"env,omitempty"`
	// Skill, instead of a flow (then uri is not needed): a person invokes a skill of
	// .agentcanvas/skills/; one agent (Backend, default auto) follows it in a sandbox.
	Skill *SkillParams `json:"skill,omitempty"`
}

// SkillParams: the skill a person invokes through startRun.
type SkillParams struct {
	Name      string   `json:"name"`
	Arguments string   `json:"arguments,omitempty"` // what the person asks for
	Files     []string `json:"files,omitempty"`     // workspace-relative; the agent's sandbox receives them
	Command   []string `json:"command,omitempty"`   // argv, for backend command
}

// AnswerParams: agentcanvas/answerQuestion (also approves a phase).
type AnswerParams struct {
	RunID      string `json:"runId"`
	QuestionID string `json:"questionId"`
	Answer     string `json:"answer"`
}

// DependencyParams: agentcanvas/provideDependency and rejectDependency.
type DependencyParams struct {
	RunID     string `json:"runId"`
	RequestID string `json:"requestId"`
	Value     string `json:"value,omitempty"` // provideDependency: never logged
	Reason    string `json:"reason,omitempty"`
}
