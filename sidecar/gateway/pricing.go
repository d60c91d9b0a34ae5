package gateway

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/tally"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input       float64 `json:"input"`       // input tokens not read from a cache
	CachedInput float64 `json:"cachedInput"` // cache reads
	CacheWrite  float64 `json:"cacheWrite"`  // cache writes (Anthropic)
	Output      float64 `json:"output"`      // output tokens, reasoning included
	// LongContext prices a call whose input is over its Above tokens (Gemini 2.5 Pro's
	// prices double past 200,000).
	LongContext *LongPrice `json:"longContext,omitempty"`
}

// LongPrice is a model's price past a number of input tokens.
type LongPrice struct {
	Above       int64   `json:"above"`
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cachedInput"`
	CacheWrite  float64 `json:"cacheWrite"`
	Output      float64 `json:"output"`
}

// at is the price of a call with in input tokens.
func (p Price) at(in int64) Price {
	if l := p.LongContext; l != nil && in > l.Above {
		return Price{Input: l.Input, CachedInput: l.CachedInput, CacheWrite: l.CacheWrite, Output: l.Output}
	}
	return p
}

func (p Price) negative() bool {
	l := p.LongContext
	return p.Input < 0 || p.CachedInput < 0 || p.CacheWrite < 0 || p.Output < 0 ||
		(l != nil && (l.Above < 0 || l.Input < 0 || l.CachedInput < 0 || l.CacheWrite < 0 || l.Output < 0))
}

// Pricing is a price per model-name prefix, per provider. The longest prefix of a model's
// name wins; the empty prefix prices the models the table does not know (deliberately at the
// provider's dearest, so a limit errs on stopping early).
type Pricing map[Provider]map[string]Price

//go:embed pricing.json
var pricingJSON []byte

// DefaultPricing is the project's table (pricing.json).
func DefaultPricing() Pricing {
	p, err := ParsePricing(pricingJSON)
	if err != nil {
		panic("gateway: pricing.json: " + err.Error()) // our own file; a test reads it
	}
	return p
}

// ParsePricing reads a table in pricing.json's shape ("_comment" keys are skipped).
func ParsePricing(b []byte) (Pricing, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := Pricing{}
	for k, v := range raw {
		if strings.HasPrefix(k, "_") {
			continue
		}
		p := Provider(k)
		if _, ok := DefaultUpstream[p]; !ok {
			return nil, fmt.Errorf("%q is not a provider (anthropic, openai, gemini)", k)
		}
		var models map[string]Price
		if err := json.Unmarshal(v, &models); err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
		for m, pr := range models {
			if pr.negative() {
				return nil, fmt.Errorf("%s.%q: a price is negative", k, m)
			}
		}
		out[p] = models
	}
	return out, nil
}

// With returns p with over's entries added or replacing p's.
func (p Pricing) With(over Pricing) Pricing {
	out := Pricing{}
	for _, m := range []Pricing{p, over} {
		for prov, models := range m {
			if out[prov] == nil {
				out[prov] = map[string]Price{}
			}
			for name, pr := range models {
				out[prov][name] = pr
			}
		}
	}
	return out
}

// price finds a model's price; ok is false when the provider has no entry at all.
func (p Pricing) price(prov Provider, model string) (Price, bool) {
	best, found := "", false
	var pr Price
	for prefix, x := range p[prov] {
		if strings.HasPrefix(model, prefix) && (!found || len(prefix) > len(best)) {
			best, pr, found = prefix, x, true
		}
	}
	return pr, found
}

// Cost prices a response's usage.
func (p Pricing) Cost(prov Provider, model string, u Usage) (float64, bool) {
	pr, ok := p.price(prov, model)
	if !ok {
		return 0, false
	}
	pr = pr.at(tally.Sum(u.Input, u.CachedInput, u.CacheWrite))
	usd := float64(u.Input)*pr.Input + float64(u.CachedInput)*pr.CachedInput +
		float64(u.CacheWrite)*pr.CacheWrite + float64(u.Output)*pr.Output
	return tally.USD(usd / 1e6), true
}

// perToken is what one input token (billed the dearest way it can be: written to a cache,
// read, or not) and one output token of a call with in input tokens cost, at most. A model
// the table does not price at all (no entry for its provider) costs nothing here: ok is false.
func (p Pricing) perToken(prov Provider, model string, in int64) (inUSD, outUSD float64, ok bool) {
	pr, ok := p.price(prov, model)
	if !ok {
		return 0, 0, false
	}
	pr = pr.at(in)
	return max(pr.Input, pr.CachedInput, pr.CacheWrite) / 1e6, pr.Output / 1e6, true
}

// Price is what the gateway charges for a model (its table, overrides included).
func (g *Gateway) Price(p Provider, model string) (Price, bool) { return g.o.Pricing.price(p, model) }
