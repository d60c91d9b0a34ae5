package gateway

import (
	"context"
	"strings"
	"testing"
)

// What doctor is told one call sets aside is what the gateway reserves for a request of that
// size, and the limits it names are those Reserve refuses, in Reserve's words: each limit and
// each thing it counts that cannot hold one call, none that can.
func TestOneCallIsWhatTheGatewayReserves(t *testing.T) {
	g := startGateway(t, Options{})
	body := `{"model":"claude-opus-5-5","max_tokens":128000,"messages":[{"role":"user","content":"` + strings.Repeat("x", 40_000) + `"}]}`
	r, err := readModelRequest(endpoints[0], "/v1/messages", []byte(body), false)
	if err != nil {
		t.Fatal(err)
	}
	w := g.worstOf(r)
	c := DefaultPricing().OneCall(Anthropic, "claude-opus-5-5", len(body))
	if c.USD() != w.usd(w.minOut) || c.Tokens() != w.tokens(w.minOut) || !c.Priced || c.Price.Output != 20 {
		t.Fatalf("one call: $%v %d tokens (priced %v, %+v); the gateway reserves $%v %d", c.USD(), c.Tokens(), c.Priced, c.Price, w.usd(w.minOut), w.tokens(w.minOut))
	}
	l := NewLedger()
	l.SetRunLimit(Limit{USD: 0.1, Tokens: 2_000_000})
	l.SetInteractionLimit("i", Limit{Tokens: 500})
	l.SetAgentLimit("coder", Limit{USD: 5, Calls: 1})
	hits := l.BelowOneCall("coder", "i", c)
	if len(hits) != 2 {
		t.Fatalf("hits %+v, want the run's usd and the interaction's tokens", hits)
	}
	for i, set := range []func(l *Ledger){func(l *Ledger) { l.SetRunLimit(Limit{USD: 0.1}) }, func(l *Ledger) { l.SetInteractionLimit("i", Limit{Tokens: 500}) }} {
		alone := newLedger()
		set(alone)
		_, hit, _ := alone.Reserve(context.Background(), "coder", "i", w)
		if hit == nil || hit.Message != hits[i].Message {
			t.Errorf("doctor says %q, the gateway refuses %v", hits[i].Message, hit)
		}
	}
	if c := DefaultPricing().OneCall(OpenAI, "gpt-not-in-the-table", 1000); c.Priced || c.Price.Output != 600 {
		t.Errorf("an unknown model: priced %v at %+v, want OpenAI's dearest", c.Priced, c.Price)
	}
}
