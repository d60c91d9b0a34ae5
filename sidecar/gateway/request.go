package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// What the gateway reads of a model call's body, and what it changes before sending it on.
// The body is read as the provider will read it: by its members' exact names (a name in
// another case is another member, which the provider ignores or refuses), escapes decoded,
// a repeated member once (the last, as the gateway then sends only that one). What is sent
// on is the gateway's own encoding of what it read, so the provider cannot read a member
// the gateway did not.

const (
	// defaultOutputCap is the output cap of a request that sets none, when a limit applies.
	defaultOutputCap = 32_000
	// minOutput is the fewest output tokens a capped call is sent with: a call that cannot
	// have them is refused.
	minOutput = 1_024
	// dynamicThinking is what a Gemini call may think when its request sets no budget.
	dynamicThinking = 32_768
)

// modelRequest is what the gateway read of a model call's body.
type modelRequest struct {
	p       Provider
	members map[string]json.RawMessage
	model   string
	stream  bool
	// maxOut is the request's output cap per answer (0: none); capField is where it goes.
	maxOut   int64
	capField []string
	// answers asked for (chat's n, Gemini's candidateCount), ≥ 1.
	answers int64
	// thinking is output the cap does not cover (Gemini's thinking budget).
	thinking int64
	// in is the most input tokens the call can be billed for.
	in int64
	// hourCache: the request asks for cache writes kept an hour (priced higher).
	hourCache bool
	// removed are the provider-side tools taken out of the request.
	removed []string
	edited  bool
	chat    bool
	// capSet is the output cap per answer the gateway wrote (capChanged).
	capSet     int64
	capChanged bool
}

// readModelRequest reads body as a call of e. networkOpen: the agent may reach the network
// itself, so the provider's own tools that fetch and search may stay in its requests.
func readModelRequest(e endpoint, path string, body []byte, networkOpen bool) (*modelRequest, error) {
	r := &modelRequest{p: e.provider, answers: 1, chat: e.chat}
	var dup bool
	var err error
	if r.members, dup, err = members(body); err != nil {
		return nil, fmt.Errorf("the request body is not a JSON object")
	}
	r.edited = dup // sent as read: one of each member
	r.model = r.str("model")
	r.stream = string(r.members["stream"]) == "true"
	var content []string
	switch {
	case e.provider == Anthropic:
		content, err = r.anthropic(networkOpen)
		r.hourCache = asksHourCache(body)
	case e.chat:
		content, err = r.chatCompletions(networkOpen)
	case e.provider == OpenAI:
		content, err = r.responses(networkOpen)
	default:
		r.model = geminiModel(path)
		content, err = r.gemini(networkOpen)
	}
	if err != nil {
		return nil, err
	}
	if !networkOpen && r.mayFetch(content) {
		if u := r.fetches(); u != "" { // fetch.go
			return nil, errFetch(u)
		}
	}
	images, unbounded := 0, r.unbounded()
	for _, name := range content {
		if unbounded != "" {
			break
		}
		var n int
		n, unbounded = mediaIn(r.members[name])
		images += n
	}
	tools := 0
	if networkOpen {
		tools = len(r.removed) // kept: each adds what it fetches
		r.removed = nil
	}
	r.in = inputBound(r.p, len(body), images, unbounded, tools)
	return r, nil
}

// mayFetch reports whether the content members may name a URL for the provider to fetch.
func (r *modelRequest) mayFetch(content []string) bool {
	for _, name := range content {
		if mayFetch(r.members[name]) {
			return true
		}
	}
	return false
}

// errFetch refuses a call whose content asks the provider to fetch u.
func errFetch(u string) error {
	return fmt.Errorf("the request asks the provider to fetch %s, which an agent whose network is the gateway may not have done (runtime.network: open allows it)", quoteShort(u))
}

// unbounded names the member that makes the provider add input the request does not hold.
func (r *modelRequest) unbounded() string {
	for _, k := range []string{"previous_response_id", "conversation", "prompt", "cachedContent", "cached_content", "container", "mcp_servers"} {
		if v, ok := r.members[k]; ok && string(v) != "null" {
			return k
		}
	}
	return ""
}

func (r *modelRequest) anthropic(networkOpen bool) ([]string, error) {
	r.capField = []string{"max_tokens"}
	if err := r.intMember(&r.maxOut, "max_tokens"); err != nil {
		return nil, err
	}
	if err := r.keepTools("tools", anthropicClientTool, networkOpen); err != nil {
		return nil, err
	}
	if _, ok := r.members["mcp_servers"]; ok && !networkOpen {
		delete(r.members, "mcp_servers")
		r.removed, r.edited = append(r.removed, "mcp_servers"), true
	}
	return []string{"messages", "system"}, nil
}

func (r *modelRequest) responses(networkOpen bool) ([]string, error) {
	r.capField = []string{"max_output_tokens"}
	if err := r.intMember(&r.maxOut, "max_output_tokens"); err != nil {
		return nil, err
	}
	r.standardTier()
	// Nothing is stored at the provider: a stored answer could be read back by reference
	// (item_reference, previous_response_id) as input any number of times, which the
	// request's size does not bound, and a background response (which needs storing) bills
	// after its call has ended.
	r.set("store", "false")
	return []string{"input", "instructions"}, r.keepTools("tools", openaiClientTool, networkOpen)
}

// standardTier asks for OpenAI's standard prices, those the gateway prices with: "flex"
// (cheaper) stays; any other tier ("priority" bills twice, and "auto" or none takes the
// project's default, which may be priority) becomes "default".
func (r *modelRequest) standardTier() {
	if r.str("service_tier") != "flex" {
		r.set("service_tier", `"default"`)
	}
}

// set makes the member name hold the JSON value v.
func (r *modelRequest) set(name, v string) {
	if string(r.members[name]) != v {
		r.members[name], r.edited = json.RawMessage(v), true
	}
}

func (r *modelRequest) chatCompletions(networkOpen bool) ([]string, error) {
	var a, b int64
	if err := r.intMember(&a, "max_completion_tokens"); err != nil {
		return nil, err
	}
	if err := r.intMember(&b, "max_tokens"); err != nil {
		return nil, err
	}
	r.maxOut, r.capField = max(a, b), []string{"max_completion_tokens"}
	if b > 0 && a == 0 {
		r.capField = []string{"max_tokens"}
	}
	if err := r.intMember(&r.answers, "n"); err != nil {
		return nil, err
	}
	r.answers = max(r.answers, 1)
	r.standardTier()
	if r.stream { // usage comes only when asked for
		r.members["stream_options"], r.edited = json.RawMessage(`{"include_usage":true}`), true
	}
	if _, ok := r.members["web_search_options"]; ok && !networkOpen {
		delete(r.members, "web_search_options")
		r.removed, r.edited = append(r.removed, "web_search_options"), true
	}
	return []string{"messages"}, r.keepTools("tools", openaiClientTool, networkOpen)
}

func (r *modelRequest) gemini(networkOpen bool) ([]string, error) {
	cfgName, err := r.oneOf("generationConfig", "generation_config")
	if err != nil {
		return nil, err
	}
	r.thinking = dynamicThinking
	if raw, ok := r.members[cfgName]; ok && string(raw) != "null" {
		cfg, dup, err := members(raw)
		if err != nil {
			return nil, fmt.Errorf("%s is not an object", cfgName)
		}
		if dup || hasDup(cfg, "thinkingConfig", "thinking_config") { // sent as read
			if r.members[cfgName], err = encodeObject(cfg); err != nil {
				return nil, err
			}
			r.edited = true
		}
		sub := &modelRequest{members: cfg}
		capName, err := sub.oneOf("maxOutputTokens", "max_output_tokens")
		if err != nil {
			return nil, err
		}
		nName, err := sub.oneOf("candidateCount", "candidate_count")
		if err != nil {
			return nil, err
		}
		if err := sub.intMember(&r.maxOut, capName); err != nil {
			return nil, err
		}
		if err := sub.intMember(&r.answers, nName); err != nil {
			return nil, err
		}
		r.answers = max(r.answers, 1)
		if r.thinking, err = geminiThinking(sub); err != nil {
			return nil, err
		}
	}
	r.capField = []string{"generationConfig", "maxOutputTokens"}
	if cfgName == "generation_config" {
		r.capField[0] = cfgName
	}
	return []string{"contents", "systemInstruction", "system_instruction"}, r.keepTools("tools", geminiClientTool, networkOpen)
}

// geminiThinking is what a Gemini call may think beyond its output cap: its thinking budget,
// or the most a model thinks when it sets none (or -1, dynamic). Two spellings of the
// setting, or of the budget, are refused: the provider would read one of them.
func geminiThinking(cfg *modelRequest) (int64, error) {
	name, err := cfg.oneOf("thinkingConfig", "thinking_config")
	if err != nil {
		return 0, err
	}
	tc, _, err := members(cfg.members[name])
	if err != nil {
		return dynamicThinking, nil
	}
	budget, err := (&modelRequest{members: tc}).oneOf("thinkingBudget", "thinking_budget")
	if err != nil {
		return 0, err
	}
	if n, ok := wholeNumber(tc[budget]); ok && n >= 0 {
		return n, nil
	}
	return dynamicThinking, nil
}

// hasDup reports whether a nested object of m named one of names repeats a member; it is then
// re-encoded in m, so the provider reads the member the gateway read.
func hasDup(m map[string]json.RawMessage, names ...string) bool {
	found := false
	for _, n := range names {
		if sub, dup, err := members(m[n]); err == nil && dup {
			enc, err := encodeObject(sub)
			if err == nil {
				m[n], found = enc, true
			}
		}
	}
	return found
}

// oneOf is the name of whichever of two spellings of a member the body uses (the first when
// neither); both at once is refused, as the provider would read only one of them.
func (r *modelRequest) oneOf(camel, snake string) (string, error) {
	_, a := r.members[camel]
	_, b := r.members[snake]
	if a && b {
		return "", fmt.Errorf("the request sets both %s and %s", camel, snake)
	}
	if b {
		return snake, nil
	}
	return camel, nil
}

func (r *modelRequest) str(name string) string {
	var s string
	_ = json.Unmarshal(r.members[name], &s)
	return s
}

// intMember reads a whole-number member into n (left alone when absent or null).
func (r *modelRequest) intMember(n *int64, name string) error {
	raw, ok := r.members[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	v, ok := wholeNumber(raw)
	if !ok || v < 0 {
		return fmt.Errorf("%s is %s; it must be a whole number ≥ 0", name, quoteShort(string(raw)))
	}
	*n = v
	return nil
}

// wholeNumber reads a JSON number that is a whole number (1e3 and 1000.0 too), up to 1e15.
func wholeNumber(raw json.RawMessage) (int64, bool) {
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1e15 {
		return 0, false
	}
	return int64(f), true
}

// setCap writes the output cap the call was granted (per answer) where the request keeps it.
func (r *modelRequest) setCap(perAnswer int64) error {
	v := json.RawMessage(strconv.FormatInt(perAnswer, 10))
	r.edited, r.capSet, r.capChanged = true, perAnswer, true
	if len(r.capField) == 1 {
		r.members[r.capField[0]] = v
		return nil
	}
	cfg := map[string]json.RawMessage{}
	if raw := r.members[r.capField[0]]; len(raw) > 0 && string(raw) != "null" {
		var err error
		if cfg, _, err = members(raw); err != nil {
			return err
		}
	}
	delete(cfg, "max_output_tokens")
	delete(cfg, "maxOutputTokens")
	cfg[r.capField[1]] = v
	b, err := encodeObject(cfg)
	r.members[r.capField[0]] = b
	return err
}

// setThinkingBelow keeps an Anthropic thinking budget below the output cap out, as the API
// requires (budget_tokens < max_tokens).
func (r *modelRequest) setThinkingBelow(out int64) error {
	th, _, err := members(r.members["thinking"])
	if err != nil {
		return nil
	}
	if b, ok := wholeNumber(th["budget_tokens"]); ok && b >= out {
		th["budget_tokens"] = json.RawMessage(strconv.FormatInt(out-1, 10))
		enc, err := encodeObject(th)
		r.members["thinking"], r.edited = enc, true
		return err
	}
	return nil
}

// thinkingMin is the fewest output tokens an Anthropic call with thinking on may have.
func (r *modelRequest) thinkingMin() int64 {
	var th struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(r.members["thinking"], &th) == nil && th.Type == "enabled" {
		return 1_025 // a budget of 1,024 at least, below the cap
	}
	return 0
}

// body is what is sent on: the members the gateway read, in its own encoding.
func (r *modelRequest) body() ([]byte, error) { return encodeObject(r.members) }
