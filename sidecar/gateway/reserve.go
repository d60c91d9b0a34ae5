package gateway

import (
	"context"
	"fmt"
	"math"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/tally"
)

// Reservations: a model call reserves its worst case against every limit before it is sent,
// under the ledger's one lock, and gives it back for what it cost when it ends; calls made
// together never pass a limit together (docs/agents.md, Gateway, "Spend: reserved, then
// settled").

// worst is a model call's worst case, as Reserve sizes it.
type worst struct {
	// fixedTokens are the tokens the call may use whatever its cap: its input, and output
	// the cap does not cover; fixedUSD is their price at the dearest way they can be billed.
	fixedTokens int64
	fixedUSD    float64
	out         int64   // the output tokens the request asks for (its cap, or the default cap)
	minOut      int64   // the fewest output tokens worth a call: below, it is refused
	outUSD      float64 // the price of one output token
	// capped: the limits may lower out (the request's cap is then set to the grant);
	// otherwise the call is reserved as it is or refused.
	capped bool
	// model and inUSD (one input token's dearest price) are for the message that says a
	// limit is below one call.
	model string
	inUSD float64
}

func (w worst) usd(out int64) float64 { return tally.AddUSD(w.fixedUSD, float64(out)*w.outUSD) }

func (w worst) tokens(out int64) int64 { return tally.Add(w.fixedTokens, out) }

// Grant is what Reserve reserved for one call.
type Grant struct {
	agent, interaction string
	USD                float64
	Tokens             int64
	// Out is the output tokens reserved: the cap the forwarded request carries.
	Out int64
	// Limited: a limit in dollars or tokens applies (the request's cap is then enforced).
	Limited bool
}

func limited(bs []bound) bool {
	for _, b := range bs {
		if b.limit.USD > 0 || b.limit.Tokens > 0 {
			return true
		}
	}
	return false
}

// Hit is a limit a call was refused for.
type Hit struct {
	Scope   string // run, interaction, agent
	What    string // usd, tokens, calls
	Message string
}

// Reserve reserves w against every limit of agent in interaction, lowering its output to
// what they leave room for (when w.capped). A call that fits only once calls in flight have
// settled waits for them (until ctx ends); one that does not fit even then is refused, with
// the limit it would pass.
func (l *Ledger) Reserve(ctx context.Context, agent, interaction string, w worst) (Grant, *Hit, error) {
	for {
		l.mu.Lock()
		bs := l.bounds(agent, interaction)
		out, hit := fit(bs, w, true)
		if hit == nil {
			g := Grant{agent: agent, interaction: interaction, Out: out, USD: w.usd(out), Tokens: w.tokens(out), Limited: limited(bs)}
			for _, sc := range scopes(agent, interaction) {
				h := l.held[sc]
				if h == nil {
					h = &hold{}
					l.held[sc] = h
				}
				h.usd, h.tokens, h.calls = tally.AddUSD(h.usd, g.USD), tally.Add(h.tokens, g.Tokens), h.calls+1
			}
			l.mu.Unlock()
			return g, nil, nil
		}
		if _, alone := fit(bs, w, false); alone != nil {
			l.mu.Unlock()
			return Grant{}, alone, nil // no room even once every call in flight has settled
		}
		wait := l.settled
		l.waiting++
		l.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
		}
		l.mu.Lock()
		l.waiting--
		l.mu.Unlock()
		if ctx.Err() != nil {
			return Grant{}, nil, ctx.Err()
		}
	}
}

// waitingCalls is how many calls wait for calls in flight to settle.
func (l *Ledger) waitingCalls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting
}

// Settle gives g back and charges what the call cost instead (calls: 1 for a model call).
func (l *Ledger) Settle(g Grant, usd float64, u Usage, calls int) (a, in, run Spend) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, sc := range scopes(g.agent, g.interaction) {
		if h := l.held[sc]; h != nil {
			h.usd, h.tokens, h.calls = tally.SubUSD(h.usd, g.USD), tally.Sub(h.tokens, g.Tokens), max(h.calls-1, 0)
		}
	}
	l.addLocked(g.agent, g.interaction, usd, u, calls)
	return *l.agents[g.agent], *l.interacts[g.interaction], l.run
}

// fit finds the output w may have within every bound, counting what calls in flight hold
// when withHeld, or the first limit it would pass.
func fit(bs []bound, w worst, withHeld bool) (int64, *Hit) {
	out := w.out
	for _, b := range bs {
		var h hold
		if withHeld {
			h = b.held
		}
		lim, s := b.limit, b.spent
		if lim.Calls > 0 && int64(s.Calls)+h.calls+1 > lim.Calls {
			return 0, b.hit("calls", fmt.Sprintf("%d model calls, made %d", lim.Calls, s.Calls))
		}
		if lim.Tokens > 0 {
			room := lim.Tokens - tally.Add(s.Tokens, h.tokens) - w.fixedTokens
			if out = fitOut(out, room, w); out < 0 {
				if w.tokens(w.minOut) > lim.Tokens {
					return 0, b.belowOneCall("tokens", w)
				}
				return 0, b.hit("tokens", fmt.Sprintf("%d tokens, spent %d; this call may use up to %d", lim.Tokens, s.Tokens, w.tokens(w.minOut)))
			}
		}
		if lim.USD > 0 {
			left := lim.USD - tally.AddUSD(s.USD, h.usd) - w.fixedUSD
			room := int64(1e15)
			switch {
			case left < 0:
				room = -1
			case w.outUSD > 0:
				room = int64(min(math.Floor(left/w.outUSD), 1e15))
			}
			if out = fitOut(out, room, w); out < 0 {
				if w.usd(w.minOut) > lim.USD {
					return 0, b.belowOneCall("usd", w)
				}
				return 0, b.hit("usd", fmt.Sprintf("$%.2f, spent $%.2f; this call may cost up to $%.2f", lim.USD, s.USD, w.usd(w.minOut)))
			}
		}
	}
	return out, nil
}

// fitOut is the output a call may have with room tokens left for it: out itself when it
// fits, less when the call may be capped and at least minOut fits, else -1.
func fitOut(out, room int64, w worst) int64 {
	switch {
	case out <= room:
		return out
	case w.capped && room >= w.minOut:
		return room
	}
	return -1
}

func (b bound) hit(what, numbers string) *Hit {
	return &Hit{Scope: b.sc.kind, What: what, Message: b.message(what, numbers)}
}

// belowOneCall is the refusal of a call that b's limit could not hold even with nothing
// spent: it names the limit's field, what one call of the model sets aside and why, and what
// to raise (the least a run needs is one call; a run makes many).
func (b bound) belowOneCall(what string, w worst) *Hit {
	whose, field := b.field(what)
	var limit, need string
	if what == "usd" {
		limit, need = fmt.Sprintf("$%.2f", b.limit.USD), fmt.Sprintf("$%.2f", math.Ceil(w.usd(w.minOut)*100)/100)
	} else {
		limit, need = fmt.Sprintf("%d tokens", b.limit.Tokens), fmt.Sprintf("%d tokens", w.tokens(w.minOut))
	}
	model := "its model"
	if w.model != "" { // the agent's words: quoted, and cut to a name's length
		model = quoteShort(w.model)
	}
	m := fmt.Sprintf("spend limit below one model call: %s, %s, is %s, and one call of %s sets aside %s before it is sent "+
		"(%d input tokens, its request counted a token a byte, at $%.2f per million, and at least %d output tokens at $%.2f per million); "+
		"raise %s well above %s (a run makes many calls)",
		whose, field, limit, model, need, w.fixedTokens, w.inUSD*1e6, w.minOut, w.outUSD*1e6, field, need)
	return &Hit{Scope: b.sc.kind, What: what, Message: m}
}
