package validate

import (
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// interactions runs the per-interaction rules: the pattern, termination, the bounds some
// patterns need (timeout, retention, rate limit), and the pattern's roles.
func (c *checker) interactions() {
	for _, in := range c.f.Interactions {
		p, known := c.lookup(in.PatternID)
		if in.PatternID != "" && !known {
			pp := in.Path + "/patternId"
			msg := fmt.Sprintf("patternId %q is not a library pattern", in.PatternID)
			var fix *diag.Fix
			if ids := patternsOfTopology(in.PatternID); len(ids) > 0 {
				msg += fmt.Sprintf("; %q is a topology, used by the pattern %s: write patternId: %s", in.PatternID, strings.Join(ids, " or "), ids[0])
				fix = c.replaceFix(fmt.Sprintf("Change to %q", ids[0]), pp, ids[0])
			} else if s := suggest(in.PatternID, PatternIDs()); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
				fix = c.replaceFix(fmt.Sprintf("Change to %q", s), pp, s)
			} else {
				msg += "; use one of the 20 ids (manager_worker … protocol_bridge, or P01 … P20); `agentcanvas patterns` lists them"
			}
			c.report(pp, c.at(pp), diag.Error, CodeUnknownPattern, msg, fix)
		}
		for _, e := range in.Edges {
			c.edgePolicies(in, e, p, known)
		}
		c.roundCap(in)
		c.maxCostParam(in)
		if known {
			c.roles(in, p)
		}
	}
}

func (c *checker) edgePolicies(in *flow.Interaction, e *flow.Edge, p patternInfo, known bool) {
	data := e.Path + "/data"
	t := e.Data.Termination
	topology := e.Data.Topology
	if topology == "" && known {
		topology = p.Topology
	}
	def := p.Termination
	if !known {
		def = pattern.Termination{Type: "max_rounds", Rounds: 3}
	}
	if t == nil {
		if !c.loaderFlagged(data + "/termination") {
			where := c.head(e.Path)
			if c.has(data + "/termination") {
				where = c.f.KeySpan(data + "/termination")
			}
			c.report(data+"/termination", where, diag.Error, CodeTerminationRequired,
				fmt.Sprintf("edge %q has no termination, so the interaction could loop forever; add data.termination, e.g. %s", e.ID, describeTerm(def)),
				c.setFix("Add the pattern's default termination", data+"/termination", def))
		}
	} else {
		c.termination(t)
	}

	params := e.Data.Params
	endpoints := []string{e.Source, e.Target}
	// Which interactions need what is the library's rule; how it is reported is ours. The
	// pattern's own topology counts too, so a debate drawn with topology p2p still needs its
	// timeout. The engine merges an interaction's edges' settings, so a bound on any edge is
	// the interaction's, and a missing one is reported once, on its first edge.
	switch {
	case pattern.RequiresTimeout(p.PatternID, topology):
		c.timeout(in, e, topology, p.PatternID)
	case pattern.RequiresTimeout(p.PatternID, p.Topology):
		c.timeout(in, e, p.Topology, p.PatternID)
	}
	switch {
	case pattern.RequiresRetention(topology), pattern.RequiresRetention(p.Topology):
		c.retention(in, e, params, endpoints)
	}
	switch {
	case pattern.RequiresRateLimit(topology):
		c.rateLimit(in, e, topology, params, endpoints)
	case pattern.RequiresRateLimit(p.Topology):
		c.rateLimit(in, e, p.Topology, params, endpoints)
	}
}

// roundCap checks params.round_cap, and warns where the engine's own round cap will end an
// interaction because its flow bounds neither rounds nor time (flow.RoundCap).
func (c *checker) roundCap(in *flow.Interaction) {
	term, params := in.Settings()
	if term == nil {
		return // termination-required says what to add
	}
	for _, e := range in.Edges {
		v, ok := e.Data.Params["round_cap"]
		if !ok {
			continue
		}
		if n, whole := flow.WholeParam(e.Data.Params, "round_cap"); !whole || n < 1 {
			pp := e.Path + "/data/params/round_cap"
			c.report(pp, c.at(pp), diag.Error, CodeInvalidTermination,
				fmt.Sprintf("params.round_cap is %v; it is the most rounds the interaction may run, a whole number at least 1, e.g. %d", v, flow.DefaultRoundCap),
				c.setFix(fmt.Sprintf("Set round_cap: %d", flow.DefaultRoundCap), pp, flow.DefaultRoundCap))
		}
	}
	if limit, own := flow.RoundCap(term, params, flow.DefaultRoundCap); limit == 0 || own || c.hasErrorsUnder(in.Path) {
		return // bounded, or the errors there come first: the bound may be what is broken
	}
	e := in.Edges[0]
	for _, x := range in.Edges {
		if x.Data.Termination == term {
			e = x
		}
	}
	at := e.Path + "/data/termination"
	c.report(at, c.head(at), diag.Warning, CodeRoundCap,
		fmt.Sprintf("interaction %q sets no bound on rounds or time (no max_rounds or timeout_ms condition can end it on its own), so the engine's round cap ends it after %d rounds; add {type: max_rounds, rounds: N} or {type: timeout_ms, ms: N} to an any: list, or params.round_cap: N to choose the cap", in.ID, flow.DefaultRoundCap),
		c.setFix(fmt.Sprintf("Add params.round_cap: %d", flow.DefaultRoundCap), e.Path+"/data/params/round_cap", flow.DefaultRoundCap))
}

// hasErrorsUnder: an error was reported at path or inside it.
func (c *checker) hasErrorsUnder(path string) bool {
	for _, d := range c.out {
		if d.Severity == diag.Error && (d.Path == path || strings.HasPrefix(d.Path, path+"/")) {
			return true
		}
	}
	return false
}

// describeTerm writes a termination as YAML flow text for messages.
func describeTerm(t pattern.Termination) string {
	list := func(key string, ts []pattern.Termination) string {
		parts := make([]string, len(ts))
		for i, x := range ts {
			parts[i] = describeTerm(x)
		}
		return key + ": [" + strings.Join(parts, ", ") + "]"
	}
	switch {
	case t.Any != nil:
		return list("any", t.Any)
	case t.All != nil:
		return list("all", t.All)
	case t.Type == "max_rounds":
		return fmt.Sprintf("{type: max_rounds, rounds: %d}", t.Rounds)
	case t.Type == "timeout_ms":
		return fmt.Sprintf("{type: timeout_ms, ms: %d}", t.Ms)
	case t.Type == "consensus_threshold":
		return fmt.Sprintf("{type: consensus_threshold, threshold: %g}", t.Threshold)
	case t.Type == "quality_gate" && t.Value != nil:
		return fmt.Sprintf("{type: quality_gate, metric: %s, op: %q, value: %g}", t.Metric, t.Op, *t.Value)
	}
	return "{type: " + t.Type + "}"
}

// termination checks one condition and everything nested in it: a combination (any: / all:)
// or a single condition, each checked by its own step.
func (c *checker) termination(t *flow.Termination) {
	p := t.Path
	hasAny, hasAll := t.Any != nil, t.All != nil
	if !hasAny && !hasAll && c.mayHaveKey(p, "any", "all") {
		// An empty list loads as nil: ask the file.
		hasAny, hasAll = c.has(p+"/any"), c.has(p+"/all")
	}
	if hasAny || hasAll {
		c.terminationCombination(t, hasAny, hasAll)
		return
	}
	if t.Type == "" {
		if !c.has(p + "/type") {
			c.report(p, c.head(p), diag.Error, CodeInvalidTermination,
				"this termination condition has no type; add type: one of "+quoteList(TerminationTypes), nil)
		}
		return
	}
	switch t.Type {
	case "max_rounds":
		c.maxRounds(t)
	case "timeout_ms":
		c.timeoutMs(t)
	case "consensus_threshold":
		c.consensusThreshold(t)
	case "quality_gate":
		c.qualityGate(t)
	case "max_cost_usd":
		c.maxCostUSD(t)
	case "max_tokens":
		c.maxTokens(t)
	}
}

// terminationCombination checks an any: / all: list and, recursively, every condition in it.
func (c *checker) terminationCombination(t *flow.Termination, hasAny, hasAll bool) {
	p := t.Path
	if t.Type != "" {
		c.report(p+"/type", c.at(p+"/type"), diag.Error, CodeInvalidTermination,
			"a termination is either one condition (type: …) or a combination (any: / all:), not both; move this condition into the list", nil)
	}
	if hasAny && hasAll {
		c.report(p+"/all", c.f.KeySpan(p+"/all"), diag.Error, CodeInvalidTermination,
			"use any: or all: at one level, not both; nest one inside the other, e.g. any: [{all: [...]}, ...]", nil)
	}
	for _, l := range []struct {
		key   string
		conds []*flow.Termination
	}{{"any", t.Any}, {"all", t.All}} {
		if c.has(p+"/"+l.key) && len(l.conds) == 0 && !c.loaderFlagged(p+"/"+l.key) {
			c.report(p+"/"+l.key, c.f.KeySpan(p+"/"+l.key), diag.Error, CodeInvalidTermination,
				fmt.Sprintf("%s: is empty, so it can never end the interaction; list at least one condition, e.g. - {type: max_rounds, rounds: 3}", l.key), nil)
		}
		for _, sub := range l.conds {
			c.termination(sub)
		}
	}
}

// needs reports a condition's missing key, with a fix that adds the example value. set says
// the condition has it; a key the file has but the loader could not read is reported there.
func (c *checker) needs(t *flow.Termination, key, example string, value any, set bool) {
	p := t.Path
	if set || c.has(p+"/"+key) {
		return
	}
	c.report(p+"/type", c.at(p+"/type"), diag.Error, CodeInvalidTermination,
		fmt.Sprintf("%s needs %s; add %s", t.Type, key, example),
		c.setFix("Add "+example, p+"/"+key, value))
}

func (c *checker) maxRounds(t *flow.Termination) {
	p := t.Path
	c.needs(t, "rounds", "rounds: 3", 3, t.Rounds != nil)
	if t.Rounds != nil && *t.Rounds < 1 {
		c.report(p+"/rounds", c.at(p+"/rounds"), diag.Error, CodeInvalidTermination,
			fmt.Sprintf("rounds is %d; a round limit must be at least 1", *t.Rounds), c.setFix("Set rounds to 1", p+"/rounds", 1))
	}
}

func (c *checker) timeoutMs(t *flow.Termination) {
	p := t.Path
	c.needs(t, "ms", fmt.Sprintf("ms: %d", DefaultTimeoutMs), DefaultTimeoutMs, t.Ms != nil)
	if t.Ms != nil && *t.Ms < 1 {
		c.report(p+"/ms", c.at(p+"/ms"), diag.Error, CodeInvalidTermination,
			fmt.Sprintf("ms is %d; a timeout must be at least 1 millisecond (e.g. %d for 10 minutes)", *t.Ms, DefaultTimeoutMs),
			c.setFix(fmt.Sprintf("Set ms to %d", DefaultTimeoutMs), p+"/ms", DefaultTimeoutMs))
	}
}

// consensusThreshold checks the share is in (0, 1]; a percentage (60) is offered as a share.
func (c *checker) consensusThreshold(t *flow.Termination) {
	p := t.Path
	c.needs(t, "threshold", "threshold: 0.6", 0.6, t.Threshold != nil)
	th := t.Threshold
	if th == nil || (*th > 0 && *th <= 1) {
		return
	}
	msg := fmt.Sprintf("threshold is %g; it is the share of agreeing agents, in (0, 1], e.g. 0.6", *th)
	var fix *diag.Fix
	if *th > 1 && *th <= 100 {
		msg = fmt.Sprintf("threshold is %g, which looks like a percentage; write it as a share in (0, 1]: %g", *th, *th/100)
		fix = c.setFix(fmt.Sprintf("Set threshold to %g", *th/100), p+"/threshold", *th/100)
	}
	c.report(p+"/threshold", c.at(p+"/threshold"), diag.Error, CodeInvalidTermination, msg, fix)
}

// qualityGate checks the gate's metric, operator and value, in that order.
func (c *checker) qualityGate(t *flow.Termination) {
	p := t.Path
	c.qualityGateMetric(t)
	c.needs(t, "op", `op: ">="`, ">=", t.Op != "")
	if t.Op != "" && !contains(QualityGateOps, t.Op) {
		fixed := map[string]string{"=>": ">=", ">": ">=", "=<": "<=", "<": "<=", "ge": ">=", "le": "<=", "gte": ">=", "lte": "<="}[t.Op]
		msg := fmt.Sprintf("quality-gate operator %q is not supported; use \">=\" or \"<=\"", t.Op)
		var fix *diag.Fix
		if fixed != "" {
			fix = c.replaceFix(fmt.Sprintf("Change to %q", fixed), p+"/op", fixed)
		}
		c.report(p+"/op", c.at(p+"/op"), diag.Error, CodeInvalidTermination, msg, fix)
	}
	if t.Value == nil && !c.has(p+"/value") {
		c.report(p+"/type", c.at(p+"/type"), diag.Error, CodeInvalidTermination,
			"quality_gate needs value: the number the metric is compared with, e.g. value: 1", nil)
	}
}

// qualityGateMetric checks the metric is one the engine measures or a custom: one, and
// suggests the nearest for a typo.
func (c *checker) qualityGateMetric(t *flow.Termination) {
	p := t.Path
	if t.Metric == "" && !c.has(p+"/metric") {
		c.report(p+"/type", c.at(p+"/type"), diag.Error, CodeInvalidTermination,
			"quality_gate needs metric; add metric: one of "+quoteList(QualityGateMetrics)+" (or custom:<name>)", nil)
		return
	}
	if t.Metric == "" || strings.HasPrefix(t.Metric, "custom:") || contains(QualityGateMetrics, t.Metric) {
		return
	}
	msg := fmt.Sprintf("quality-gate metric %q is not one the run engine measures (%s); use one of them, or custom:<name> for a metric your agents report", t.Metric, quoteList(QualityGateMetrics))
	var fix *diag.Fix
	if s := suggest(t.Metric, QualityGateMetrics); s != "" {
		msg = fmt.Sprintf("quality-gate metric %q is not one the run engine measures; did you mean %q?", t.Metric, s)
		fix = c.replaceFix(fmt.Sprintf("Change to %q", s), p+"/metric", s)
	}
	c.report(p+"/metric", c.at(p+"/metric"), diag.Error, CodeInvalidTermination, msg, fix)
}

func (c *checker) maxCostUSD(t *flow.Termination) {
	p := t.Path
	c.needs(t, "usd", "usd: 5", 5, t.USD != nil)
	if t.USD != nil && !(*t.USD > 0) {
		c.report(p+"/usd", c.at(p+"/usd"), diag.Error, CodeInvalidTermination,
			fmt.Sprintf("usd is %g; a cost limit is a number of US dollars more than 0, e.g. usd: 5", *t.USD), nil)
	}
}

func (c *checker) maxTokens(t *flow.Termination) {
	p := t.Path
	c.needs(t, "tokens", "tokens: 1000000", 1000000, t.Tokens != nil)
	if t.Tokens != nil && *t.Tokens < 1 {
		c.report(p+"/tokens", c.at(p+"/tokens"), diag.Error, CodeInvalidTermination,
			fmt.Sprintf("tokens is %d; a token limit must be at least 1, e.g. tokens: 1000000", *t.Tokens), nil)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (c *checker) timeout(in *flow.Interaction, e *flow.Edge, topology, patternID string) {
	params := e.Data.Params
	pp := e.Path + "/data/params/timeout_ms"
	why := "debate_judge interactions"
	if topology != "debate_judge" {
		why = patternID + " interactions"
	}
	if v, ok := params["timeout_ms"]; ok {
		if n, isNum := pattern.Number(v); isNum && n >= 1 && n == float64(int64(n)) {
			return
		}
		c.report(pp, c.at(pp), diag.Error, CodeTimeoutRequired,
			fmt.Sprintf("params.timeout_ms must be a whole number of milliseconds, at least 1; write timeout_ms: %d (10 minutes)", DefaultTimeoutMs),
			c.setFix(fmt.Sprintf("Set timeout_ms: %d", DefaultTimeoutMs), pp, DefaultTimeoutMs))
		return
	}
	if hasTimeout(in) || !c.firstMissing(in, CodeTimeoutRequired) {
		return
	}
	c.report(e.Path+"/data", c.head(e.Path), diag.Error, CodeTimeoutRequired,
		fmt.Sprintf("%s need a timeout and interaction %q has none; add params.timeout_ms: %d to edge %q, or a {type: timeout_ms, ms: %d} condition to its termination", why, in.ID, DefaultTimeoutMs, e.ID, DefaultTimeoutMs),
		c.setFix(fmt.Sprintf("Add params.timeout_ms: %d", DefaultTimeoutMs), pp, DefaultTimeoutMs))
}

// hasTimeout: a timeout_ms param or condition on any of in's edges (the engine merges them).
func hasTimeout(in *flow.Interaction) bool {
	found := false
	for _, e := range in.Edges {
		if _, ok := e.Data.Params["timeout_ms"]; ok {
			return true
		}
		e.Data.Termination.Walk(func(t *flow.Termination) { found = found || t.Type == "timeout_ms" })
	}
	return found
}

// anyEdgeHas: key is set on one of in's edges or their endpoint system nodes of types.
func (c *checker) anyEdgeHas(in *flow.Interaction, key string, types ...string) bool {
	for _, e := range in.Edges {
		if _, _, ok := c.systemParam(key, e.Data.Params, []string{e.Source, e.Target}, types...); ok {
			return true
		}
	}
	return false
}

// firstMissing reports whether this is the first time code is found missing in in: a bound
// an interaction lacks is one error, not one per edge.
func (c *checker) firstMissing(in *flow.Interaction, code string) bool {
	if c.missing == nil {
		c.missing = map[string]bool{}
	}
	k := in.Path + "\x00" + code
	if c.missing[k] {
		return false
	}
	c.missing[k] = true
	return true
}

// systemParam finds a param on the edge or on one of its endpoint system nodes of the
// given type (a blackboard's retention, a router's rate limit can live on the node).
func (c *checker) systemParam(key string, params map[string]any, endpoints []string, types ...string) (any, string, bool) {
	if v, ok := params[key]; ok {
		return v, "", true
	}
	for _, id := range endpoints {
		if n, ok := c.nodes[id]; ok && n.System != nil && contains(types, n.System.Type) {
			if v, ok := n.System.Params[key]; ok {
				return v, n.System.Path + "/params/" + key, true
			}
		}
	}
	return nil, "", false
}

func (c *checker) retention(in *flow.Interaction, e *flow.Edge, params map[string]any, endpoints []string) {
	pp := e.Path + "/data/params/retention"
	def := map[string]any{"keep_last_n": DefaultKeepLastN}
	v, at, ok := c.systemParam("retention", params, endpoints, "blackboard")
	if !ok {
		if c.anyEdgeHas(in, "retention", "blackboard") || !c.firstMissing(in, CodeRetentionRequired) {
			return
		}
		c.report(e.Path+"/data", c.head(e.Path), diag.Error, CodeRetentionRequired,
			fmt.Sprintf("blackboard interactions need a retention policy and interaction %q has none; add params.retention: {keep_last_n: %d} or {keep_last_days: 7} to edge %q", in.ID, DefaultKeepLastN, e.ID),
			c.setFix(fmt.Sprintf("Add params.retention: {keep_last_n: %d}", DefaultKeepLastN), pp, def))
		return
	}
	if at == "" {
		at = pp
	}
	m, isMap := v.(map[string]any)
	good := false
	if isMap {
		for _, k := range []string{"keep_last_n", "keep_last_days"} {
			if n, ok := pattern.Number(m[k]); ok && n >= 1 && n == float64(int64(n)) {
				good = true
			}
		}
	}
	if !good {
		c.report(at, c.at(at), diag.Error, CodeRetentionRequired,
			fmt.Sprintf("retention must be {keep_last_n: N} or {keep_last_days: N} with a whole N of at least 1, e.g. {keep_last_n: %d}", DefaultKeepLastN),
			c.setFix(fmt.Sprintf("Set retention: {keep_last_n: %d}", DefaultKeepLastN), at, def))
	}
}

func (c *checker) rateLimit(in *flow.Interaction, e *flow.Edge, topology string, params map[string]any, endpoints []string) {
	pp := e.Path + "/data/params/rate_limit_per_min"
	v, at, ok := c.systemParam("rate_limit_per_min", params, endpoints, "broker", "router")
	if !ok {
		if c.anyEdgeHas(in, "rate_limit_per_min", "broker", "router") || !c.firstMissing(in, CodeRateLimitRequired) {
			return
		}
		c.report(e.Path+"/data", c.head(e.Path), diag.Error, CodeRateLimitRequired,
			fmt.Sprintf("%s interactions need a rate limit and interaction %q has none; add params.rate_limit_per_min: %d to edge %q", topology, in.ID, DefaultRateLimitPerMin, e.ID),
			c.setFix(fmt.Sprintf("Add params.rate_limit_per_min: %d", DefaultRateLimitPerMin), pp, DefaultRateLimitPerMin))
		return
	}
	if at == "" {
		at = pp
	}
	if n, ok := pattern.Number(v); ok && n >= 1 {
		return
	}
	c.report(at, c.at(at), diag.Error, CodeRateLimitRequired,
		fmt.Sprintf("rate_limit_per_min must be a number of messages per minute, at least 1; the default is %d", DefaultRateLimitPerMin),
		c.setFix(fmt.Sprintf("Set rate_limit_per_min: %d", DefaultRateLimitPerMin), at, DefaultRateLimitPerMin))
}

// patternsOfTopology are the library patterns whose topology is name (a topology written
// where a pattern id belongs: market_auction is contract_net's).
func patternsOfTopology(name string) []string {
	var ids []string
	for _, p := range pattern.All() {
		if p.Topology == name && p.PatternID != name {
			ids = append(ids, p.PatternID)
		}
	}
	return ids
}
