package pattern

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Check reports the first problem with a termination, as "field: problem": exactly one of
// type, any, all; a known type; rounds ≥ 1; ms ≥ 1; a threshold in (0,1]; a quality gate with a
// metric, an operator >= or <=, and a value. The validator's invalid-termination rule and the
// template check share it.
func (t Termination) Check() error {
	return t.check("termination")
}

func (t Termination) check(path string) error {
	forms := 0
	if t.Type != "" {
		forms++
	}
	if t.Any != nil {
		forms++
	}
	if t.All != nil {
		forms++
	}
	if forms != 1 {
		return fmt.Errorf("%s: needs exactly one of type, any or all", path)
	}
	for _, list := range []struct {
		key string
		l   []Termination
	}{{"any", t.Any}, {"all", t.All}} {
		if list.l == nil {
			continue
		}
		if len(list.l) == 0 {
			return fmt.Errorf("%s.%s: is empty; list at least one condition", path, list.key)
		}
		for i, c := range list.l {
			if err := c.check(fmt.Sprintf("%s.%s[%d]", path, list.key, i)); err != nil {
				return err
			}
		}
		return nil
	}
	switch t.Type {
	case "max_rounds":
		if t.Rounds < 1 {
			return fmt.Errorf("%s.rounds: must be at least 1", path)
		}
	case "timeout_ms":
		if t.Ms < 1 {
			return fmt.Errorf("%s.ms: must be at least 1", path)
		}
	case "judge_decision":
	case "consensus_threshold":
		if !(t.Threshold > 0 && t.Threshold <= 1) {
			return fmt.Errorf("%s.threshold: must be in (0, 1], got %v", path, t.Threshold)
		}
	case "quality_gate":
		if strings.TrimSpace(t.Metric) == "" {
			return fmt.Errorf("%s.metric: is required for quality_gate", path)
		}
		if t.Op != ">=" && t.Op != "<=" {
			return fmt.Errorf("%s.op: must be \">=\" or \"<=\", got %q", path, t.Op)
		}
		if t.Value == nil {
			return fmt.Errorf("%s.value: is required for quality_gate", path)
		}
	case "max_cost_usd":
		if !(t.USD > 0) {
			return fmt.Errorf("%s.usd: must be more than 0", path)
		}
	case "max_tokens":
		if t.Tokens < 1 {
			return fmt.Errorf("%s.tokens: must be at least 1", path)
		}
	default:
		return fmt.Errorf("%s.type: unknown termination type %q (one of %s)", path, t.Type, strings.Join(TerminationTypes, ", "))
	}
	return nil
}

// Conditions returns the leaf conditions of t, depth first.
func (t Termination) Conditions() []Termination {
	if t.Any == nil && t.All == nil {
		if t.Type == "" {
			return nil
		}
		return []Termination{t}
	}
	var out []Termination
	for _, c := range append(slices.Clone(t.Any), t.All...) {
		out = append(out, c.Conditions()...)
	}
	return out
}

// String renders t compactly, e.g. "any(max_rounds=3, judge_decision, timeout_ms=600000)".
func (t Termination) String() string {
	list := func(name string, l []Termination) string {
		parts := make([]string, len(l))
		for i, c := range l {
			parts[i] = c.String()
		}
		return name + "(" + strings.Join(parts, ", ") + ")"
	}
	switch {
	case t.Any != nil:
		return list("any", t.Any)
	case t.All != nil:
		return list("all", t.All)
	}
	switch t.Type {
	case "max_rounds":
		return fmt.Sprintf("max_rounds=%d", t.Rounds)
	case "timeout_ms":
		return fmt.Sprintf("timeout_ms=%d", t.Ms)
	case "consensus_threshold":
		return fmt.Sprintf("consensus_threshold=%g", t.Threshold)
	case "quality_gate":
		v := "?"
		if t.Value != nil {
			v = fmt.Sprintf("%g", *t.Value)
		}
		return fmt.Sprintf("quality_gate(%s%s%s)", t.Metric, t.Op, v)
	case "max_cost_usd":
		return fmt.Sprintf("max_cost_usd=%g", t.USD)
	case "max_tokens":
		return fmt.Sprintf("max_tokens=%d", t.Tokens)
	}
	return t.Type
}

// The spec §8 policies. An interaction needs a timeout when its topology is debate_judge or
// its pattern is critic_refiner_curator or bilateral_negotiation; a retention policy when its
// topology is blackboard; a rate limit when its topology is broker or router_targeted.

// DefaultRateLimitPerMin is spec §8's default for broker and router interactions.
const DefaultRateLimitPerMin = 10

// RequiresTimeout reports whether spec §8 requires a timeout for this pattern/topology.
func RequiresTimeout(patternID, topology string) bool {
	return topology == "debate_judge" || patternID == "critic_refiner_curator" || patternID == "bilateral_negotiation"
}

// RequiresRetention reports whether spec §8 requires params.retention.
func RequiresRetention(topology string) bool { return topology == "blackboard" }

// RequiresRateLimit reports whether spec §8 requires params.rate_limit_per_min.
func RequiresRateLimit(topology string) bool {
	return topology == "broker" || topology == "router_targeted"
}

// HasTimeout reports whether a timeout_ms condition appears anywhere in term, or
// params.timeout_ms is a number ≥ 1.
func HasTimeout(term Termination, params map[string]any) bool {
	for _, c := range term.Conditions() {
		if c.Type == "timeout_ms" && c.Ms >= 1 {
			return true
		}
	}
	n, ok := Number(params["timeout_ms"])
	return ok && n >= 1
}

// HasRetention reports whether params.retention is {keep_last_n: N} or {keep_last_days: N}, N ≥ 1.
func HasRetention(params map[string]any) bool {
	r, ok := params["retention"].(map[string]any)
	if !ok {
		return false
	}
	for _, k := range []string{"keep_last_n", "keep_last_days"} {
		if n, ok := Number(r[k]); ok && n >= 1 && n == math.Trunc(n) {
			return true
		}
	}
	return false
}

// HasRateLimit reports whether params.rate_limit_per_min is a number > 0.
func HasRateLimit(params map[string]any) bool {
	n, ok := Number(params["rate_limit_per_min"])
	return ok && n > 0
}

// PolicyProblems lists what spec §8 requires of an interaction's edge data and is missing.
func PolicyProblems(patternID, topology string, term Termination, params map[string]any) []string {
	var out []string
	if RequiresTimeout(patternID, topology) && !HasTimeout(term, params) {
		out = append(out, "timeout required: add a {type: timeout_ms, ms: N} condition or params.timeout_ms")
	}
	if RequiresRetention(topology) && !HasRetention(params) {
		out = append(out, "retention required: set params.retention to {keep_last_n: N} or {keep_last_days: N}")
	}
	if RequiresRateLimit(topology) && !HasRateLimit(params) {
		out = append(out, fmt.Sprintf("rate limit required: set params.rate_limit_per_min (default %d)", DefaultRateLimitPerMin))
	}
	return out
}

// Number converts the numeric values decoders produce (JSON, YAML, Go literals) to float64.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint:
		return float64(n), true
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case float32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// normalizeNumbers replaces json.Number with int64 (when integral) or float64, recursively,
// so params marshal as plain numbers in YAML and JSON.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	}
	return v
}

// cloneValue deep-copies the maps and slices of a decoded JSON value.
func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneParams(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case []string:
		return slices.Clone(x)
	}
	return v
}

func cloneParams(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

// Clone deep-copies t, so edges never share condition lists.
func (t Termination) Clone() Termination {
	c := t
	if t.Value != nil {
		v := *t.Value
		c.Value = &v
	}
	if t.Any != nil {
		c.Any = make([]Termination, len(t.Any))
		for i, e := range t.Any {
			c.Any[i] = e.Clone()
		}
	}
	if t.All != nil {
		c.All = make([]Termination, len(t.All))
		for i, e := range t.All {
			c.All[i] = e.Clone()
		}
	}
	return c
}
