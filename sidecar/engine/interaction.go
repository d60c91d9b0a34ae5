package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// ictx is one interaction being executed: its nodes and roles, its bus, its termination
// and the helpers every executor uses to ask agents and record what happened.
type ictx struct {
	ctx context.Context
	r   *run
	in  *flow.Interaction
	pat string // canonical pattern id
	// since is the transcript's length when this run of the interaction began (its fork
	// points' Since, forkpoints.go).
	since  int
	term   *flow.Termination
	params map[string]any
	nodes  []string          // in order of first appearance on the edges
	roles  map[string]string // node id → lower-case role (agent role or system node type)
	cast   cast              // pattern role → the nodes playing it (cast.go)
	bus    *bus.Bus
	board  *bus.Blackboard

	mu        sync.Mutex
	st        termState
	step      int
	sessions  map[string]string // node → CLI session id, resumed on its next turn
	prepared  map[string]bool   // node → sandbox prepared
	questions map[string]int    // node → questions asked in its current phase
	reworks   map[string]int    // node → failed verifications of its current phase
	edgeOf    map[[2]string]string
	lastTo    map[string][2]string           // node → who last sent it a message, and the edge (sender.go)
	made      [][2]string                    // (node, proposal.json) of every proposal made in this interaction
	rejected  map[string]string              // node → the reviewer's latest REJECT of its handoff ("lead: why")
	turns     sync.Map                       // node → turnNote of its last turn (provenance.go)
	unhanded  map[string]string              // node → why its latest proposal came without a valid HANDOFF block
	failed    map[string]proposal.TestResult // node → its last failed test or verification: its next prompt quotes it, auto-apply holds its proposal
	diffs     map[string]string              // node → its proposal's fingerprint after its last step (handoff.go)
	talking   map[string]bool                // nodes asked for words only now (a bid): no edit expected (handoff.go)
	// roundCap ends the interaction after that many rounds (0: no cap): the flow's
	// params.round_cap (ownCap), else the engine's where the flow bounds neither rounds nor time.
	roundCap int
	ownCap   bool
	// spend is what the interaction's agents reported spending; limits its max_cost_usd and
	// max_tokens; stop ends the interaction when one is reached (spend.go).
	spend  Spend
	limits limits
	stop   context.CancelCauseFunc
}

// termState is what termination conditions are evaluated against.
type termState struct {
	Round     int
	Decided   bool
	Decision  string
	Consensus float64
	Metrics   map[string]float64 // quality-gate metrics: tests_passed, citations_count, score, tool_check_pass
	TimedOut  bool
	Done      string // a natural end of the pattern ("completed", "accepted", …)
}

func (r *run) runInteraction(parent context.Context, in *flow.Interaction) InteractionOutcome {
	c, topology := r.castInteraction(in)
	r.forkSpendOf(c) // a fork's interaction goes on from its spend (fork_replay.go)
	ctx, stop := context.WithCancelCause(parent)
	defer stop(nil)
	c.stop = stop
	var cancel context.CancelFunc
	if ms := timeoutMs(c.term, c.params); ms > 0 {
		ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		defer cancel()
	}
	c.ctx = ctx
	c.bus = c.newBus(topology)
	if ret := c.retention(); ret != nil {
		c.board = bus.NewBlackboard(*ret, r.now)
	}
	r.emit(in.ID, "", "interaction_started", map[string]any{"patternId": c.pat, "nodes": c.nodes})
	r.emit(in.ID, "", "configured", map[string]any{"data": map[string]any{"patternId": c.pat, "topology": topology, "nodes": c.nodes, "roles": c.roles, "cast": c.cast, "termination": c.term, "params": c.params}})
	return c.execute(parent)
}

// castInteraction sets an interaction up: its nodes and their roles, its termination and
// params, its round cap, and who plays which of the pattern's roles.
func (r *run) castInteraction(in *flow.Interaction) (c *ictx, topology string) {
	p, _ := pattern.Lookup(in.PatternID)
	c = &ictx{r: r, in: in, pat: p.PatternID, roles: map[string]string{}, params: map[string]any{}, sessions: map[string]string{}, prepared: map[string]bool{}, questions: map[string]int{}, reworks: map[string]int{}, edgeOf: map[[2]string]string{}, lastTo: map[string][2]string{}}
	c.st.Metrics = map[string]float64{}
	c.since = r.interactionSince(in.ID) // fork_replay.go
	c.term, c.params = in.Settings()
	c.roundCap, c.ownCap = flow.RoundCap(c.term, c.params, r.o.RoundCap)
	c.spend, c.limits = newSpend(), spendLimits(c.term).withParams(c.params)
	topology = p.Topology
	for _, e := range in.Edges {
		for _, id := range []string{e.Source, e.Target} {
			if _, ok := c.roles[id]; !ok {
				c.nodes = append(c.nodes, id)
				c.roles[id] = roleOf(r.f, id)
			}
		}
		if e.Data.Topology != "" {
			topology = e.Data.Topology
		}
		c.edgeOf[[2]string{e.Source, e.Target}] = e.ID
	}
	c.cast = c.castRoles()
	if v := verifierOf(r.f, c.params); v != "" && c.roles[v] == "" {
		c.roles[v] = roleOf(r.f, v) // a verifier outside the interaction's edges (verifier.go)
	}
	return c, topology
}

// newBus is the interaction's message bus: its topology, the pattern's routes and the drawn
// edges as its access rules (acl.go), its rate limit, the run's signing key.
func (c *ictx) newBus(topology string) *bus.Bus {
	return bus.New(bus.Config{Topology: topology, Members: c.nodes, Hub: c.hub(), Stages: c.chain(), Tags: c.tags(),
		RateLimitPerMin: c.rateLimit(), Window: c.r.o.rateWindow, Observe: c.busEvent, Key: c.r.key, Now: c.r.now, ACL: c.acl(), Links: c.links()})
}

// execute runs the interaction's executor and ends it: the outcome, its terminated event,
// auto-apply.
func (c *ictx) execute(parent context.Context) InteractionOutcome {
	r, in, ctx := c.r, c.in, c.ctx
	exec := executors[c.pat]
	var result string
	var err error
	if exec == nil {
		err = fmt.Errorf("pattern %q has no executor", in.PatternID)
	} else {
		result, err = c.safely(exec)
	}
	c.closeRoutes() // gateway.go
	c.bus.DropHeld("the interaction ended before the rate limit let it through")
	r.metrics.addBus(c.bus.Metrics())
	r.fp.busEnded(in.ID, c.bus.Metrics()) // kept with the fork points (forkpoints.go)

	out := InteractionOutcome{ID: in.ID, PatternID: c.pat, Rounds: c.st.Round, Result: result}
	var limit *spendLimitError
	switch {
	case errors.As(context.Cause(ctx), &limit) && parent.Err() == nil:
		out.Status, out.Reason = StatusCompleted, limit.condition
		if result == "" {
			out.Result = fmt.Sprintf("%s reached after %d round(s)", limit.condition, c.st.Round)
		}
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil:
		out.Status, out.Reason = StatusCompleted, "timeout_ms"
		if result == "" {
			out.Result = "timed out after " + fmt.Sprint(c.st.Round) + " round(s)"
		}
	case parent.Err() != nil:
		out.Status, out.Reason = StatusStopped, stopReason(parent)
	case err != nil:
		out.Status, out.Reason, out.Error = StatusFailed, failReason(err), err.Error()
	default:
		out.Status, out.Reason = StatusCompleted, firstNonEmpty(c.reason(), c.st.Done, "completed")
	}
	if sp := c.spent(); sp.Tokens > 0 || sp.CostUSD > 0 || len(sp.Unreported) > 0 {
		out.Spend = &sp
	}
	fields := map[string]any{"reason": out.Reason, "rounds": out.Rounds, "status": out.Status}
	if out.Spend != nil {
		fields["spend"] = out.Spend
	}
	if out.Result != "" {
		fields["result"] = truncate(out.Result, 2000)
	}
	if out.Error != "" {
		fields["error"] = out.Error
	}
	r.emit(in.ID, "", "terminated", fields)
	c.autoApply(out)
	return out
}

// safely runs an executor, turning a panic into an error (a bug must not take the sidecar down).
func (c *ictx) safely(exec executor) (res string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error in the %s executor: %v", c.pat, p)
		}
	}()
	return exec(c)
}

// roleOf is a node's role: the system node type, or the agent's role, in lower case.
func roleOf(f *flow.Flow, id string) string {
	n, ok := f.NodeByID(id)
	switch {
	case !ok:
		return ""
	case n.System != nil:
		return strings.ToLower(strings.TrimSpace(n.System.Type + " " + n.System.Role))
	default:
		return strings.ToLower(strings.TrimSpace(n.Agent.Role))
	}
}

// names maps nodes to their display names (for replies that name an agent by its name).
func (c *ictx) names(ids []string) map[string]string {
	out := map[string]string{}
	for _, id := range ids {
		if n, ok := c.r.f.NodeByID(id); ok && n.Agent != nil {
			out[id] = n.Agent.Name
		} else if ok && n.System != nil {
			out[id] = n.System.Name
		}
	}
	return out
}

// byRole returns the nodes whose role contains any of the words, in node order.
func (c *ictx) byRole(words ...string) []string {
	var out []string
	for _, id := range c.nodes {
		for _, w := range words {
			if strings.Contains(c.roles[id], w) {
				out = append(out, id)
				break
			}
		}
	}
	return out
}

// others returns the nodes not in except.
func (c *ictx) others(except ...string) []string {
	skip := map[string]bool{}
	for _, e := range except {
		skip[e] = true
	}
	var out []string
	for _, id := range c.nodes {
		if !skip[id] {
			out = append(out, id)
		}
	}
	return out
}

// one returns the first node with a role among words, else fallback.
func (c *ictx) one(fallback string, words ...string) string {
	if ids := c.byRole(words...); len(ids) > 0 {
		return ids[0]
	}
	return fallback
}

// hub is the node spokes talk through: a tree (P15) has none (every manager is a hub of
// its own subtree, which the drawn edges express), and in memory sync (P19) the curator is.
func (c *ictx) hub() string {
	switch c.pat {
	case "hierarchical_tree":
		return ""
	case "memory_sync":
		if ids := c.byRole("curator"); len(ids) > 0 {
			return ids[0]
		}
	}
	for _, w := range []string{"blackboard", "broker", "router", "manager", "orchestrator"} {
		if ids := c.byRole(w); len(ids) > 0 {
			return ids[0]
		}
	}
	return ""
}

// chain orders the nodes along the edges (a pipeline): start from a node nobody points to.
func (c *ictx) chain() []string {
	next := map[string]string{}
	into := map[string]bool{}
	for _, e := range c.in.Edges {
		if e.Source == e.Target {
			continue
		}
		if _, ok := next[e.Source]; !ok {
			next[e.Source] = e.Target
		}
		into[e.Target] = true
	}
	start := ""
	for _, id := range c.nodes {
		if !into[id] {
			start = id
			break
		}
	}
	if start == "" && len(c.nodes) > 0 {
		start = c.nodes[0]
	}
	var out []string
	seen := map[string]bool{}
	for id := start; id != "" && !seen[id]; id = next[id] {
		seen[id] = true
		out = append(out, id)
	}
	for _, id := range c.nodes { // nodes off the main chain go last
		if !seen[id] {
			out = append(out, id)
		}
	}
	return out
}

// tags lets router_targeted deliver by role: every node carries its role and its id.
func (c *ictx) tags() map[string][]string {
	t := map[string][]string{}
	for id, role := range c.roles {
		t[id] = []string{role, id}
	}
	return t
}

// --- asking agents ---------------------------------------------------------------------------

// Reply is what one agent step produced, read for the structured lines patterns use.
type Reply struct {
	Node    string
	Text    string
	Handoff map[string]any // the last valid HANDOFF block's fields
	// HandoffError says why the agent's HANDOFF block was invalid ("" for none or a valid one).
	HandoffError string
	// Changed are the files its sandbox's proposal changes, after the step (sandboxed agents).
	Changed []string
	// Missing are the needed lines the reply lacks even after its repair turn.
	Missing   []string
	Failed    bool
	Reason    string
	sandboxed bool // the agent works in its sandbox's work/ folder
}

// ask runs one step of node: a turn with prompt and, when its reply lacks a line the step
// needs, one repair turn asking for exactly those lines (need.go). Then whatever the agent
// changed in its sandbox goes to review (collect). from is who is asking (the node or the
// engine, "") for the log and the bus. A reply still lacking a needed line comes back with a
// *MissingLineError (and Missing set); steps that can do without it go on (hard).
func (c *ictx) ask(from, node, prompt string, needs ...need) (*Reply, error) {
	rep, err := c.turn(from, node, prompt)
	if err == nil && len(needs) > 0 {
		if missing := unmet(rep.Text, needs); len(missing) > 0 {
			c.note("reply_repair", map[string]any{"agent": node, "missing": lines(missing)})
			c.r.metrics.addRetries(node, RetryReplyRepair, 1)
			again, aerr := c.turn(from, node, c.repairPrompt(node, prompt, rep.Text, missing))
			if again != nil {
				if again.Handoff == nil && again.HandoffError == "" { // the first turn's block still counts
					again.Handoff, again.HandoffError = rep.Handoff, rep.HandoffError
				}
				rep = again
			}
			if err = aerr; err == nil {
				rep.Missing = lines(unmet(rep.Text, needs))
			}
		}
	}
	if rep != nil {
		c.collect(rep)
	}
	if err == nil && len(rep.Missing) > 0 {
		err = &MissingLineError{Agent: node, Lines: rep.Missing}
	}
	return rep, err
}

// turn runs one turn of node with prompt, logging the step and the messages, and waits for
// its reply.
func (c *ictx) turn(from, node, prompt string) (*Reply, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, err
	}
	spec, err := c.spec(node)
	if err != nil {
		return nil, err
	}
	nth := c.r.fp.next(c.in.ID, node)
	replay := c.r.replayed(c.in.ID, node, nth) // a fork's turn it replays (fork_replay.go)
	if err := c.pace(replay); err != nil {
		return nil, err
	}
	// What other agents wrote reaches this one without their secrets (secrets.go).
	prompt = c.r.secrets.str(prompt)
	who, edge := c.sender(from, node)
	c.send(from, node, "prompt", map[string]any{"bytes": len(prompt)}, "")
	started := map[string]any{"agent": node, "from": who, "round": c.st.Round, "backend": spec.BackendID}
	if len(spec.UnixSockets) > 0 {
		// Shown in review: the grant opens every pathname Unix socket to the agent.
		started["unixSockets"] = runtime.UnixSocketGrants(spec.Workspace, spec.UnixSockets)
	}
	c.r.emit(c.in.ID, edge, "agent_started", started)
	c.r.flushLog()
	rec := turnRecord{from: who, node: node, backend: spec.BackendID, prompt: prompt, started: c.r.now()}
	var out processOut
	if loop := c.sessionLoop(node); replay != nil {
		out, err = c.replay(node, replay)
	} else if loop != nil {
		out, err = c.runSessions(spec, node, edge, prompt, loop)
	} else {
		var proc *runtime.Process
		if proc, err = runtime.Start(c.ctx, spec, prompt); err == nil {
			out = c.follow(proc, node, edge, spec.BackendID, true)
		}
	}
	if err != nil {
		c.r.emit(c.in.ID, edge, "agent_finished", map[string]any{"agent": node, "status": "failed", "error": err.Error()})
		// Not sent, and with no process there is no redactor for it; err is scrubbed.
		rec.prompt = ""
		c.keepTurn(rec, processOut{res: runtime.Result{Status: runtime.StatusFailed, Reason: err.Error()}}, spec, nth, replay)
		return nil, fmt.Errorf("agent %s: %w", node, err)
	}
	rec.prompt = out.scrub(prompt) // the run's secrets are out of it already
	rec.stderr = out.stderrAll
	rec.tools, rec.said = out.scrubTools(), out.scrub(out.said)
	c.keepTurn(rec, out, spec, nth, replay)
	res, handoffErr, stderr := out.res, out.handoffErr, out.stderr
	c.noteTurn(node, prompt, res)
	// The reply is read as the agent wrote it: redaction never changes what a line says. What
	// leaves the engine is redacted where it leaves (secrets.go).
	rep := &Reply{Node: node, Text: res.RawReply(), Handoff: res.Handoff, sandboxed: spec.SandboxWork != ""}
	if res.Handoff == nil {
		rep.HandoffError = handoffErr
	}
	c.mu.Lock()
	c.step++
	step := c.step
	c.mu.Unlock()
	fields := map[string]any{"step": step, "from": who, "to": node, "round": c.st.Round, "backend": res.Backend, "note": truncate(firstLine(res.Reply), 200)}
	if res.Status != runtime.StatusCompleted {
		rep.Failed, rep.Reason = true, firstNonEmpty(res.Reason, string(res.Status))
		fields["failed"] = rep.Reason
	}
	c.r.emit(c.in.ID, edge, "step", fields)
	c.r.emit(c.in.ID, edge, "agent_finished", finishedFields(node, res, stderr))
	if c.ctx.Err() != nil {
		return rep, c.ctx.Err()
	}
	if rep.Failed {
		return rep, fmt.Errorf("agent %s failed: %s", node, rep.Reason)
	}
	c.send(node, from, "reply", map[string]any{"text": truncate(res.Reply, 4000)}, "")
	return rep, nil
}

// askAll asks several nodes in parallel (independent answers) and returns replies in order;
// each step needs what needs say (ask).
func (c *ictx) askAll(from string, nodes []string, prompt func(node string) string, needs ...need) ([]*Reply, error) {
	reps := make([]*Reply, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func(i int, n string) {
			defer wg.Done()
			reps[i], errs[i] = c.ask(from, n, prompt(n), needs...)
		}(i, n)
	}
	wg.Wait()
	return reps, errors.Join(errs...)
}

// send puts a message on the interaction's bus and logs it; refusals are logged, not fatal.
func (c *ictx) send(from, to, typ string, payload any, parent string) {
	if from == "" || to == "" || from == to {
		return // the engine itself is not on the bus, and a node playing two parts (P18's
		// executor when no observer is drawn) does not message itself
	}
	edge := c.edgeBetween(from, to)
	e := &bus.Envelope{From: from, To: bus.Recipients{to}, Type: typ, Priority: c.priority(), Payload: payload, Context: bus.Context{InteractionID: c.in.ID, EdgeID: edge, ParentMessageID: parent, ThreadID: c.r.id + "/" + c.in.ID}}
	if _, err := c.bus.Send(e); err != nil {
		c.r.emit(c.in.ID, edge, "message_refused", map[string]any{"from": from, "to": to, "type": typ, "error": err.Error()})
		return
	}
	c.r.emit(c.in.ID, edge, "message", map[string]any{"id": e.ID, "from": from, "to": to, "type": typ, "priority": e.Priority})
	c.heard(to, from)
	c.awaitOwn(e.ID)  // held by the rate limit: what it carries waits with it
	c.bus.Receive(to) // delivered: the agent reads it in its prompt
}

// priority is the envelope priority of the interaction's messages: params.priority
// (critical, high, medium or low; validate refuses another), else medium.
func (c *ictx) priority() string {
	if p := strings.ToLower(str(c.params["priority"])); slices.Contains(bus.Priorities, p) {
		return p
	}
	return "medium"
}

// spec builds the runtime spec of a node for this turn.
func (c *ictx) spec(node string) (runtime.Spec, error) {
	n, ok := c.r.f.NodeByID(node)
	if !ok {
		return runtime.Spec{}, fmt.Errorf("unknown node %q", node)
	}
	var rt *flow.Runtime
	var files []string
	if n.Agent != nil {
		rt, files = n.Agent.Runtime, n.Agent.Files
	} else {
		rt = n.System.Runtime
	}
	if rt == nil {
		rt = &flow.Runtime{}
	}
	setup := false // runtime.setup is due: the sandbox was prepared just now
	s := runtime.Spec{RunID: c.r.id, AgentID: node, Role: c.roles[node], InteractionID: c.in.ID, Round: c.st.Round,
		BackendID: rt.BackendID, Command: rt.Command, CwdMode: rt.CwdMode, Workspace: c.r.o.Workspace,
		Model: rt.Model, MaxTurns: rt.MaxTurns, AllowedTools: rt.AllowedTools, PermissionMode: rt.PermissionMode, StopGrace: c.r.o.StopGrace,
		CodexSandbox: rt.CodexSandbox, GeminiApprovalMode: rt.GeminiApprovalMode, Interactive: rt.Interactive, PauseOnPhaseComplete: true,
		Confine: c.r.limits().confineMode(), Network: rt.Network, UnixSockets: rt.UnixSockets, DependencyTimeout: c.r.dependencyTimeout()}
	// "auto" as an override means each node keeps its own backend (the editor's default pick).
	if c.r.o.Backend != "" && c.r.o.Backend != "auto" {
		s.BackendID = c.r.o.Backend
	}
	if c.r.o.DryRun {
		s.BackendID = runtime.BackendDryRun
	}
	if s.BackendID == "" {
		s.BackendID = "auto"
	}
	if s.BackendID == runtime.BackendCommand {
		cmd, err := runtime.ResolveCommand(c.r.o.Workspace, s.Command)
		if err != nil {
			return s, fmt.Errorf("agent %s: %w", node, err)
		}
		s.Command = cmd
	}
	if s.CwdMode == "" {
		s.CwdMode = runtime.CwdWorkspace
		if isWorker(c.roles[node]) {
			s.CwdMode = runtime.CwdAgentHome
		}
	}
	// Role defaults for the CLIs' permission settings the flow leaves unset: a worker may
	// edit its own sandbox, everything else only reads.
	s.Access = runtime.AccessReadOnly
	if isWorker(c.roles[node]) && s.CwdMode == runtime.CwdAgentHome {
		s.Access = runtime.AccessEdit
	}
	if s.CwdMode == runtime.CwdAgentHome {
		work, fresh, err := c.sandbox(node, files, rt.Shared)
		if err != nil {
			return s, err
		}
		if fresh {
			c.r.snapshotPrepared(node) // its base, for forks (forkpoints_snap.go)
		}
		s.SandboxWork = work
		if s.SharedFolders, err = sharedFolders(c.r.o.Workspace, c.r.sandboxRun(node), node); err != nil {
			return s, err
		}
		setup = fresh && len(rt.Setup) > 0
	}
	c.mu.Lock()
	s.ResumeSession = c.sessions[node]
	c.mu.Unlock()
	c.revisionSession(node, &s) // session.go
	envNames := append(slices.Clone(rt.Env), rt.Secrets...)
	if n.Agent != nil && len(n.Agent.MCP) > 0 { // spec §7.3: only allowlisted, defined servers
		s.MCPServers = c.r.mcpServers(c.in.ID, node, n.Agent.MCP)
		envNames = append(envNames, mcpEnvNames(s.MCPServers)...)
	}
	env, err := runtime.ResolveEnv(dedupe(envNames), c.r.o.Env, os.LookupEnv)
	if err != nil {
		return s, fmt.Errorf("agent %s: %w", node, err)
	}
	c.warnUnsetEnv(node, rt.Env, env) // envcheck.go
	s.Env, s.SecretEnv = env, secretNames(env, c.r.o.Env, rt.Secrets, mcpEnvNames(s.MCPServers))
	c.r.learnSecrets(s.Env, s.SecretEnv)
	if err := c.routeThroughGateway(node, &s, rt); err != nil { // gateway.go
		return s, err
	}
	s.Hidden = c.r.hiddenSkills() // disable-model-invocation: out of every agent's reach
	s.Checkpoint = func(p runtime.Pending) error { c.r.checkpoint(); return nil }
	if setup { // with the agent's environment, now resolved
		if err := c.setup(node, s, rt.Setup); err != nil {
			return s, err
		}
	}
	return s, nil
}

func isWorker(role string) bool { return flow.IsWorkerRole(role) }

// sandbox prepares a node's sandbox once per run and returns its work/ folder; fresh is true
// when this call prepared it.
func (c *ictx) sandbox(node string, files, shared []string) (work string, fresh bool, err error) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	paths, err := sandbox.PathsFor(c.r.o.Workspace, c.r.sandboxRun(node), node)
	if err != nil {
		return "", false, err
	}
	if st, err := os.Stat(paths.WorkDir); err == nil && st.IsDir() {
		return paths.WorkDir, false, nil
	}
	if c.r.sandboxRun(node) != c.r.id {
		return "", false, fmt.Errorf("agent %s: the sandbox of run %s is gone (%s)", node, c.r.sandboxRun(node), paths.WorkDir)
	}
	// A file the flow names that does not exist yet is one the worker is to create: it
	// starts without it (said in the log). Unsafe paths are still refused, present or not.
	rules := c.r.limits().Rules
	var present []string
	for _, f := range files {
		if f == sandbox.WholeWorkspace {
			present = append(present, f)
			continue
		}
		if _, err := safepath.Clean(f, rules); err != nil {
			reason := err.Error()
			if pe := (*safepath.Error)(nil); errors.As(err, &pe) {
				reason = pe.Reason
			}
			return "", false, fmt.Errorf("agent %s: sandbox: %w", node, &sandbox.RefusedError{Path: f, Reason: reason})
		}
		if _, err := os.Lstat(filepath.Join(c.r.o.Workspace, filepath.FromSlash(f))); err != nil && os.IsNotExist(err) {
			c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "message": f + " does not exist in the workspace yet; the agent starts without it"})
			continue
		}
		present = append(present, f)
	}
	shared = c.presentShared(node, shared)
	c.r.emit(c.in.ID, "", "sandbox_prepared", map[string]any{"agent": node, "files": present, "shared": shared})
	notice := func(n string) { c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "message": n}) }
	if _, err := sandbox.Prepare(c.ctx, sandbox.Options{Workspace: c.r.o.Workspace, RunID: c.r.id, AgentID: node, Files: present, AllowEmpty: true, Rules: rules, Shared: shared, Notice: notice}); err != nil {
		return "", false, fmt.Errorf("agent %s: sandbox: %w", node, err)
	}
	return paths.WorkDir, true, nil
}

// proposal turns what node changed in its sandbox into a proposal (notes: from its HANDOFF
// when it wrote one) and reviews it (a check against the workspace, with the person's folder
// rules). When work/ does not differ from input/ the result changes no file, and nothing is
// written unless an earlier proposal of the node is to be brought up to date. Whether it is
// applied without a person is decided when the interaction ends (autoApply).
func (c *ictx) proposal(ctx context.Context, node, notes string) (*proposal.Created, error) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	defer c.r.logThrough()() // proposal.Create, Check and Apply log to the same file: keep the order
	dir, _ := sandbox.RelDir(c.r.sandboxRun(node), node)
	ref := filepath.ToSlash(filepath.Join(dir, "proposal", "proposal.json"))
	cr, err := proposal.Create(ctx, proposal.CreateOptions{Workspace: c.r.o.Workspace, RunID: c.r.sandboxRun(node), AgentID: node, Notes: notes, Flow: c.r.f.Name,
		SkipUnchanged: !slices.Contains(c.r.proposals, ref), Origin: c.originOf(node)})
	if err != nil {
		c.r.emit(c.in.ID, "", "error", map[string]any{"agent": node, "message": "proposal: " + err.Error()})
		return nil, err
	}
	if len(cr.Proposal.ChangedFiles) == 0 {
		return cr, nil
	}
	c.mu.Lock()
	if !slices.Contains(c.made, [2]string{node, ref}) {
		c.made = append(c.made, [2]string{node, ref})
	}
	c.mu.Unlock()
	if slices.Contains(c.r.proposals, ref) {
		return cr, nil
	}
	c.r.proposals = append(c.r.proposals, ref)
	// proposal.Create logged proposal_created itself; the sink (stdout, runEvent) hears of it here.
	if c.r.o.Sink != nil {
		c.r.o.Sink(eventlog.Event{TS: c.r.now().UnixMilli(), Flow: c.r.f.Name, RunID: c.r.id, InteractionID: c.in.ID, Event: "proposal_created",
			Fields: map[string]any{"agent": node, "proposal": ref, "changedFiles": cr.Proposal.ChangedFiles, "conflicts": len(cr.Collisions)}})
	}
	c.forwardConflicts(node, ref, cr)
	res, err := proposal.Check(ctx, c.r.o.Workspace, ref, proposal.Selection{}, proposal.ApplyOptions{Flow: c.r.f.Name, Rules: c.r.limits().Rules, Reviewing: true})
	ok := err == nil && res != nil && len(res.Problems) == 0
	fields := map[string]any{"agent": node, "proposal": ref, "applicable": ok, "reviewer": "engine", "conflicts": len(cr.Collisions)}
	if res != nil && len(res.Problems) > 0 {
		fields["problems"] = res.Problems
	}
	if res != nil && len(res.Held) > 0 {
		fields["held"] = res.Held // files a person confirms by name: auto-apply never applies them
	}
	c.r.emit(c.in.ID, "", "proposal_reviewed", fields)
	return cr, nil
}

// autoApply runs when the interaction has ended, if the flow's policy.autoApply asks for it:
// each proposal the interaction's workers made is checked again (an earlier one may have
// changed the workspace) and applied when the interaction completed, its quality gate (if
// any) holds at its end, and the person's limit allows it (Limits.autoApplyHeld, decided on
// the apply's own check with the workspace lock held, so that another writer cannot change
// the workspace between the decision and the apply); otherwise proposal_held says why. Deciding at the end rather than at the handoff is what lets a gate
// that a reviewer sets after the workers' handoffs (P01's tests_passed) count.
func (c *ictx) autoApply(out InteractionOutcome) {
	if !c.r.f.Policy.AutoApply {
		return
	}
	c.mu.Lock()
	made := slices.Clone(c.made)
	c.mu.Unlock()
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	defer c.r.logThrough()() // proposal.Check and Apply log to the same file: keep the order
	// The interaction's own context may have ended with its timeout.
	ctx := c.r.ctx
	for _, m := range made {
		node, ref := m[0], m[1]
		lim := c.r.limits()
		o := proposal.ApplyOptions{Flow: c.r.f.Name, Rules: lim.Rules}
		held := "the interaction " + out.Status
		c.mu.Lock()
		why, rejected := c.rejected[node]
		unhanded, noHandoff := c.unhanded[node]
		c.mu.Unlock()
		switch {
		case rejected:
			held = "rejected in review by " + why
		case noHandoff:
			held = unhanded
		case out.Status == StatusCompleted:
			held = ""
		}
		o.Accept = func(res *proposal.Result) string {
			if why := lim.autoApplyHeld(c.gatePassed(), res, nil); why != "" {
				return why
			}
			if failed, ok := c.failedCheck(node); ok { // whatever the gate reads
				return "its " + failed.What() + " failed: " + failed.Outcome()
			}
			return ""
		}
		var applied *proposal.Result
		var err error
		if held == "" {
			applied, err = proposal.Apply(ctx, c.r.o.Workspace, ref, proposal.Selection{}, o)
			var he *proposal.HeldError
			var refused *proposal.RefusedError
			switch {
			case errors.As(err, &he):
				held = he.Reason
			case errors.As(err, &refused) && refused.Applied != "":
				// Applied before (a resumed run whose apply came just before its kill): the
				// ledger says so, and it is not applied twice.
				c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "proposal": ref, "message": fmt.Sprintf("%s's proposal was applied already (ledger entry %s); it is not applied again", node, refused.Applied)})
				continue
			case errors.As(err, &refused):
				held = lim.autoApplyHeld(true, nil, err)
			}
		}
		if held != "" {
			fields := map[string]any{"agent": node, "proposal": ref, "reason": held}
			var he *proposal.HeldError
			if errors.As(err, &he) && len(he.Held) > 0 {
				fields["held"] = he.Held
			}
			c.r.emit(c.in.ID, "", "proposal_held", fields)
			continue
		}
		if err != nil {
			c.r.emit(c.in.ID, "", "error", map[string]any{"agent": node, "message": "auto-apply: " + err.Error()})
			continue
		}
		// proposal.Apply logged proposal_applied itself; the sink hears of it here.
		if c.r.o.Sink != nil {
			c.r.o.Sink(eventlog.Event{TS: c.r.now().UnixMilli(), Flow: c.r.f.Name, RunID: c.r.id, InteractionID: c.in.ID, Event: "proposal_applied",
				Fields: map[string]any{"agent": node, "proposal": ref, "files": applied.Files, "warnings": applied.Warnings}})
		}
	}
}

// gateReads: the flow's termination has a quality gate on metric.
func (c *ictx) gateReads(metric string) bool {
	reads := false
	c.term.Walk(func(t *flow.Termination) {
		if t.Type == "quality_gate" && t.Metric == metric {
			reads = true
		}
	})
	return reads
}

// gatePassed: a flow's quality gate, if any, holds now.
func (c *ictx) gatePassed() bool {
	ok := true
	c.term.Walk(func(t *flow.Termination) {
		if t.Type == "quality_gate" && !c.gateHolds(t) {
			ok = false
		}
	})
	return ok
}

func (c *ictx) handlePending(p *runtime.Process, node string, pend *runtime.Pending) {
	if pend == nil {
		return
	}
	// The request is matched (--answers) and answered on its fields as the agent printed them;
	// it is shown, logged and kept redacted (Request.MarshalJSON, emit).
	req := Request{RunID: c.r.id, AgentID: node, InteractionID: c.in.ID, ID: pend.ID, Kind: string(pend.Kind), Fields: pend.RawFields(), Deadline: pend.Deadline, redact: &c.r.secrets}
	if req.Kind == "error" { // put as a question with its three answers, wherever it is asked
		req.Fields = maps.Clone(req.Fields)
		req.Fields["question"], req.Fields["options"] = errorQuestion(req), slices.Clone(runtime.RecoveryChoices)
	}
	// More than three questions in one phase means the agent is not working on its own
	// (agent-stdout-protocols.md): said in the log, not refused.
	c.mu.Lock()
	switch req.Kind {
	case "question":
		c.questions[node]++
		if c.questions[node] == 4 {
			c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "message": node + " has asked more than three questions in one phase"})
		}
	case "phase_complete":
		c.questions[node] = 0
	}
	c.mu.Unlock()
	kindEvent := map[string]string{"question": "question_asked", "dependency": "dependency_requested", "phase_complete": "phase_completed", "error": "recovery_asked"}[req.Kind]
	if req.Kind == "phase_complete" {
		resolved, verification := c.verifyPhase(p, node, pend)
		if resolved {
			return // sent back for rework, or failed: no approval to ask for
		}
		if verification != nil { // shown with the approval, and kept with the checkpoint
			req.Fields = maps.Clone(req.Fields)
			req.Fields["verification"] = verification
		}
	}
	c.r.mu.Lock()
	c.r.state.Pending = append(c.r.state.Pending, req)
	c.r.mu.Unlock()
	c.r.checkpoint()
	human := c.r.o.Human
	if human == nil {
		human = NonInteractive{}
	}
	// The request's event is logged once it can take an answer (a client answers on it),
	// or after Ask failed before it could: every request is logged before its outcome.
	var once sync.Once
	asked := func() {
		once.Do(func() {
			fields := map[string]any{"agent": node, "id": pend.ID, "fields": publicFields(req)}
			if !req.Deadline.IsZero() {
				fields["deadline"] = req.Deadline.UTC().Format(time.RFC3339)
			}
			c.r.emit(c.in.ID, "", kindEvent, fields)
			c.r.flushLog() // a person may take hours: the log says what the run waits for
		})
	}
	var resp Response
	var err error
	outcome := "answered"
	switch req.Kind {
	case "dependency":
		resp, outcome, err = c.askDependency(p, human, &req, asked)
	case "error":
		outcome, err = c.askRecovery(p, human, &req, asked)
	default:
		resp, err = human.Ask(c.ctx, req, asked)
	}
	asked()
	if c.r.sessionEnded() {
		return // the request stays in the checkpoint: the next session resumes and asks again
	}
	c.r.mu.Lock()
	for i, q := range c.r.state.Pending {
		if q.ID == req.ID && q.AgentID == node {
			c.r.state.Pending = append(c.r.state.Pending[:i], c.r.state.Pending[i+1:]...)
			break
		}
	}
	c.r.mu.Unlock()
	fields := map[string]any{"agent": node, "id": pend.ID}
	switch {
	case req.Kind == "dependency":
		c.dependencyOutcome(fields, req, resp, outcome)
		outcome, err = fields["outcome"].(string), nil
	case req.Kind == "error":
		err = nil // the choice was carried out (askRecovery); the outcome names it
	case err != nil:
		outcome = "failed: " + err.Error()
		p.Stop(err.Error())
	case req.Kind == "question":
		err = p.Answer(pend.ID, resp.Value)
	default:
		if resp.Reject {
			outcome = "not approved"
			p.Stop("phase not approved")
		} else {
			err = p.Continue(pend.ID)
		}
	}
	if err != nil && outcome == "answered" {
		outcome = "error: " + err.Error()
	}
	// The value itself is never logged: secrets reach only the agent.
	resolved := map[string]string{"question": "question_answered", "dependency": "dependency_resolved", "phase_complete": "phase_resolved", "error": "recovery_resolved"}[req.Kind]
	fields["outcome"] = outcome
	c.r.emit(c.in.ID, "", resolved, fields)
	c.r.checkpoint()
}

// maxReworks is how often a phase that fails verification is sent back before the agent
// fails (agent-stdout-protocols.md §3).
const maxReworks = 3

// verifyPhase runs the interaction's verifiers on a completed phase: params.verify_command in
// the agent's working folder, as that agent (runtime.RunCommand: its rules and environment,
// since it runs on the agent's files), then the verifier agent (params.verifier,
// verifier.go). A failure sends the phase back for rework with the verifier's output, at most
// maxReworks times; then the agent is stopped. It reports whether it resolved the pause
// itself (true), or the phase passed (or there is no verifier) and the user's approval is
// still to be asked (false), with what the verification found for the approval to show.
func (c *ictx) verifyPhase(p *runtime.Process, node string, pend *runtime.Pending) (resolved bool, verification any) {
	argv := commandParam(c.params["verify_command"])
	if len(argv) == 0 {
		return c.verifyByAgent(p, node, pend, false) // verifier.go
	}
	spec, err := c.spec(node)
	if err != nil {
		return false, nil
	}
	c.r.flushLog()
	res, runErr := runtime.RunCommand(c.ctx, runtime.Command{Agent: spec, Argv: argv, Timeout: 10 * time.Minute, MaxOutput: 64 << 10})
	for _, msg := range res.Warnings {
		c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "message": "verify_command: " + msg})
	}
	if spec.CwdMode == runtime.CwdAgentHome && spec.SandboxWork != "" { // kept with the proposal, for its review (tests_record.go)
		c.recordTest(node, proposal.TestKindVerify, argv, commandRun{res: res, err: runErr})
	}
	out := res.Output
	if runErr == nil {
		runErr = verifierExit(res, out)
	}
	passed := runErr == nil
	n := c.countRework(node, passed)
	c.r.emit(c.in.ID, "", "phase_verified", map[string]any{"agent": node, "id": pend.ID, "passed": passed, "command": argv, "output": truncate(string(out), 2000), "reworks": n})
	if passed {
		return c.verifyByAgent(p, node, pend, true) // and the verifier agent, when there is one
	}
	return c.rework(p, node, pend, n, fmt.Sprintf("The verifier `%s` failed (%v).\n%s", strings.Join(argv, " "), runErr, truncate(string(out), 4000))), nil
}

// verifierExit says how a verifier that ran failed, or nil when it passed: it exited 0 by
// itself and its output reports no failed test in a test runner's own words (a runner that
// prints "not ok 1" and exits 0 has not passed).
func verifierExit(res runtime.CommandResult, out []byte) error {
	switch {
	case res.TimedOut:
		return errors.New("timed out")
	case res.Stopped:
		return errors.New("stopped")
	case res.ExitCode != 0:
		return fmt.Errorf("exit status %d", res.ExitCode)
	case len(proposal.ReportedFailures(out)) > 0:
		return errors.New("exit status 0, but its output reports a failed test")
	}
	return nil
}

// commandParam reads a command parameter: an argv list, or a string run by sh -c.
func commandParam(v any) []string {
	switch t := v.(type) {
	case string:
		if strings.TrimSpace(t) == "" {
			return nil
		}
		return []string{"sh", "-c", t}
	case []any:
		var out []string
		for _, x := range t {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

// publicFields drops nothing today but is where a value-bearing field would be removed.
func publicFields(r Request) map[string]any {
	out := map[string]any{}
	for k, v := range r.Fields {
		if k == "value" {
			continue
		}
		out[k] = v
	}
	return out
}

// --- termination -----------------------------------------------------------------------------

// endRound closes a round and reports whether the interaction should end, and why.
func (c *ictx) endRound() bool {
	c.st.Round++
	c.r.checkpointRound()
	if c.ctx.Err() != nil {
		return true
	}
	if c.reason() != "" {
		return true
	}
	if c.roundCap > 0 && c.st.Round >= c.roundCap {
		c.st.Done = "round_cap"
		if !c.ownCap {
			c.r.emit(c.in.ID, "", "warning", map[string]any{"message": fmt.Sprintf("no termination condition held after %d rounds and the flow sets no bound on rounds or time; the engine's round cap ends the interaction (set params.round_cap, or add a max_rounds or timeout_ms condition)", c.st.Round)})
		}
		return true
	}
	return false
}

// reason is the termination condition that holds now, "" if none.
func (c *ictx) reason() string {
	if c.term == nil {
		return ""
	}
	ok, why := c.holds(c.term)
	if !ok {
		return ""
	}
	return why
}

func (c *ictx) holds(t *flow.Termination) (bool, string) {
	switch {
	case len(t.Any) > 0:
		// When several hold at once (a judge decides in the last round), the pattern's own
		// end is the reason, not the bound that happened to be reached with it.
		first := ""
		for _, s := range t.Any {
			if ok, why := c.holds(s); ok {
				if !slices.Contains(bounds, why) {
					return true, why
				}
				first = firstNonEmpty(first, why)
			}
		}
		return first != "", first
	case len(t.All) > 0:
		var whys []string
		for _, s := range t.All {
			ok, why := c.holds(s)
			if !ok {
				return false, ""
			}
			whys = append(whys, why)
		}
		return true, strings.Join(whys, "+")
	}
	switch t.Type {
	case "max_rounds":
		return t.Rounds != nil && c.st.Round >= *t.Rounds, "max_rounds"
	case "timeout_ms":
		return c.st.TimedOut, "timeout_ms"
	case "judge_decision":
		return c.st.Decided, "judge_decision"
	case "consensus_threshold":
		return t.Threshold != nil && c.st.Consensus >= *t.Threshold && c.st.Round > 0, "consensus_threshold"
	case "quality_gate":
		return c.gateHolds(t), "quality_gate"
	case "max_cost_usd", "max_tokens":
		return limits{usd: deref(t.USD), tokens: deref(t.Tokens)}.reached(c.spent()) == t.Type, t.Type
	}
	return false, ""
}

// bounds are the conditions that end an interaction whatever its agents decide: when one holds
// together with the pattern's own end (a judge decides in the last round), the pattern's end
// is the reason.
var bounds = []string{"max_rounds", "timeout_ms", "max_cost_usd", "max_tokens"}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (c *ictx) gateHolds(t *flow.Termination) bool {
	v, ok := c.st.Metrics[t.Metric]
	if !ok {
		return false
	}
	want := 1.0
	if t.Value != nil {
		want = *t.Value
	}
	if t.Op == "<=" {
		return v <= want
	}
	return v >= want
}

// maxRounds is the max_rounds bound when the termination has one (for patterns that plan
// their rounds), else def; never more than the round cap.
func (c *ictx) maxRounds(def int) int {
	n := 0
	c.term.Walk(func(t *flow.Termination) {
		if t.Type == "max_rounds" && t.Rounds != nil && (n == 0 || *t.Rounds < n) {
			n = *t.Rounds
		}
	})
	if n == 0 {
		n = def
	}
	if c.roundCap > 0 {
		n = min(n, c.roundCap)
	}
	return n
}

func timeoutMs(t *flow.Termination, params map[string]any) int64 {
	var ms int64
	t.Walk(func(x *flow.Termination) {
		if x.Type == "timeout_ms" && x.Ms != nil && (ms == 0 || *x.Ms < ms) {
			ms = *x.Ms
		}
	})
	if p := int64(intParam(params, "timeout_ms", 0)); p > 0 && (ms == 0 || p < ms) {
		ms = p
	}
	return ms
}

func intParam(params map[string]any, key string, def int) int {
	if v, ok := pattern.Number(params[key]); ok {
		return int(v)
	}
	return def
}

// retention is the blackboard's: the blackboard node's params.retention (it covers every edge
// through the node), else the edges'.
func (c *ictx) retention() *bus.Retention {
	m, ok := c.nodeParam("retention", "blackboard").(map[string]any)
	if !ok {
		m, ok = c.params["retention"].(map[string]any)
	}
	if !ok {
		return nil
	}
	return &bus.Retention{KeepLastN: intParam(m, "keep_last_n", 0), KeepLastDays: intParam(m, "keep_last_days", 0)}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Summary is a one-line summary of an agent's reply (its first line with content).
func Summary(text string) string { return firstLine(text) }

// firstLine is the first line with content, skipping the numbered section headers of the
// standard response format ("1. Intent") and bullet marks.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !isSectionHeader(l) {
			return strings.TrimSpace(strings.TrimLeft(l, "-* "))
		}
	}
	return ""
}

// sortedKeys is a small helper for deterministic output.
func sortedKeys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// dedupe is names without repeats, in order.
func dedupe(names []string) []string {
	seen := map[string]bool{}
	out := names[:0:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
