package flow

import (
	"slices"

	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// DefaultRoundCap is the engine's round cap: it ends an interaction whose flow sets no bound
// on rounds or time (Unbounded) after this many rounds, so no run loops forever. A flow sets
// its own with params.round_cap.
const DefaultRoundCap = 10

// Settings are what the run engine reads of an interaction: its termination, and every edge's
// params merged in edge order (a later edge's value wins). Each edge may carry its own
// termination, as the canvas lets the user draw it; every one of them is enforced: when the
// edges' conditions differ, the interaction ends as soon as any of them holds (they are
// combined under any:, in edge order, each distinct condition once).
func (in *Interaction) Settings() (*Termination, map[string]any) {
	var conds []*Termination
	params := map[string]any{}
	for _, e := range in.Edges {
		if t := e.Data.Termination; t != nil && !slices.ContainsFunc(conds, t.sameAs) {
			conds = append(conds, t)
		}
		for k, v := range e.Data.Params {
			params[k] = v
		}
	}
	switch len(conds) {
	case 0:
		return nil, params
	case 1:
		return conds[0], params
	}
	return &Termination{Any: conds, Path: in.Path + "/edges"}, params
}

// sameAs reports whether t and u are the same condition (their source paths aside).
func (t *Termination) sameAs(u *Termination) bool {
	eq := func(a, b []*Termination) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if !a[i].sameAs(b[i]) {
				return false
			}
		}
		return true
	}
	return t.Type == u.Type && ptrEq(t.Rounds, u.Rounds) && ptrEq(t.Ms, u.Ms) && ptrEq(t.Threshold, u.Threshold) &&
		t.Metric == u.Metric && t.Op == u.Op && ptrEq(t.Value, u.Value) && ptrEq(t.USD, u.USD) && ptrEq(t.Tokens, u.Tokens) &&
		eq(t.Any, u.Any) && eq(t.All, u.All)
}

func ptrEq[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// Bounded reports whether t ends an interaction on rounds or time whatever its agents do: a
// max_rounds or timeout_ms condition, any: with one such branch, all: whose every branch is
// one. A timeout_ms anywhere in t counts too, since the engine enforces every timeout as a
// deadline. A judge's decision, a consensus, a quality gate or a spend limit depend on what
// the agents do (or report), so they bound nothing.
func (t *Termination) Bounded() bool {
	if t == nil {
		return false
	}
	timed := false
	t.Walk(func(x *Termination) { timed = timed || x.Type == "timeout_ms" })
	return timed || t.roundBounded()
}

func (t *Termination) roundBounded() bool {
	switch {
	case len(t.Any) > 0:
		for _, c := range t.Any {
			if c != nil && c.roundBounded() {
				return true
			}
		}
		return false
	case len(t.All) > 0:
		for _, c := range t.All {
			if c == nil || !c.roundBounded() {
				return false
			}
		}
		return true
	}
	return t.Type == "max_rounds" && t.Rounds != nil && *t.Rounds >= 1
}

// RoundCap is the round cap the engine applies to an interaction with termination t and params:
// params.round_cap when the flow sets one (own is true), none (0) when t or params.timeout_ms
// bound the interaction, else def (the engine's default).
func RoundCap(t *Termination, params map[string]any, def int) (limit int, own bool) {
	if n, ok := WholeParam(params, "round_cap"); ok && n >= 1 {
		return int(n), true
	}
	if t.Bounded() {
		return 0, false
	}
	if n, ok := WholeParam(params, "timeout_ms"); ok && n >= 1 {
		return 0, false
	}
	return def, false
}

// WholeParam is params[key] when it is a whole number.
func WholeParam(params map[string]any, key string) (int64, bool) {
	f, ok := pattern.Number(params[key])
	if !ok || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}
