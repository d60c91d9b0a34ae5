package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// biller is a scripted provider on loopback that bills what it serves, the way a hostile
// test wants it billed: every byte of a request is an input token (text can be no denser),
// and every output token it generates is billed whether or not the agent reads it (a stream
// the agent hangs up on is generated to its end). It honours the request's output cap, as
// the providers do, and records every request that reaches it, with its key.
type biller struct {
	t       *testing.T
	srv     *httptest.Server
	pricing Pricing
	model   string // the model it says it served ("" : the one asked for)

	// out is the output tokens it generates for a call (at most the request's cap).
	out int64
	// mode: "" answers in full; "nousage" never reports usage; "absurd" reports counts no
	// call could reach; "cut" closes the connection after the first event.
	mode string
	// hold, when set, keeps each stream open after its first event until it is closed.
	hold   chan struct{}
	holdAt int // the event after which a stream is held (the first: 0)
	// tariff, when set, decides what a model call bills and reports instead of the default
	// (every request byte an input token, the output generated, at pricing's prices).
	tariff func(c *billCall)

	mu       sync.Mutex
	bill     float64
	calls    int
	inflight int
	reqs     []billed
}

// billed is a request that reached the provider.
type billed struct {
	method, path, query, proto string
	header, trailer            http.Header
	body                       map[string]any
}

// billCall is one model call as the provider bills it: a tariff may change its counts, add
// members to the usage it reports, and set what it bills.
type billCall struct {
	p       Provider
	body    map[string]any
	raw     []byte
	model   string
	in, out int64
	usage   map[string]any // more members of the usage it reports
	usd     float64
	// status, when set, refuses the call (refusal says why), billing nothing.
	status  int
	refusal string
}

func startBiller(t *testing.T, out int64) *biller {
	b := &biller{t: t, pricing: DefaultPricing(), out: out}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

// startBillerTLS is a biller over HTTPS that speaks HTTP/2, as the providers do; the
// gateway reaches it with b.srv.Client().Transport.
func startBillerTLS(t *testing.T, out int64) *biller {
	b := &biller{t: t, pricing: DefaultPricing(), out: out}
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(b.serve))
	b.srv.EnableHTTP2 = true
	b.srv.StartTLS()
	t.Cleanup(b.srv.Close)
	return b
}

func (b *biller) total() (float64, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bill, b.calls
}

func (b *biller) requests() []billed {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]billed(nil), b.reqs...)
}

func (b *biller) inFlight() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inflight
}

// outputCap is the request's output cap, per API (0: none).
func outputCap(body map[string]any) int64 {
	for _, k := range []string{"max_tokens", "max_output_tokens", "max_completion_tokens"} {
		if v, ok := body[k].(float64); ok {
			return int64(v)
		}
	}
	if cfg, ok := body["generationConfig"].(map[string]any); ok {
		if v, ok := cfg["maxOutputTokens"].(float64); ok {
			return int64(v)
		}
	}
	return 0
}

func (b *biller) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	b.mu.Lock()
	b.reqs = append(b.reqs, billed{method: r.Method, path: r.URL.Path, proto: r.Proto, query: r.URL.RawQuery, header: r.Header.Clone(), trailer: r.Trailer.Clone(), body: body})
	b.mu.Unlock()
	p, chat := Anthropic, false
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1beta/"):
		p = Gemini
	case r.URL.Path == "/v1/chat/completions":
		p, chat = OpenAI, true
	case r.URL.Path == "/v1/responses":
		p = OpenAI
	}
	if strings.HasSuffix(r.URL.Path, "count_tokens") || strings.HasSuffix(r.URL.Path, ":countTokens") {
		writeJSONTest(w, map[string]any{"input_tokens": len(raw), "totalTokens": len(raw)})
		return
	}
	model, _ := body["model"].(string)
	if p == Gemini {
		model = geminiModel(r.URL.Path)
	}
	if b.model != "" {
		model = b.model
	}
	in, out := int64(len(raw)), b.out
	if c := outputCap(body); c > 0 && c < out {
		out = c
	}
	c := &billCall{p: p, body: body, raw: raw, model: model, in: in, out: out, usage: map[string]any{}}
	c.usd, _ = b.pricing.Cost(p, model, Usage{Input: in, Output: out})
	if b.tariff != nil {
		b.tariff(c)
	}
	if c.status != 0 { // refused as the API would: nothing billed
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(c.status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": c.refusal}})
		return
	}
	b.mu.Lock()
	b.bill += c.usd
	b.calls++
	b.inflight++
	b.mu.Unlock()
	defer func() { b.mu.Lock(); b.inflight--; b.mu.Unlock() }()
	b.stream(w, p, chat, body, model, c.in, c.out, c.usage)
}

// stream answers a model call in its API's streaming format; more are members of its usage
// beyond the input and output counts.
func (b *biller) stream(w http.ResponseWriter, p Provider, chat bool, body map[string]any, model string, in, out int64, more map[string]any) {
	text := strings.Repeat("x", int(out)) // a token a byte
	usage := b.mode != "nousage"
	if b.mode == "absurd" {
		in, out = 9_000_000_000_000_000_000, 9_000_000_000_000_000_000
	}
	withMore := func(u map[string]any) map[string]any {
		for k, v := range more {
			u[k] = v
		}
		return u
	}
	var events []string
	switch {
	case p == Anthropic:
		start := map[string]any{"type": "message_start", "message": map[string]any{"model": model}}
		if usage {
			start["message"].(map[string]any)["usage"] = map[string]any{"input_tokens": in, "output_tokens": 1}
		}
		delta := map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn"}}
		if usage {
			delta["usage"] = withMore(map[string]any{"input_tokens": in, "output_tokens": out})
		}
		events = sse(start, map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}},
			delta, map[string]any{"type": "message_stop"})
	case chat:
		events = sse(map[string]any{"model": model, "choices": []any{map[string]any{"delta": map[string]any{"content": text}}}, "usage": nil})
		if opts, _ := body["stream_options"].(map[string]any); usage && opts["include_usage"] == true {
			events = append(events, sse(map[string]any{"model": model, "choices": []any{}, "usage": withMore(map[string]any{"prompt_tokens": in, "completion_tokens": out})})...)
		}
		events = append(events, "data: [DONE]\n\n")
	case p == OpenAI:
		done := map[string]any{"type": "response.completed", "response": map[string]any{"model": model}}
		if usage {
			done["response"].(map[string]any)["usage"] = withMore(map[string]any{"input_tokens": in, "output_tokens": out})
		}
		events = sse(map[string]any{"type": "response.created", "response": map[string]any{"model": model}},
			map[string]any{"type": "response.output_text.delta", "delta": text}, done)
	default: // each chunk counts the usage so far; each answer's last has its finish reason
		n := int64(1)
		if cfg, ok := body["generationConfig"].(map[string]any); ok {
			if v, ok := cfg["candidateCount"].(float64); ok && v > 1 {
				n = int64(v)
			}
		}
		for k := range n {
			first := map[string]any{"candidates": []any{map[string]any{"index": k, "content": map[string]any{"parts": []any{map[string]any{"text": text}}}}}, "modelVersion": model}
			last := map[string]any{"candidates": []any{map[string]any{"index": k, "content": map[string]any{"parts": []any{}}, "finishReason": "STOP"}}, "modelVersion": model}
			if usage {
				first["usageMetadata"] = map[string]any{"promptTokenCount": in, "candidatesTokenCount": out*k + 1}
				last["usageMetadata"] = withMore(map[string]any{"promptTokenCount": in, "candidatesTokenCount": out * (k + 1)})
			}
			events = append(events, sse(first, last)...)
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	for i, e := range events {
		fmt.Fprint(w, e)
		f.Flush()
		if i == 0 && b.mode == "cut" {
			conn, _, _ := http.NewResponseController(w).Hijack()
			if conn != nil {
				conn.Close()
			}
			return
		}
		if i == b.holdAt && b.hold != nil {
			<-b.hold
		}
	}
}

func sse(events ...map[string]any) []string {
	var out []string
	for _, e := range events {
		j, _ := json.Marshal(e)
		out = append(out, "data: "+string(j)+"\n\n")
	}
	return out
}

func writeJSONTest(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// rawRequest sends req's bytes as they are over a new connection to addr and returns the
// status of each answer read (as many as want).
func rawRequest(t *testing.T, addr, req string, want int) []int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(time.Minute)) // a failure's bound
	br := bufio.NewReader(c)
	var statuses []int
	for range want {
		method, _, _ := strings.Cut(req, " ") // a HEAD's answer has no body to read
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			break
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	return statuses
}
