package validate

import (
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// interactions runs the per-interaction rules: the pattern, termination, the spec §8
// policies, and the pattern's roles.
func (c *checker) interactions() {
	for _, in := range c.f.Interactions {
		p, known := lookupPattern(in.PatternID)
		if in.PatternID != "" && !known {
			pp := in.Path + "/patternId"
			msg := fmt.Sprintf("patternId %q is not a library pattern", in.PatternID)
			var fix *diag.Fix
			if s := suggest(in.PatternID, PatternIDs()); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
				fix = replaceFix(c.f, fmt.Sprintf("Change to %q", s), pp, s)
			} else {
				msg += "; use one of the 20 ids (manager_worker … protocol_bridge, or P01 … P20); `agentcanvas patterns` lists them"
			}
			c.report(pp, c.at(pp), diag.Error, CodeUnknownPattern, msg, fix)
		}
		for _, e := range in.Edges {
			c.edgePolicies(in, e, p, known)
		}
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
		def = term{Type: "max_rounds", Rounds: 3}
	}
	if t == nil {
		if !c.loaderFlagged(data + "/termination") {
			where := c.head(e.Path)
			if c.has(data + "/termination") {
				where = c.f.KeySpan(data + "/termination")
			}
			c.report(data+"/termination", where, diag.Error, CodeTerminationRequired,
				fmt.Sprintf("edge %q has no termination, so the interaction could loop forever; add data.termination, e.g. %s", e.ID, describeTerm(def)),
				setFix(c.f, "Add the pattern's default termination", data+"/termination", def))
		}
	} else {
		c.termination(t, true)
	}

	params := e.Data.Params
	endpoints := []string{e.Source, e.Target}
	if topology == "debate_judge" || p.PatternID == "critic_refiner_curator" || p.PatternID == "bilateral_negotiation" {
		c.timeout(e, topology, p.PatternID)
	}
	if topology == "blackboard" {
		c.retention(e, params, endpoints)
	}
	if topology == "broker" || topology == "router_targeted" {
		c.rateLimit(e, topology, params, endpoints)
	}
}

func describeTerm(t term) string {
	switch {
	case t.Any != nil:
		parts := make([]string, len(t.Any))
		for i, x := range t.Any {
			parts[i] = describeTerm(x)
		}
		return "any: [" + strings.Join(parts, ", ") + "]"
	case t.Type == "max_rounds":
		return fmt.Sprintf("{type: max_rounds, rounds: %d}", t.Rounds)
	case t.Type == "timeout_ms":
		return fmt.Sprintf("{type: timeout_ms, ms: %d}", t.Ms)
	case t.Type == "consensus_threshold":
		return fmt.Sprintf("{type: consensus_threshold, threshold: %g}", t.Threshold)
	case t.Type == "quality_gate":
		return fmt.Sprintf("{type: quality_gate, metric: %s, op: %q, value: %g}", t.Metric, t.Op, *t.Value)
	}
	return "{type: " + t.Type + "}"
}

// termination checks one condition and everything nested in it.
func (c *checker) termination(t *flow.Termination, top bool) {
	p := t.Path
	hasAny, hasAll := c.has(p+"/any"), c.has(p+"/all")
	if hasAny || hasAll {
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
				c.termination(sub, false)
			}
		}
		return
	}
	if t.Type == "" {
		if !c.has(p + "/type") {
			c.report(p, c.head(p), diag.Error, CodeInvalidTermination,
				"this termination condition has no type; add type: one of "+quoteList(TerminationTypes), nil)
		}
		return
	}
	needs := func(key, example string, value any) {
		if c.has(p + "/" + key) {
			return
		}
		c.report(p+"/type", c.at(p+"/type"), diag.Error, CodeInvalidTermination,
			fmt.Sprintf("%s needs %s; add %s", t.Type, key, example),
			setFix(c.f, "Add "+example, p+"/"+key, value))
	}
	switch t.Type {
	case "max_rounds":
		needs("rounds", "rounds: 3", 3)
		if t.Rounds != nil && *t.Rounds < 1 {
			c.report(p+"/rounds", c.at(p+"/rounds"), diag.Error, CodeInvalidTermination,
				fmt.Sprintf("rounds is %d; a round limit must be at least 1", *t.Rounds), setFix(c.f, "Set rounds to 1", p+"/rounds", 1))
		}
	case "timeout_ms":
		needs("ms", fmt.Sprintf("ms: %d", DefaultTimeoutMs), DefaultTimeoutMs)
		if t.Ms != nil && *t.Ms < 1 {
			c.report(p+"/ms", c.at(p+"/ms"), diag.Error, CodeInvalidTermination,
				fmt.Sprintf("ms is %d; a timeout must be at least 1 millisecond (e.g. %d for 10 minutes)", *t.Ms, DefaultTimeoutMs),
				setFix(c.f, fmt.Sprintf("Set ms to %d", DefaultTimeoutMs), p+"/ms", DefaultTimeoutMs))
		}
	case "consensus_threshold":
		needs("threshold", "threshold: 0.6", 0.6)
		if th := t.Threshold; th != nil && !(*th > 0 && *th <= 1) {
			msg := fmt.Sprintf("threshold is %g; it is the share of agreeing agents, in (0, 1], e.g. 0.6", *th)
			var fix *diag.Fix
			if *th > 1 && *th <= 100 {
				msg = fmt.Sprintf("threshold is %g, which looks like a percentage; write it as a share in (0, 1]: %g", *th, *th/100)
				fix = setFix(c.f, fmt.Sprintf("Set threshold to %g", *th/100), p+"/threshold", *th/100)
			}
			c.report(p+"/threshold", c.at(p+"/threshold"), diag.Error, CodeInvalidTermination, msg, fix)
		}
	case "quality_gate":
		if !c.has(p + "/metric") {
			c.report(p+"/type", c.at(p+"/type"), diag.Error, CodeInvalidTermination,
				"quality_gate needs metric; add metric: one of "+quoteList(QualityGateMetrics)+" (or custom:<name>)", nil)
		} else if t.Metric != "" && !strings.HasPrefix(t.Metric, "custom:") && !contains(QualityGateMetrics, t.Metric) {
			msg := fmt.Sprintf("quality-gate metric %q is not one the run engine measures (%s); use one of them, or custom:<name> for a metric your agents report", t.Metric, quoteList(QualityGateMetrics))
			var fix *diag.Fix
			if s := suggest(t.Metric, QualityGateMetrics); s != "" {
				msg = fmt.Sprintf("quality-gate metric %q is not one the run engine measures; did you mean %q?", t.Metric, s)
				fix = replaceFix(c.f, fmt.Sprintf("Change to %q", s), p+"/metric", s)
			}
			c.report(p+"/metric", c.at(p+"/metric"), diag.Error, CodeInvalidTermination, msg, fix)
		}
		needs("op", `op: ">="`, ">=")
		if t.Op != "" && !contains(QualityGateOps, t.Op) {
			fixed := map[string]string{"=>": ">=", ">": ">=", "=<": "<=", "<": "<=", "ge": ">=", "le": "<=", "gte": ">=", "lte": "<="}[t.Op]
			msg := fmt.Sprintf("quality-gate operator %q is not supported; use \">=\" or \"<=\"", t.Op)
			var fix *diag.Fix
			if fixed != "" {
				fix = replaceFix(c.f, fmt.Sprintf("Change to %q", fixed), p+"/op", fixed)
			}
			c.report(p+"/op", c.at(p+"/op"), diag.Error, CodeInvalidTermination, msg, fix)
		}
		if !c.has(p + "/value") {
			c.report(p+"/type", c.at(p+"/type"), diag.Error, CodeInvalidTermination,
				"quality_gate needs value: the number the metric is compared with, e.g. value: 1", nil)
		}
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

// number reads a numeric params value as yaml.v3 decodes it.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func (c *checker) timeout(e *flow.Edge, topology, patternID string) {
	params := e.Data.Params
	pp := e.Path + "/data/params/timeout_ms"
	why := "debate_judge interactions"
	if topology != "debate_judge" {
		why = patternID + " interactions"
	}
	if v, ok := params["timeout_ms"]; ok {
		if n, isNum := number(v); isNum && n >= 1 {
			return
		}
		c.report(pp, c.at(pp), diag.Error, CodeTimeoutRequired,
			fmt.Sprintf("params.timeout_ms must be a whole number of milliseconds, at least 1; write timeout_ms: %d (10 minutes)", DefaultTimeoutMs),
			setFix(c.f, fmt.Sprintf("Set timeout_ms: %d", DefaultTimeoutMs), pp, DefaultTimeoutMs))
		return
	}
	found := false
	e.Data.Termination.Walk(func(t *flow.Termination) { found = found || t.Type == "timeout_ms" })
	if found {
		return
	}
	c.report(e.Path+"/data", c.head(e.Path), diag.Error, CodeTimeoutRequired,
		fmt.Sprintf("%s need a timeout (spec §8) and edge %q has none; add params.timeout_ms: %d, or a {type: timeout_ms, ms: %d} condition to its termination", why, e.ID, DefaultTimeoutMs, DefaultTimeoutMs),
		setFix(c.f, fmt.Sprintf("Add params.timeout_ms: %d", DefaultTimeoutMs), pp, DefaultTimeoutMs))
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

func (c *checker) retention(e *flow.Edge, params map[string]any, endpoints []string) {
	pp := e.Path + "/data/params/retention"
	def := map[string]any{"keep_last_n": DefaultKeepLastN}
	v, at, ok := c.systemParam("retention", params, endpoints, "blackboard")
	if !ok {
		c.report(e.Path+"/data", c.head(e.Path), diag.Error, CodeRetentionRequired,
			fmt.Sprintf("blackboard interactions need a retention policy (spec §8) and edge %q has none; add params.retention: {keep_last_n: %d} or {keep_last_days: 7}", e.ID, DefaultKeepLastN),
			setFix(c.f, fmt.Sprintf("Add params.retention: {keep_last_n: %d}", DefaultKeepLastN), pp, def))
		return
	}
	if at == "" {
		at = pp
	}
	m, isMap := v.(map[string]any)
	good := false
	if isMap {
		for _, k := range []string{"keep_last_n", "keep_last_days"} {
			if n, ok := number(m[k]); ok && n >= 1 && n == float64(int64(n)) {
				good = true
			}
		}
	}
	if !good {
		c.report(at, c.at(at), diag.Error, CodeRetentionRequired,
			fmt.Sprintf("retention must be {keep_last_n: N} or {keep_last_days: N} with a whole N of at least 1, e.g. {keep_last_n: %d}", DefaultKeepLastN),
			setFix(c.f, fmt.Sprintf("Set retention: {keep_last_n: %d}", DefaultKeepLastN), at, def))
	}
}

func (c *checker) rateLimit(e *flow.Edge, topology string, params map[string]any, endpoints []string) {
	pp := e.Path + "/data/params/rate_limit_per_min"
	v, at, ok := c.systemParam("rate_limit_per_min", params, endpoints, "broker", "router")
	if !ok {
		c.report(e.Path+"/data", c.head(e.Path), diag.Error, CodeRateLimitRequired,
			fmt.Sprintf("%s interactions need a rate limit (spec §8) and edge %q has none; add params.rate_limit_per_min: %d", topology, e.ID, DefaultRateLimitPerMin),
			setFix(c.f, fmt.Sprintf("Add params.rate_limit_per_min: %d", DefaultRateLimitPerMin), pp, DefaultRateLimitPerMin))
		return
	}
	if at == "" {
		at = pp
	}
	if n, ok := number(v); ok && n >= 1 {
		return
	}
	c.report(at, c.at(at), diag.Error, CodeRateLimitRequired,
		fmt.Sprintf("rate_limit_per_min must be a number of messages per minute, at least 1; the default is %d", DefaultRateLimitPerMin),
		setFix(c.f, fmt.Sprintf("Set rate_limit_per_min: %d", DefaultRateLimitPerMin), at, DefaultRateLimitPerMin))
}
