package gateway

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/tally"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input       float64 `json:"input"`       // input tokens not read from a cache
	CachedInput float64 `json:"cachedInput"` // cache reads
	CacheWrite  float64 `json:"cacheWrite"`  // cache writes (Anthropic's five-minute ones)
	// CacheWrite1h prices Anthropic's one-hour cache writes; when not given, twice Input, as
	// Anthropic prices them.
	CacheWrite1h float64 `json:"cacheWrite1h,omitempty"`
	Output       float64 `json:"output"` // output tokens, reasoning included
	// LongContext prices a call whose input is over its Above tokens (Gemini 2.5 Pro's
	// prices double past 200,000).
	LongContext *LongPrice `json:"longContext,omitempty"`
}

// LongPrice is a model's price past a number of input tokens.
type LongPrice struct {
	Above        int64   `json:"above"`
	Input        float64 `json:"input"`
	CachedInput  float64 `json:"cachedInput"`
	CacheWrite   float64 `json:"cacheWrite"`
	CacheWrite1h float64 `json:"cacheWrite1h,omitempty"`
	Output       float64 `json:"output"`
}

// at is the price of a call with in input tokens.
func (p Price) at(in int64) Price {
	if l := p.LongContext; l != nil && in > l.Above {
		return Price{Input: l.Input, CachedInput: l.CachedInput, CacheWrite: l.CacheWrite, CacheWrite1h: l.CacheWrite1h, Output: l.Output}
	}
	return p
}

// hourWrite is what a one-hour cache write costs.
func (p Price) hourWrite() float64 {
	if p.CacheWrite1h > 0 {
		return p.CacheWrite1h
	}
	return 2 * p.Input
}

func (p Price) negative() bool {
	l := p.LongContext
	return p.Input < 0 || p.CachedInput < 0 || p.CacheWrite < 0 || p.CacheWrite1h < 0 || p.Output < 0 ||
		(l != nil && (l.Above < 0 || l.Input < 0 || l.CachedInput < 0 || l.CacheWrite < 0 || l.CacheWrite1h < 0 || l.Output < 0))
}

// Pricing is a price per model name, per provider. A model is priced by its own name, or,
// for a dated snapshot ("gpt-5-2025-08-07", "claude-sonnet-4-5-20250929"), by its name
// without the date. Never by a shorter name it starts with: gpt-5-pro costs twelve times
// gpt-5. A model the table does not know costs the dearest price of its provider's entries
// (the "" entry among them), each kind of token apart, so a limit errs on stopping early.
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

// snapshotDate is the date a snapshot's name ends in: -2025-08-07 (OpenAI), -20250929 or
// @20250929 (Anthropic, Vertex), -05-20 or -09-2025 (Gemini's previews), -001 (Gemini).
var snapshotDate = regexp.MustCompile(`(-\d{4}-\d{2}-\d{2}|[-@]\d{8}|-\d{2}-\d{2}|-\d{2}-\d{4}|-\d{3})$`)

// price finds a model's price (priced: the table names it; otherwise it is the provider's
// dearest); ok is false when the provider has no entry at all.
func (p Pricing) price(prov Provider, model string) (pr Price, priced, ok bool) {
	models := p[prov]
	if len(models) == 0 {
		return Price{}, false, false
	}
	if pr, found := models[model]; found && model != "" {
		return pr, true, true
	}
	if base := snapshotDate.ReplaceAllString(model, ""); base != model && base != "" {
		if pr, found := models[base]; found {
			return pr, true, true
		}
	}
	return dearest(models), false, true
}

// dearest is, for each kind of token, the highest price any entry names (long contexts
// included).
func dearest(models map[string]Price) Price {
	var d Price
	for _, m := range models {
		for _, x := range []Price{m, m.at(1 << 62)} {
			d = Price{Input: max(d.Input, x.Input), CachedInput: max(d.CachedInput, x.CachedInput), CacheWrite: max(d.CacheWrite, x.CacheWrite),
				CacheWrite1h: max(d.CacheWrite1h, x.CacheWrite1h), Output: max(d.Output, x.Output)}
		}
	}
	return d
}

// Cost prices a response's usage.
func (p Pricing) Cost(prov Provider, model string, u Usage) (float64, bool) {
	pr, _, ok := p.price(prov, model)
	if !ok {
		return 0, false
	}
	pr = pr.at(tally.Sum(u.Input, u.CachedInput, u.CacheWrite))
	hour := min(u.CacheWrite1h, u.CacheWrite)
	usd := float64(u.Input)*pr.Input + float64(u.CachedInput)*pr.CachedInput +
		float64(u.CacheWrite-hour)*pr.CacheWrite + float64(hour)*pr.hourWrite() + float64(u.Output)*pr.Output
	return tally.USD(usd / 1e6), true
}

// perToken is what one input token (billed the dearest way it can be: written to a cache,
// for an hour when the request asks so, read, or not) and one output token of a call with in
// input tokens cost, at most. A model the table does not price at all (no entry for its
// provider) costs nothing here: ok is false.
func (p Pricing) perToken(prov Provider, model string, in int64, hourCache bool) (inUSD, outUSD float64, ok bool) {
	pr, _, ok := p.price(prov, model)
	if !ok {
		return 0, 0, false
	}
	pr = pr.at(in)
	input := max(pr.Input, pr.CachedInput, pr.CacheWrite)
	if hourCache {
		input = max(input, pr.hourWrite())
	}
	return input / 1e6, pr.Output / 1e6, true
}

// Price is what the gateway charges for a model (its table, overrides included); priced is
// false when the table does not name it (it is then its provider's dearest).
func (g *Gateway) Price(p Provider, model string) (pr Price, priced bool) {
	pr, priced, _ = g.o.Pricing.price(p, model)
	return pr, priced
}
