package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// budgetCall is one API's streamed model call as an agent sends it through the gateway.
type budgetCall struct {
	name, path, body, header string
}

var budgetCalls = []budgetCall{
	{"anthropic", "/v1/messages?beta=true", `{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,"messages":[{"role":"user","content":"write"}]}`, "X-Api-Key"},
	{"responses", "/v1/responses", `{"model":"gpt-5","stream":true,"input":[{"role":"user","content":"write"}]}`, "Authorization"},
	{"chat", "/v1/chat/completions", `{"model":"gpt-5","stream":true,"messages":[{"role":"user","content":"write"}]}`, "Authorization"},
	{"gemini", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"write"}]}]}`, "X-Goog-Api-Key"},
}

func (c budgetCall) provider() Provider {
	switch {
	case strings.HasPrefix(c.path, "/v1/messages"):
		return Anthropic
	case strings.HasPrefix(c.path, "/v1beta/"):
		return Gemini
	}
	return OpenAI
}

// send posts c through base with token and reads the answer whole (hangUp: only its first
// bytes, then the agent hangs up).
func (c budgetCall) send(t *testing.T, base, token string, hangUp bool) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+c.path, strings.NewReader(c.body))
	req.Header.Set("Content-Type", "application/json")
	if c.header == "Authorization" {
		req.Header.Set("Authorization", "Bearer "+token)
	} else {
		req.Header.Set(c.header, token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	if hangUp {
		b := make([]byte, 16)
		n, _ := resp.Body.Read(b)
		return resp.StatusCode, string(b[:n])
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func gatewayFor(t *testing.T, b *biller, p Provider) (*Gateway, *charges, *refusals) {
	t.Helper()
	var ch charges
	var ref refusals
	g := startGateway(t, Options{Upstream: map[Provider]string{p: b.srv.URL}, OnCharge: ch.add, OnRefuse: ref.add})
	return g, &ch, &ref
}

// Fifty calls made together against an agent's limit, each stream held open by the provider
// until every call is in flight, waiting at the gateway, or refused: the provider's bill
// stays within the limit, for each API, and the ledger's spend is never below the bill.
func TestParallelCallsNeverPassALimit(t *testing.T) {
	for _, c := range budgetCalls {
		t.Run(c.name, func(t *testing.T) {
			b := startBiller(t, 20_000)
			b.hold = make(chan struct{})
			g, _, ref := gatewayFor(t, b, c.provider())
			const limit = 1.0
			g.Ledger.SetAgentLimit("coder", Limit{USD: limit})
			token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{c.provider(): realKey}})
			var wg sync.WaitGroup
			var mu sync.Mutex
			ok := 0
			start := make(chan struct{})
			for range 50 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					if status, _ := c.send(t, base, token, false); status == 200 {
						mu.Lock()
						ok++
						mu.Unlock()
					}
				}()
			}
			close(start)
			// Every call is somewhere: held by the provider, waiting at the gateway, or refused.
			waitFor(t, func() bool { return b.inFlight()+g.Ledger.waitingCalls()+len(ref.all()) == 50 })
			close(b.hold)
			wg.Wait()
			bill, calls := b.total()
			spent := g.Ledger.Agent("coder").USD
			t.Logf("%d calls billed $%.4f (%d answered, %d refused); the gateway charged $%.4f", calls, bill, ok, len(ref.all()), spent)
			if bill > limit || calls == 0 || len(ref.all()) == 0 {
				t.Errorf("the provider billed $%.4f for %d calls against a limit of $%.2f (%d refused)", bill, calls, limit, len(ref.all()))
			}
			if spent < bill-1e-9 {
				t.Errorf("the gateway charged $%.4f, less than the provider billed ($%.4f)", spent, bill)
			}
			for _, r := range ref.all() {
				if r.Limit == nil || r.Limit.Scope != "agent" || !strings.HasPrefix(r.Message, "spend limit reached: agent coder runtime.maxCostUsd $1.00") {
					t.Errorf("refusal %+v", r)
				}
			}
		})
	}
}

// waitFor waits until cond holds (a failure's bound, not a wait for success).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the condition never held")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A stream the agent hangs up on before its usage, one the provider cuts, and one without
// any usage: each is charged at least what the provider billed, and says it is estimated.
func TestCallsWithoutUsageAreCharged(t *testing.T) {
	for _, mode := range []string{"hangup", "cut", "nousage"} {
		for _, c := range budgetCalls {
			t.Run(mode+"/"+c.name, func(t *testing.T) {
				b := startBiller(t, 20_000)
				if mode == "hangup" { // the stream stays open until the agent has gone
					b.hold = make(chan struct{})
					t.Cleanup(func() { close(b.hold) })
				} else {
					b.mode = mode
				}
				g, ch, _ := gatewayFor(t, b, c.provider())
				g.Ledger.SetRunLimit(Limit{USD: 100})
				token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{c.provider(): realKey}})
				c.send(t, base, token, mode == "hangup")
				waitFor(t, func() bool { return len(ch.all()) == 1 })
				bill, _ := b.total()
				got := ch.all()[0]
				if got.USD < bill || got.Estimated == "" {
					t.Errorf("charged $%.4f (reserved $%.4f, estimated %q) for a call billed $%.4f", got.USD, got.Reserved, got.Estimated, bill)
				}
				if s := g.Ledger.Run(); s.USD != got.USD || s.Calls != 1 {
					t.Errorf("run spend %+v", s)
				}
			})
		}
	}
}

// Chat completions stream their usage only when asked: the gateway asks, so the call is
// metered exactly, not estimated.
func TestChatStreamsAreAskedForUsage(t *testing.T) {
	b := startBiller(t, 500)
	g, ch, _ := gatewayFor(t, b, OpenAI)
	token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{OpenAI: realKey}})
	budgetCalls[2].send(t, base, token, false)
	reqs := b.requests()
	if len(reqs) != 1 || fmt.Sprint(reqs[0].body["stream_options"]) != "map[include_usage:true]" {
		t.Fatalf("the provider got %+v", reqs)
	}
	if cs := ch.all(); len(cs) != 1 || cs[0].Estimated != "" || cs[0].Usage.Output != 500 {
		t.Errorf("charges %+v", cs)
	}
}

// A provider that reports counts no call could reach is not believed: the call is charged
// its reservation, and the totals stay positive and bounded.
func TestAbsurdUsageRefused(t *testing.T) {
	b := startBiller(t, 100)
	b.mode = "absurd"
	g, ch, _ := gatewayFor(t, b, Anthropic)
	g.Ledger.SetRunLimit(Limit{Tokens: 1_000_000_000})
	token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	for range 3 {
		budgetCalls[0].send(t, base, token, false)
	}
	cs := ch.all()
	if len(cs) != 3 || !strings.HasPrefix(cs[0].Estimated, "the provider's usage was refused: a token count of 9000000000000000000") {
		t.Fatalf("charges %+v", cs)
	}
	if s := g.Ledger.Run(); s.Tokens <= 0 || s.USD <= 0 || s.Tokens != 3*cs[0].Usage.Tokens() {
		t.Errorf("run spend %+v", s)
	}
}

// The ledger's counters saturate: two huge reports make a huge total, never a negative one,
// and the limit is then reached.
func TestLedgerSaturates(t *testing.T) {
	l := newLedger()
	l.SetRunLimit(Limit{Tokens: 1000})
	huge := Usage{Input: 1 << 62, Output: 1 << 62}
	l.Add("a", "i", 1e300, huge, 1)
	l.Add("a", "i", 1e300, huge, 1)
	s := l.Run()
	if s.Tokens <= 0 || s.USD <= 0 || s.Usage.Input <= 0 || l.Over("a", "i") == "" {
		t.Errorf("spend %+v, over %q", s, l.Over("a", "i"))
	}
}

// A call asking for far more output than the limit leaves room for is sent with its cap
// lowered to what fits (and a request with no cap gets one): the provider, which honours the
// cap, bills within the limit.
func TestOutputCapLoweredToTheLimit(t *testing.T) {
	for _, c := range budgetCalls {
		t.Run(c.name, func(t *testing.T) {
			b := startBiller(t, 1_000_000)
			g, _, _ := gatewayFor(t, b, c.provider())
			g.Ledger.SetAgentLimit("coder", Limit{USD: 0.5})
			token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{c.provider(): realKey}})
			huge := c
			huge.body = strings.Replace(c.body, `"max_tokens":32000`, `"max_tokens":1e9`, 1)
			for range 5 {
				huge.send(t, base, token, false)
			}
			bill, calls := b.total()
			if bill > 0.5 || calls == 0 {
				t.Errorf("billed $%.4f for %d calls against $0.50", bill, calls)
			}
			for _, r := range b.requests() {
				if cap := outputCap(r.body); cap <= 0 || cap >= 1_000_000 {
					t.Errorf("a call reached the provider with the output cap %d", cap)
				}
			}
		})
	}
}

// Without a limit in dollars or tokens, the request is sent as it was (no cap is added).
func TestNoCapWithoutALimit(t *testing.T) {
	b := startBiller(t, 10)
	g, _, _ := gatewayFor(t, b, OpenAI)
	token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{OpenAI: realKey}})
	budgetCalls[1].send(t, base, token, false)
	if r := b.requests(); len(r) != 1 || outputCap(r[0].body) != 0 {
		t.Errorf("requests %+v", r)
	}
}

// A request naming a model the person priced at nothing is charged at the price of the model
// the provider says it served.
func TestModelPricedAtNothing(t *testing.T) {
	b := startBiller(t, 1000)
	b.model = "claude-opus-4-1"
	var ch charges
	free := DefaultPricing().With(Pricing{Anthropic: {"free-model": {}}})
	g := startGateway(t, Options{Upstream: map[Provider]string{Anthropic: b.srv.URL}, Pricing: free, OnCharge: ch.add})
	token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	c := budgetCalls[0]
	c.body = strings.Replace(c.body, "claude-sonnet-4-5", "free-model", 1)
	c.send(t, base, token, false)
	bill, _ := b.total()
	if cs := ch.all(); len(cs) != 1 || cs[0].USD < bill || bill == 0 {
		t.Errorf("charged %+v for a bill of $%.4f", cs, bill)
	}
}

// Content whose tokens the request's size does not bound (a PDF, a file the provider holds,
// spelled with escapes too) is reserved as the whole context window.
func TestUnboundedInputReservesTheWindow(t *testing.T) {
	for _, part := range []string{
		`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}}`,
		`{"type":"docu\u006dent","source":{"type":"text","media_type":"text/plain","data":"x"}}`,
		`{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}`,
	} {
		body := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":[` + part + `]}]}`
		r, err := readModelRequest(endpoints[0], "/v1/messages", []byte(body), true) // an image by URL: network open
		if err != nil || r.in != windows[Anthropic] {
			t.Errorf("%s: input bound %d (%v), want the window %d", part, r.in, err, windows[Anthropic])
		}
	}
	plain := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"a document about a url"}]}`
	if r, _ := readModelRequest(endpoints[0], "/v1/messages", []byte(plain), false); r.in != int64(len(plain))+overheadTokens {
		t.Errorf("plain text: input bound %d", r.in)
	}
}

// Reservations are taken and given back exactly: a call refused, waiting or settled leaves
// nothing held.
func TestReservationsSettle(t *testing.T) {
	l := newLedger()
	l.SetAgentLimit("a", Limit{USD: 1})
	w := worst{fixedTokens: 100, fixedUSD: 0.1, out: 1000, minOut: 10, outUSD: 0.0001, capped: true}
	g1, hit, _ := l.Reserve(context.Background(), "a", "i", w)
	g2, hit2, _ := l.Reserve(context.Background(), "a", "i", w)
	if hit != nil || hit2 != nil || g1.USD != 0.2 {
		t.Fatalf("grants %+v %+v, hits %v %v", g1, g2, hit, hit2)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		l.Reserve(ctx, "a", "i", worst{fixedTokens: 100, fixedUSD: 0.7, out: 0, minOut: 0, outUSD: 0.0001})
		done <- ctx.Err()
	}()
	waitFor(t, func() bool { return l.waitingCalls() == 1 })
	cancel()
	<-done
	l.Settle(g1, 0.05, Usage{Input: 10}, 1)
	l.Settle(g2, 0.05, Usage{Input: 10}, 1)
	if h := l.held[scope{"agent", "a"}]; h.usd != 0 || h.tokens != 0 || h.calls != 0 || l.Agent("a").USD != 0.1 {
		t.Errorf("held %+v after every call settled; spent %+v", h, l.Agent("a"))
	}
}

// A call asking for several answers reserves each answer's output; one asking for more than
// any API gives is refused.
func TestAnswersMultiplyTheOutput(t *testing.T) {
	chat := endpoints[3]
	r, err := readModelRequest(chat, "/v1/chat/completions", []byte(`{"model":"gpt-5","n":5,"max_completion_tokens":1000,"messages":[]}`), false)
	if err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, Options{})
	if w := g.worstOf(r); w.out != 5000 || w.minOut != 5000 {
		t.Errorf("worst %+v", w)
	}
	if err := r.enforce(Grant{Limited: true, Out: 2500}); err != nil || r.capSet != 500 {
		t.Errorf("cap %d (%v), want 500 an answer", r.capSet, err)
	}
	r, _ = readModelRequest(chat, "/v1/chat/completions", []byte(`{"model":"gpt-5","n":100000,"messages":[]}`), false)
	if err := r.enforce(Grant{Limited: true, Out: 1 << 40}); err == nil {
		t.Error("100,000 answers passed")
	}
}

// Gemini 2.5 Pro's prices double past 200,000 input tokens; a call over it is priced so.
func TestLongContextPrices(t *testing.T) {
	p := DefaultPricing()
	short, _ := p.Cost(Gemini, "gemini-2.5-pro", Usage{Input: 100_000, Output: 1000})
	long, _ := p.Cost(Gemini, "gemini-2.5-pro", Usage{Input: 300_000, Output: 1000})
	if want := (300_000*2.5 + 1000*15) / 1e6; long != want || short != (100_000*1.25+1000*10)/1e6 {
		t.Errorf("long $%v (want $%v), short $%v", long, want, short)
	}
}

// A limit below what one call sets aside is refused saying so: the flow's field, the model,
// what one call needs and why; a limit that holds one call but not this one after what was
// spent says it was reached. The pinned Claude Code's default model is priced as it prices it.
func TestLimitBelowOneCallSaysSo(t *testing.T) {
	g := startGateway(t, Options{})
	body := `{"model":"claude-opus-5-5","max_tokens":128000,"messages":[{"role":"user","content":"` + strings.Repeat("x", 50_000) + `"}]}`
	r, err := readModelRequest(endpoints[0], "/v1/messages", []byte(body), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, priced := g.Price(Anthropic, "claude-opus-5-5"); !priced {
		t.Fatal("claude-opus-5-5 is not in the price table")
	}
	w := g.worstOf(r)
	need := w.usd(w.minOut) // 52,1xx input tokens at $5 (a cache write) and 1,024 at $20 per million
	if need < 0.26 || need > 0.30 {
		t.Fatalf("one call of claude-opus-5-5 sets aside $%.4f", need)
	}
	for _, c := range []struct {
		set  func(l *Ledger)
		want []string
	}{
		{func(l *Ledger) { l.SetRunLimit(Limit{USD: 0.1}) }, []string{"spend limit below one model call: the run's budget, policy.budget.usd, is $0.10", `"claude-opus-5-5" sets aside $0.29`, "52", "raise policy.budget.usd well above $0.29"}},
		{func(l *Ledger) { l.SetRunLimit(Limit{Tokens: 10_000}) }, []string{"policy.budget.tokens, is 10000 tokens", "sets aside 53"}},
		{func(l *Ledger) { l.SetAgentLimit("coder", Limit{USD: 0.2}) }, []string{"agent coder's limit, runtime.maxCostUsd, is $0.20"}},
		{func(l *Ledger) { l.SetInteractionLimit("i", Limit{Tokens: 500}) }, []string{"interaction i's limit, max_tokens, is 500 tokens"}},
		{func(l *Ledger) { l.SetRunLimit(Limit{USD: 1}); l.Add("coder", "i", 0.9, Usage{}, 1) }, []string{"spend limit reached: run budget $1.00, spent $0.90; this call may cost up to $0.28"}},
	} {
		l := newLedger()
		c.set(l)
		_, hit, _ := l.Reserve(context.Background(), "coder", "i", w)
		if hit == nil {
			t.Errorf("not refused (want %q)", c.want[0])
			continue
		}
		for _, s := range c.want {
			if !strings.Contains(hit.Message, s) {
				t.Errorf("%q lacks %q", hit.Message, s)
			}
		}
	}
}

// A model name is the agent's: in the refusal it is quoted (no control character reaches a
// log or a terminal raw) and cut to a name's length.
func TestLimitBelowOneCallQuotesTheModel(t *testing.T) {
	w := worst{fixedTokens: 1000, fixedUSD: 1, minOut: 10, outUSD: 0.001, capped: true, model: "\x1b[2Jclaude" + strings.Repeat("é", 5000)}
	l := newLedger()
	l.SetRunLimit(Limit{USD: 0.5})
	_, hit, _ := l.Reserve(context.Background(), "coder", "i", w)
	if hit == nil || strings.Contains(hit.Message, "\x1b") || !strings.Contains(hit.Message, `"\x1b[2Jclaude`) || len(hit.Message) > 600 {
		t.Errorf("refusal %q", hit)
	}
}
