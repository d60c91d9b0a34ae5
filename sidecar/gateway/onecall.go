package gateway

// What one model call sets aside at the least, and the limits that cannot hold it, for
// `agentcanvas doctor FLOW` to say before a run what its first call would meet: the same
// worst case (worstOf) and the same refusal (fit, belowOneCall) the gateway uses.

// OneCall is the least one call of a model sets aside before it is sent: a request of a
// given size, text only, and the fewest output tokens a call is sent with.
type OneCall struct {
	w worst
	// Model is the model it is priced as; Priced is false when the table does not name it
	// (it is then priced at its provider's dearest, Price).
	Model  string
	Priced bool
	Price  Price
}

// OneCall is the least a call of model, whose request is size bytes, sets aside.
func (p Pricing) OneCall(prov Provider, model string, size int) OneCall {
	in := inputBound(prov, size, 0, "", 0)
	inUSD, outUSD, _ := p.perToken(prov, model, in, false)
	pr, priced, _ := p.price(prov, model)
	w := worst{fixedTokens: in, fixedUSD: float64(in) * inUSD, out: minOutput, minOut: minOutput, outUSD: outUSD, capped: true, model: model, inUSD: inUSD}
	return OneCall{w: w, Model: model, Priced: priced, Price: pr.at(in)}
}

// USD and Tokens are what c sets aside.
func (c OneCall) USD() float64  { return c.w.usd(c.w.minOut) }
func (c OneCall) Tokens() int64 { return c.w.tokens(c.w.minOut) }

// NewLedger is a ledger with no limits and nothing spent, for setting a flow's limits on and
// asking BelowOneCall.
func NewLedger() *Ledger { return newLedger() }

// BelowOneCall are the refusals every call like c of agent in interaction meets with nothing
// spent: one for each limit (the run's, the interaction's, the agent's) and each thing it
// counts (dollars, tokens) that cannot hold it, in the gateway's own words. Nil when every
// limit holds one call.
func (l *Ledger) BelowOneCall(agent, interaction string, c OneCall) []Hit {
	l.mu.Lock()
	bs := l.bounds(agent, interaction)
	l.mu.Unlock()
	var hits []Hit
	for _, b := range bs {
		for _, alone := range []Limit{{Tokens: b.limit.Tokens}, {USD: b.limit.USD}} {
			if !alone.any() {
				continue
			}
			one := bound{sc: b.sc, name: b.name, limit: alone}
			if _, hit := fit([]bound{one}, c.w, false); hit != nil {
				hits = append(hits, *hit)
			}
		}
	}
	return hits
}
