package gateway

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Attacks on the spend limits: a hostile agent shapes its requests so that the provider
// bills more than the gateway reserved. The scripted provider bills as the real API does
// (its list prices, its tiers, what it stores and reads back); each test fails if the
// provider's bill passes the limit, or the gateway charges less than it.

// listPrices are the providers' own prices for the models the attacks name, in US dollars
// per million tokens: what the scripted provider bills, whatever the gateway's table says.
var listPrices = Pricing{
	OpenAI: {"gpt-5": {Input: 1.25, CachedInput: 0.125, Output: 10}, "gpt-5-pro": {Input: 15, CachedInput: 15, Output: 120},
		"o3-pro": {Input: 20, CachedInput: 20, Output: 80}},
	Gemini: {"gemini-2.5-flash": {Input: 0.3, CachedInput: 0.075, Output: 2.5}, "gemini-2.5-flash-image": {Input: 0.3, CachedInput: 0.075, Output: 30},
		"gemini-2.5-pro": {Input: 1.25, CachedInput: 0.31, Output: 10, LongContext: &LongPrice{Above: 200_000, Input: 2.5, CachedInput: 0.625, Output: 15}}},
	Anthropic: {"claude-sonnet-4-5": {Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15}},
}

// withModel is c asking for model (Gemini names it in its path).
func (c budgetCall) withModel(model string) budgetCall {
	if c.provider() == Gemini {
		c.path = strings.Replace(c.path, "gemini-2.5-flash", model, 1)
	} else {
		c.body = strings.Replace(strings.Replace(c.body, `"gpt-5"`, `"`+model+`"`, 1), `"claude-sonnet-4-5"`, `"`+model+`"`, 1)
	}
	return c
}

// withMembers is c's body with more members at its start (raw JSON, without braces).
func (c budgetCall) withMembers(members string) budgetCall {
	c.body = "{" + members + "," + c.body[1:]
	return c
}

// spendAttack sends calls one after another as coder, under an agent limit of limit, to a
// provider billing with tariff at list prices, and checks the bill stayed within the limit
// and the gateway charged at least the bill.
func spendAttack(t *testing.T, p Provider, limit float64, out int64, tariff func(*billCall), calls ...budgetCall) *biller {
	t.Helper()
	b := startBiller(t, out)
	b.pricing, b.tariff = listPrices, tariff
	g, _, _ := gatewayFor(t, b, p)
	g.Ledger.SetAgentLimit("coder", Limit{USD: limit})
	token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{p: realKey}})
	var statuses []int
	for _, c := range calls {
		st, _ := c.send(t, base, token, false)
		statuses = append(statuses, st)
	}
	bill, n := b.total()
	spent := g.Ledger.Agent("coder").USD
	t.Logf("answers %v; the provider billed $%.4f for %d calls, the gateway charged $%.4f", statuses, bill, n, spent)
	if bill > limit {
		t.Errorf("the provider billed $%.4f against a limit of $%.2f", bill, limit)
	}
	if spent < bill-1e-9 {
		t.Errorf("the gateway charged $%.4f, less than the provider billed ($%.4f)", spent, bill)
	}
	return b
}

func repeat(c budgetCall, n int) []budgetCall {
	out := make([]budgetCall, n)
	for i := range out {
		out[i] = c
	}
	return out
}

// TestAttackModelNameExtendsACheaperOne: a model whose name starts with a cheaper model's
// (gpt-5-pro costs 12 times gpt-5; Gemini's image model's output 12 times flash's) was
// priced as the cheaper one, and reserved so.
func TestAttackModelNameExtendsACheaperOne(t *testing.T) {
	for _, c := range []struct {
		call  budgetCall
		model string
	}{{budgetCalls[1], "gpt-5-pro"}, {budgetCalls[2], "o3-pro"}, {budgetCalls[3], "gemini-2.5-flash-image"}} {
		t.Run(c.model, func(t *testing.T) {
			spendAttack(t, c.call.provider(), 1, 20_000, nil, repeat(c.call.withModel(c.model), 4)...)
		})
	}
}

// TestAttackUnknownModelPricedAtTheDearest: a name the table does not know, whatever it
// starts with, costs at least every price its provider's entries name; a dated snapshot
// costs what its name does.
func TestAttackUnknownModelPricedAtTheDearest(t *testing.T) {
	table := DefaultPricing()
	for prov, models := range table {
		for _, name := range []string{"gpt-5-ultra", "claude-sonnet-4-5-fast", "gemini-2.5-flash-live", "o1-pro-2", "", " gpt-5", "GPT-5"} {
			pr, priced, _ := table.price(prov, name)
			for m, x := range models {
				x = x.at(1 << 62)
				if priced || pr.Input < x.Input || pr.CachedInput < x.CachedInput || pr.CacheWrite < x.CacheWrite || pr.Output < x.Output || pr.hourWrite() < x.hourWrite() {
					t.Errorf("%s %q is priced %+v (priced %v), below %q's %+v", prov, name, pr, priced, m, x)
				}
			}
		}
	}
	for model, want := range map[string]string{"gpt-5-2025-08-07": "gpt-5", "claude-sonnet-4-5-20250929": "claude-sonnet-4-5",
		"claude-opus-4-1@20250805": "claude-opus-4-1", "gemini-2.5-flash-001": "gemini-2.5-flash"} {
		prov := map[byte]Provider{'g': OpenAI, 'c': Anthropic}[model[0]]
		if strings.HasPrefix(model, "gemini") {
			prov = Gemini
		}
		pr, priced, _ := table.price(prov, model)
		if !priced || pr != table[prov][want] {
			t.Errorf("%s is priced %+v (priced %v), want %s's", model, pr, priced, want)
		}
	}
}

// TestAttackPriorityTier: service_tier "priority" (or a project whose default tier is
// priority, which "auto" and no tier at all use) bills twice the standard price.
func TestAttackPriorityTier(t *testing.T) {
	tiers := func(c *billCall) {
		switch c.body["service_tier"] {
		case nil, "auto", "priority":
			c.usd *= 2
		case "flex":
			c.usd /= 2
		}
	}
	for _, c := range []budgetCall{budgetCalls[1], budgetCalls[2]} {
		for _, tier := range []string{`"service_tier":"priority"`, `"service_tier":"auto"`, `"service_tier":null`} {
			t.Run(c.name+"/"+tier, func(t *testing.T) {
				spendAttack(t, OpenAI, 1, 20_000, tiers, repeat(c.withMembers(tier), 6)...)
			})
		}
	}
}

// storedResponses is a Responses API that stores what it answers (store is on unless a
// request turns it off) and bills what a later request refers to as input: a stored
// conversation (previous_response_id) or items (item_reference), any number of times.
func storedResponses() func(*billCall) {
	var mu sync.Mutex
	stored, n := map[string]int64{}, 0
	return func(c *billCall) {
		mu.Lock()
		defer mu.Unlock()
		if c.body["background"] == true && c.body["store"] == false {
			c.status, c.refusal = http.StatusBadRequest, "background mode requires store=true"
			return
		}
		var refs []string
		if id, ok := c.body["previous_response_id"].(string); ok {
			refs = append(refs, id)
		}
		items, _ := c.body["input"].([]any)
		for _, it := range items {
			if m, _ := it.(map[string]any); m["type"] == "item_reference" {
				id, _ := m["id"].(string)
				refs = append(refs, id)
			}
		}
		for _, id := range refs {
			n, ok := stored[id]
			if !ok {
				c.status, c.refusal = http.StatusNotFound, "Item with id '"+id+"' not found."
				return
			}
			c.in += n
		}
		c.usd, _ = listPrices.Cost(OpenAI, c.model, Usage{Input: c.in, Output: c.out})
		if c.body["store"] != false {
			n++
			stored[fmt.Sprintf("msg_%d", n)] = c.out
			stored[fmt.Sprintf("resp_%d", n)] = c.in + c.out
		}
	}
}

// TestAttackStoredConversation: the agent has a long answer stored, then refers to it many
// times in calls whose own bytes are few, so that each is billed far more input than its
// size; or asks for a background response, billed after the call ended.
func TestAttackStoredConversation(t *testing.T) {
	store := budgetCalls[1].withMembers(`"store":true,"max_output_tokens":20000`)
	refs := strings.Repeat(`{"type":"item_reference","id":"msg_1"},`, 40)
	refer := budgetCall{"responses", "/v1/responses", `{"model":"gpt-5","stream":true,"max_output_tokens":1000,"input":[` + refs + `{"role":"user","content":"go on"}]}`, "Authorization"}
	again := budgetCall{"responses", "/v1/responses", `{"model":"gpt-5","stream":true,"max_output_tokens":1000,"previous_response_id":"resp_1","input":"go on"}`, "Authorization"}
	background := budgetCalls[1].withMembers(`"background":true,"store":true`)
	b := spendAttack(t, OpenAI, 1.5, 20_000, storedResponses(), store, refer, refer, refer, again, background)
	for _, r := range b.requests() { // nothing is stored, so nothing can be read back
		if r.body["store"] != false {
			t.Errorf("the provider got store %v", r.body["store"])
		}
	}
}

// TestAttackOneHourCacheWrites: a prompt cached for an hour ("ttl": "1h") is billed at
// twice the input price, not the five-minute write's 1.25 times.
func TestAttackOneHourCacheWrites(t *testing.T) {
	hour := func(c *billCall) {
		if !hasMember(c.body, "ttl", "1h") {
			return
		}
		p := listPrices[Anthropic]["claude-sonnet-4-5"]
		c.usd = (float64(c.in)*2*p.Input + float64(c.out)*p.Output) / 1e6
		c.usage["cache_creation_input_tokens"] = c.in
		c.usage["cache_creation"] = map[string]any{"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": c.in}
		c.in = 0
	}
	for _, ttl := range []string{`"ttl":"1h"`, `"t\u0074l":"\u0031h"`} {
		system := `"system":[{"type":"text","text":"` + strings.Repeat("x", 150_000) + `","cache_control":{"type":"ephemeral",` + ttl + `}}]`
		c := budgetCalls[0].withMembers(system)
		c.body = strings.Replace(c.body, `"max_tokens":32000`, `"max_tokens":1024`, 1)
		t.Run(ttl+" within a limit", func(t *testing.T) { spendAttack(t, Anthropic, 0.7, 1024, hour, c, c) })
		t.Run(ttl+" charged", func(t *testing.T) { spendAttack(t, Anthropic, 5, 1024, hour, c, c) })
	}
}

// hasMember reports whether v, decoded JSON, holds a member name with the value want at any
// depth.
func hasMember(v any, name string, want any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if (k == name && e == want) || hasMember(e, name, want) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasMember(e, name, want) {
				return true
			}
		}
	}
	return false
}

// thinkingProvider is a Gemini API that thinks what the thinking budget it reads allows,
// reading the snake_case spelling when a request has both (as a parser that keeps the last
// one may); thinking is billed as output.
func thinkingProvider(c *billCall) {
	cfg, _ := c.body["generationConfig"].(map[string]any)
	budget := float64(8192)
	for _, tc := range []any{cfg["thinkingConfig"], cfg["thinking_config"]} {
		if m, ok := tc.(map[string]any); ok {
			for _, k := range []string{"thinkingBudget", "thinking_budget"} {
				if v, ok := m[k].(float64); ok {
					budget = v
				}
			}
		}
	}
	c.usage["thoughtsTokenCount"] = int64(budget)
	c.usd, _ = listPrices.Cost(Gemini, c.model, Usage{Input: c.in, Output: c.out + int64(budget)})
}

// TestAttackGeminiThinkingSpelledTwice: a thinking budget of 0 in one spelling and a large
// one in the other, in two objects or in one: the gateway must not reserve one while the
// provider thinks the other.
func TestAttackGeminiThinkingSpelledTwice(t *testing.T) {
	for _, cfg := range []string{
		`"generationConfig":{"maxOutputTokens":1000,"thinkingConfig":{"thinkingBudget":0},"thinking_config":{"thinking_budget":24576}}`,
		`"generationConfig":{"maxOutputTokens":1000,"thinkingConfig":{"thinkingBudget":0,"thinking_budget":24576}}`,
	} {
		spendAttack(t, Gemini, 0.05, 1000, thinkingProvider, budgetCalls[3].withMembers(cfg))
	}
}

// TestAttackMediaTypeInCapitals: a video part whose MIME type is written in capitals (MIME
// types are case-insensitive) is billed as video, by its length, not its bytes.
func TestAttackMediaTypeInCapitals(t *testing.T) {
	video := func(c *billCall) {
		if strings.Contains(strings.ToLower(string(c.raw)), `"mimetype":"video/`) {
			c.in += 1_000_000 // about an hour of video
			c.usd, _ = listPrices.Cost(Gemini, c.model, Usage{Input: c.in, Output: c.out})
		}
	}
	c := budgetCalls[3].withModel("gemini-2.5-pro")
	c.body = `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"VIDEO/MP4","data":"AAAAGGZ0eXBtcDQy"}},{"text":"describe"}]}]}`
	spendAttack(t, Gemini, 1, 1000, video, c, c)
}

// TestAttackGeminiAnswersCutAfterTheFirst: a call asking for two answers, which the agent
// hangs up on once the first has finished: the provider generates (and bills) both, though
// the first answer's last chunk already carried a finish reason and a usage count.
func TestAttackGeminiAnswersCutAfterTheFirst(t *testing.T) {
	b := startBiller(t, 20_000)
	b.pricing = listPrices
	b.tariff = func(c *billCall) { // both answers' output
		c.usd, _ = listPrices.Cost(Gemini, c.model, Usage{Input: c.in, Output: 2 * c.out})
	}
	b.hold, b.holdAt = make(chan struct{}), 1 // after the first answer's last chunk
	g, ch, _ := gatewayFor(t, b, Gemini)
	g.Ledger.SetAgentLimit("coder", Limit{USD: 10})
	token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Gemini: realKey}})
	c := budgetCalls[3].withMembers(`"generationConfig":{"candidateCount":2,"maxOutputTokens":20000}`)
	req, _ := http.NewRequest(http.MethodPost, base+c.path, strings.NewReader(c.body))
	req.Header.Set(c.header, token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && !strings.Contains(sc.Text(), "finishReason") {
	}
	resp.Body.Close() // the agent hangs up
	waitFor(t, func() bool { return len(ch.all()) == 1 })
	close(b.hold)
	waitFor(t, func() bool { return b.inFlight() == 0 })
	bill, _ := b.total()
	if got := ch.all()[0]; got.USD < bill-1e-9 {
		t.Errorf("charged $%.4f (estimated %q) for a call billed $%.4f", got.USD, got.Estimated, bill)
	}
}

// TestAttackParallelMixOverTheRunLimit: two agents in two interactions make forty calls at
// once against the run's limit, half of them hung up on before their usage arrives; calls
// of each API. The provider's bill stays within the run's limit and the gateway charges at
// least the bill.
func TestAttackParallelMixOverTheRunLimit(t *testing.T) {
	for _, c := range budgetCalls {
		t.Run(c.name, func(t *testing.T) {
			b := startBiller(t, 20_000)
			b.hold = make(chan struct{})
			g, _, ref := gatewayFor(t, b, c.provider())
			const limit = 1.0
			g.Ledger.SetRunLimit(Limit{USD: limit})
			var tokens []string
			var base string
			for _, who := range [][2]string{{"coder", "build"}, {"tester", "check"}} {
				var tok string
				tok, base = g.Register(Caller{Agent: who[0], Interaction: who[1], Keys: map[Provider]string{c.provider(): realKey}})
				tokens = append(tokens, tok)
			}
			base = base[:strings.Index(base, "/t/")+3]
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range 40 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					tok := tokens[i%2]
					c.send(t, base+tok, tok, i%4 < 2)
				}()
			}
			close(start)
			waitFor(t, func() bool { return b.inFlight()+g.Ledger.waitingCalls()+len(ref.all()) == 40 })
			close(b.hold)
			wg.Wait()
			waitFor(t, func() bool { return b.inFlight() == 0 })
			waitFor(t, func() bool {
				g.Ledger.mu.Lock()
				defer g.Ledger.mu.Unlock()
				return g.Ledger.held[scope{"run", ""}].calls == 0
			})
			bill, calls := b.total()
			spent := g.Ledger.Run().USD
			t.Logf("%d calls billed $%.4f, %d refused; the gateway charged $%.4f", calls, bill, len(ref.all()), spent)
			if bill > limit || calls == 0 {
				t.Errorf("the provider billed $%.4f for %d calls against a run limit of $%.2f", bill, calls, limit)
			}
			if spent < bill-1e-9 {
				t.Errorf("the gateway charged $%.4f, less than the provider billed ($%.4f)", spent, bill)
			}
		})
	}
}

// TestAttackCountTokensFlood: token counts are free and pass without limit, but neither
// count as model calls nor let one pass: with three model calls allowed, the provider
// answers three turns among fifty counts.
func TestAttackCountTokensFlood(t *testing.T) {
	b := startBiller(t, 10)
	g, _, _ := gatewayFor(t, b, Anthropic)
	g.Ledger.SetAgentLimit("coder", Limit{Calls: 3})
	token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	count := budgetCall{"count", "/v1/messages/count_tokens?beta=true", budgetCalls[0].body, "X-Api-Key"}
	for i := range 55 {
		c := count
		if i%10 == 9 {
			c = budgetCalls[0]
		}
		c.send(t, base, token, false)
	}
	turns := 0
	for _, r := range b.requests() {
		if r.path == "/v1/messages" {
			turns++
		}
	}
	if turns != 3 || len(b.requests()) != 53 || g.Ledger.Agent("coder").Calls != 3 {
		t.Errorf("the provider answered %d turns of %d requests; the gateway counted %+v", turns, len(b.requests()), g.Ledger.Agent("coder"))
	}
}
