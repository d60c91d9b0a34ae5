package validate

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// envNameRE is a portable environment-variable name (POSIX: letters, digits, underscore, not
// starting with a digit).
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// schema checks required fields and closed value sets the loader does not know about.
func (c *checker) schema() {
	f := c.f
	for _, key := range []string{"version", "agents", "interactions"} {
		if !c.has("/" + key) {
			ex := map[string]string{"version": "version: 0.2", "agents": "agents: with at least one agent", "interactions": "interactions: (an empty list [] is fine)"}[key]
			c.report("", c.head(""), diag.Error, CodeSchema, fmt.Sprintf("the flow has no %s; add %s", key, ex), nil)
		}
	}
	if b := f.Policy.Budget; b != nil {
		if b.USD != nil && !(*b.USD > 0) {
			c.report("/policy/budget/usd", c.at("/policy/budget/usd"), diag.Error, CodeSchema,
				fmt.Sprintf("policy.budget.usd is %g; the run's cost limit is a number of US dollars more than 0, e.g. usd: 10; remove it for no cost limit", *b.USD), nil)
		}
		if b.Tokens != nil && *b.Tokens < 1 {
			c.report("/policy/budget/tokens", c.at("/policy/budget/tokens"), diag.Error, CodeSchema,
				fmt.Sprintf("policy.budget.tokens is %d; the run's token limit must be at least 1, e.g. tokens: 2000000; remove it for no token limit", *b.Tokens), nil)
		}
	}
	if c.has("/policy/dependencyTimeoutMs") && f.Policy.DependencyTimeoutMs < 1 {
		p := "/policy/dependencyTimeoutMs"
		c.report(p, c.at(p), diag.Error, CodeSchema,
			fmt.Sprintf("policy.dependencyTimeoutMs is %d; how long a dependency request waits is a number of milliseconds of at least 1, e.g. 600000 (10 minutes); remove it for the default hour", f.Policy.DependencyTimeoutMs), nil)
	}
	fresh := c.freshIDs()
	for _, a := range f.Agents {
		c.requiredFix(a.Path, "id", a.ID, "an agent", "id: <unique id>, e.g. id: coder", func() string { return fresh(a.Name, "agent") })
		c.runtime(a.Path+"/runtime", a.Runtime)
	}
	for _, s := range f.SystemNodes {
		c.requiredFix(s.Path, "id", s.ID, "a system node", "id: <unique id>, e.g. id: judge", func() string { return fresh(s.Name, s.Type) })
		c.required(s.Path, "type", s.Type, "a system node", "type: one of "+quoteList(SystemNodeTypes))
		c.enum(s.Path+"/type", "system node type", s.Type, SystemNodeTypes)
		c.runtime(s.Path+"/runtime", s.Runtime)
		c.nodeParams(s)
	}
	for _, in := range f.Interactions {
		c.requiredFix(in.Path, "id", in.ID, "an interaction", "id: <unique id>, e.g. id: review", func() string { return fresh(in.Name, in.PatternID) })
		c.required(in.Path, "patternId", in.PatternID, "an interaction", "patternId: a library pattern, e.g. patternId: manager_worker (run `agentcanvas patterns` for all 20)")
		if len(in.Edges) == 0 && !c.loaderFlagged(in.Path+"/edges") {
			c.report(in.Path, c.head(in.Path), diag.Error, CodeSchema, "the interaction has no edges; add edges: with at least one {source, target, data} entry, or remove the interaction", nil)
		}
		for _, e := range in.Edges {
			c.required(e.Path, "source", e.Source, "an edge", "source: <agent or system node id>")
			c.required(e.Path, "target", e.Target, "an edge", "target: <agent or system node id>")
			c.edgeData(e.Path+"/data", &e.Data)
		}
	}
}

// freshIDs returns a function that makes ids not yet used in the flow, from a name or a kind
// ("Planner" → "planner", then "planner_2"). The set of used ids is built on first use.
func (c *checker) freshIDs() func(name, kind string) string {
	var used map[string]bool
	collect := func() {
		used = map[string]bool{}
		for _, a := range c.f.Agents {
			used[a.ID] = true
		}
		for _, s := range c.f.SystemNodes {
			used[s.ID] = true
		}
		for _, in := range c.f.Interactions {
			used[in.ID] = true
			for _, e := range in.Edges {
				used[e.ID] = true
			}
		}
	}
	return func(name, kind string) string {
		if used == nil {
			collect()
		}
		base := strings.ToLower(strings.Trim(idRE.ReplaceAllString(name, "_"), "_"))
		if base == "" {
			base = strings.ToLower(strings.Trim(idRE.ReplaceAllString(kind, "_"), "_"))
		}
		if base == "" {
			base = "node"
		}
		id := base
		for n := 2; used[id]; n++ {
			id = fmt.Sprintf("%s_%d", base, n)
		}
		used[id] = true
		return id
	}
}

// idRE matches the characters a generated id leaves out.
var idRE = regexp.MustCompile(`[^A-Za-z0-9_\-]+`)

func (c *checker) runtime(path string, r *flow.Runtime) {
	if r == nil {
		return
	}
	c.enum(path+"/kind", "runtime.kind", r.Kind, RuntimeKinds)
	c.enum(path+"/backendId", "runtime.backendId", r.BackendID, BackendIDs)
	c.enum(path+"/cwdMode", "runtime.cwdMode", r.CwdMode, CwdModes)
	c.enum(path+"/permissionMode", "runtime.permissionMode", r.PermissionMode, PermissionModes)
	c.enum(path+"/codexSandbox", "runtime.codexSandbox", r.CodexSandbox, CodexSandboxes)
	c.enum(path+"/geminiApprovalMode", "runtime.geminiApprovalMode", r.GeminiApprovalMode, GeminiApprovalModes)
	c.enum(path+"/network", "runtime.network", r.Network, NetworkModes)
	if r.Network == "none" {
		switch r.BackendID {
		case "command", "dry-run":
		default:
			backend := r.BackendID
			if backend == "" {
				backend = "auto"
			}
			c.report(path+"/network", c.at(path+"/network"), diag.Error, CodeSchema,
				fmt.Sprintf("runtime.network none is for command agents: it would cut this %s agent off its model's API; remove it, or run a command agent", backend),
				c.deleteFix("Remove network: none", path+"/network"))
		}
	}
	c.unixSockets(path+"/unixSockets", r.UnixSockets)
	if r.BackendID == "command" && len(r.Command) == 0 {
		c.report(path+"/backendId", c.at(path+"/backendId"), diag.Error, CodeSchema,
			"backendId command needs a command: add command: [program, args…], e.g. command: [bash, agents/review.sh]", nil)
	}
	for i, arg := range r.Command {
		if i == 0 && strings.TrimSpace(arg) == "" {
			c.report(fmt.Sprintf("%s/command/0", path), c.at(fmt.Sprintf("%s/command/0", path)), diag.Error, CodeSchema, "the command's program is empty; name the program to run, e.g. bash", nil)
		}
	}
	c.gatewayOnly(path, r) // gateway.go
	if r.MaxCostUSD <= 0 && c.has(path+"/maxCostUsd") && !c.hasErrorsUnder(path+"/maxCostUsd") {
		c.report(path+"/maxCostUsd", c.at(path+"/maxCostUsd"), diag.Error, CodeSchema, "runtime.maxCostUsd must be a number of US dollars above 0, e.g. 0.5; remove it for no limit of the agent's own", nil)
	}
	if r.MaxModelCalls != nil && *r.MaxModelCalls < 0 {
		c.report(path+"/maxModelCalls", c.at(path+"/maxModelCalls"), diag.Error, CodeSchema, "runtime.maxModelCalls must be a whole number ≥ 0 (0: no limit), e.g. 500", nil)
	}
	if r.MaxTurns < 1 && c.has(path+"/maxTurns") {
		c.report(path+"/maxTurns", c.at(path+"/maxTurns"), diag.Error, CodeSchema, "runtime.maxTurns must be at least 1; remove it for the backend's default", nil)
	}
	if r.SessionLoop != nil && r.SessionLoop.MaxIterations < 1 && c.has(path+"/sessionLoop/maxIterations") {
		p := path + "/sessionLoop/maxIterations"
		c.report(p, c.at(p), diag.Error, CodeSchema, "sessionLoop.maxIterations must be at least 1 (it bounds the loop)", c.setFix("Set maxIterations to 10", p, 10))
	}
	for i, name := range r.Secrets {
		if p := fmt.Sprintf("%s/secrets/%d", path, i); !envNameRE.MatchString(name) && !c.secretAt[p] {
			fixed := envName(strings.SplitN(name, "=", 2)[0])
			c.report(p, c.at(p), diag.Error, CodeSchema, fmt.Sprintf("runtime.secrets holds the names of environment variables whose values are secret, and %q is not a valid name; write %s", name, fixed), c.replaceFix("Use "+fixed, p, fixed))
		}
	}
	first, count := map[string]int{}, map[string]int{}
	for _, name := range r.Env {
		count[name]++
	}
	for i, name := range r.Env {
		p := fmt.Sprintf("%s/env/%d", path, i)
		if c.secretAt[p] {
			continue
		}
		if envNameRE.MatchString(name) {
			if j, dup := first[name]; dup {
				times := fmt.Sprintf("%d times", count[name])
				if count[name] == 2 {
					times = "twice"
				}
				c.report(p, c.at(p), diag.Warning, CodeSchema, fmt.Sprintf("runtime.env lists %s %s (first as entry %d, %s); remove the repeat", name, times, j+1, c.line(fmt.Sprintf("%s/env/%d", path, j))),
					c.deleteFix("Remove the repeated "+name, p))
			} else {
				first[name] = i
			}
			continue
		}
		fixed := envName(name)
		msg := fmt.Sprintf("runtime.env holds environment-variable names only, and %q is not a valid name (letters, digits and _, not starting with a digit)", name)
		if k, _, ok := strings.Cut(name, "="); ok {
			msg = "runtime.env holds environment-variable names only, not NAME=value; keep the name here and set the value in VS Code's secret storage or your shell"
			fixed = envName(k)
		}
		msg += fmt.Sprintf("; write %s", fixed)
		c.report(p, c.at(p), diag.Error, CodeSchema, msg, c.replaceFix("Use "+fixed, p, fixed))
	}
}

// envName turns any text into a valid environment-variable name.
func envName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(strings.TrimSpace(s)) {
		switch {
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), "_")
	if out == "" {
		return "SECRET"
	}
	if out[0] >= '0' && out[0] <= '9' {
		out = "_" + out
	}
	return out
}

func (c *checker) edgeData(path string, d *flow.EdgeData) {
	c.enum(path+"/intent", "intent", d.Intent, Intents)
	c.enum(path+"/topology", "topology", d.Topology, Topologies)
	c.enum(path+"/messageForm", "messageForm", d.MessageForm, MessageForms)
	c.enum(path+"/sync", "sync", d.Sync, SyncModes)
	if len(d.Verification) > 0 && c.has(path+"/verification/0") {
		for i, v := range d.Verification {
			c.enum(fmt.Sprintf("%s/verification/%d", path, i), "verification", v, Verifications)
		}
	} else if len(d.Verification) == 1 {
		c.enum(path+"/verification", "verification", d.Verification[0], Verifications)
	}
	if d.Termination != nil {
		d.Termination.Walk(func(t *flow.Termination) {
			c.enum(t.Path+"/type", "termination type", t.Type, TerminationTypes)
		})
	}
	if d.Observability != nil && d.Observability.RetainDays != nil && *d.Observability.RetainDays < 0 {
		p := path + "/observability/retain_days"
		c.report(p, c.at(p), diag.Error, CodeSchema, "observability.retain_days must be 0 or more days", nil)
	}
	for i, s := range d.Sources {
		p := fmt.Sprintf("%s/sources/%d", path, i)
		c.required(p, "kind", s.Kind, "a source", "kind: paper or kind: spec")
		c.enum(p+"/kind", "source kind", s.Kind, SourceKinds)
		c.required(p, "ref", s.Ref, "a source", "ref: an arXiv id, DOI, URL or spec name")
	}
}

// loaderFlagged reports whether the loader already reported a problem at path.
func (c *checker) loaderFlagged(path string) bool {
	for _, p := range c.f.Problems {
		if p.Path == path {
			return true
		}
	}
	return false
}

// nodeParamsRead are the params the engine reads on a system node, by node type: they cover
// every edge through the node.
var nodeParamsRead = map[string][]string{
	"blackboard": {"retention"},
	"router":     {"rate_limit_per_min"},
	"broker":     {"rate_limit_per_min"},
}

// nodeParams warns of a system node param the engine never reads (a retention on a router, a
// typo): it would have no effect.
func (c *checker) nodeParams(s *flow.SystemNode) {
	read := nodeParamsRead[s.Type]
	for _, key := range sortedKeys(s.Params) {
		if contains(read, key) {
			continue
		}
		p := s.Path + "/params/" + key
		what := "no params"
		if len(read) > 0 {
			what = "only " + strings.Join(read, ", ")
		}
		c.report(p, c.at(p), diag.Warning, CodeSchema,
			fmt.Sprintf("params.%s has no effect on a %s node: the run reads %s there; set it on the interaction's edges if the pattern reads it, or remove it", key, s.Type, what), nil)
	}
}

// unixSockets checks runtime.unixSockets: each an absolute path or one relative to the
// workspace (existing or not, since a socket is made when its server starts), and a warning
// for any grant, which the kernel can only give as all Unix sockets at once.
func (c *checker) unixSockets(path string, paths []string) {
	for i, p := range paths {
		at := fmt.Sprintf("%s/%d", path, i)
		switch {
		case strings.TrimSpace(p) == "" || strings.ContainsRune(p, 0):
			c.report(at, c.at(at), diag.Error, CodeSchema, "runtime.unixSockets: an entry is empty; name a socket file, e.g. /var/run/docker.sock", nil)
		case !filepath.IsAbs(p) && !filepath.IsLocal(filepath.FromSlash(p)):
			c.report(at, c.at(at), diag.Error, CodeSchema,
				fmt.Sprintf("runtime.unixSockets: %q leaves the workspace; write a socket outside it as an absolute path", p), nil)
		}
	}
	if len(paths) > 0 {
		c.report(path, c.at(path), diag.Warning, CodeSchema,
			"runtime.unixSockets: the kernel can only allow or refuse Unix sockets as a whole (no Landlock rule for socket paths is used), so granting any path lets this agent connect to every pathname Unix socket your user can, such as the Docker socket", nil)
	}
}
