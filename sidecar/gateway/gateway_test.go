package gateway

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
)

const realKey = "sk-real-provider-key-0123456789"

// apiCall is one streamed model turn in an API's wire format, as its CLI sends it.
type apiCall struct {
	api        modelserver.API
	provider   Provider
	path       string
	body       string
	authHeader string
}

var apiCalls = []apiCall{
	{modelserver.MessagesAPI, Anthropic, "/v1/messages?beta=true",
		`{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"say hi"}]}`, "X-Api-Key"},
	{modelserver.ResponsesAPI, OpenAI, "/v1/responses",
		`{"model":"gpt-5","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"say hi"}]}]}`, "Authorization"},
	{modelserver.GeminiAPI, Gemini, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"say hi"}]}]}`, "X-Goog-Api-Key"},
}

// collected gathers what a gateway's hooks report, from any goroutine.
type collected[T any] struct {
	mu sync.Mutex
	xs []T
}

func (c *collected[T]) add(x T) { c.mu.Lock(); c.xs = append(c.xs, x); c.mu.Unlock() }
func (c *collected[T]) all() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]T(nil), c.xs...)
}

type (
	charges  = collected[Charge]
	refusals = collected[Refusal]
)

func startGateway(t *testing.T, o Options) *Gateway {
	t.Helper()
	g, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func post(t *testing.T, url, header, token, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if header == "Authorization" {
		req.Header.Set(header, "Bearer "+token)
	} else if header != "" {
		req.Header.Set(header, token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// Each API's streamed turn goes through with the real key in place of the token, and its
// usage is read from the stream, priced and charged to the caller.
func TestMetersEachAPIsStream(t *testing.T) {
	for _, a := range apiCalls {
		t.Run(string(a.provider), func(t *testing.T) {
			u := modelserver.Usage{InputTokens: 12000, CachedInputTokens: 2000, OutputTokens: 700}
			s := modelserver.Start(t, a.api, modelserver.Script{{Replies: []modelserver.Reply{{Text: "hi", Usage: &u}}}})
			var got charges
			g := startGateway(t, Options{Upstream: map[Provider]string{a.provider: s.URL}, OnCharge: got.add})
			token, base := g.Register(Caller{Agent: "coder", Interaction: "build", Keys: map[Provider]string{a.provider: realKey}})
			resp, body := post(t, base+a.path, a.authHeader, token, a.body)
			if resp.StatusCode != 200 || !strings.Contains(body, "hi") {
				t.Fatalf("status %d, body %s", resp.StatusCode, body)
			}
			reqs := s.Requests()
			if len(reqs) != 1 {
				t.Fatalf("upstream got %d requests", len(reqs))
			}
			h := fmt.Sprint(reqs[0].Header)
			if !strings.Contains(h, realKey) || strings.Contains(h, token) {
				t.Errorf("upstream headers %s: want the real key and not the token", h)
			}
			cs := got.all()
			if len(cs) != 1 {
				t.Fatalf("%d charges, want 1", len(cs))
			}
			want := Usage{Input: 10000, CachedInput: 2000, Output: 700}
			if cs[0].Usage != want || !cs[0].UsageSeen {
				t.Errorf("usage %+v (seen %v), want %+v", cs[0].Usage, cs[0].UsageSeen, want)
			}
			pr, _, _ := DefaultPricing().price(a.provider, cs[0].Model)
			wantUSD := (10000*pr.Input + 2000*pr.CachedInput + 700*pr.Output) / 1e6
			if cs[0].USD != wantUSD || wantUSD == 0 || !cs[0].CostKnown {
				t.Errorf("cost %v (model %q), want %v", cs[0].USD, cs[0].Model, wantUSD)
			}
			if cs[0].RunSpend.Calls != 1 || cs[0].AgentSpend.Tokens != want.Tokens() {
				t.Errorf("totals %+v %+v", cs[0].RunSpend, cs[0].AgentSpend)
			}
		})
	}
}

// A caller over its limit is refused before the call reaches the provider, in the
// provider's error shape, naming the limit and the spend.
func TestRefusesACallOverALimit(t *testing.T) {
	for _, a := range apiCalls {
		t.Run(string(a.provider), func(t *testing.T) {
			// The first call costs more than the whole limit (the scripted model ignores the cap).
			u := modelserver.Usage{InputTokens: 1000, OutputTokens: 500_000}
			s := modelserver.Start(t, a.api, modelserver.Script{{Replies: []modelserver.Reply{{Text: "hi", Usage: &u}}}})
			g := startGateway(t, Options{Upstream: map[Provider]string{a.provider: s.URL}})
			g.Ledger.SetAgentLimit("coder", Limit{USD: 1})
			token, base := g.Register(Caller{Agent: "coder", Interaction: "build", Keys: map[Provider]string{a.provider: realKey}})
			if resp, body := post(t, base+a.path, a.authHeader, token, a.body); resp.StatusCode != 200 {
				t.Fatalf("first call: %d %s", resp.StatusCode, body)
			}
			resp, body := post(t, base+a.path, a.authHeader, token, a.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("second call: status %d, want 400", resp.StatusCode)
			}
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil || !strings.HasPrefix(e.Error.Message, "spend limit reached: agent coder runtime.maxCostUsd $1.00, spent $") {
				t.Errorf("refusal %s (%v)", body, err)
			}
			if n := s.Answered(); n != 1 {
				t.Errorf("the provider answered %d calls, want 1", n)
			}
			// Another agent of the run is not limited by coder's limit.
			other, obase := g.Register(Caller{Agent: "reviewer", Interaction: "build", Keys: map[Provider]string{a.provider: realKey}})
			if resp, body := post(t, obase+a.path, a.authHeader, other, a.body); resp.StatusCode != 200 {
				t.Errorf("another agent: %d %s", resp.StatusCode, body)
			}
		})
	}
}

func TestRunBudgetMessage(t *testing.T) {
	l := newLedger()
	l.SetRunLimit(Limit{USD: 2})
	l.Add("a", "i", 2.03, Usage{Input: 10}, 1)
	if got, want := l.Over("b", "j"), "spend limit reached: run budget $2.00, spent $2.03"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	l2 := newLedger()
	l2.SetInteractionLimit("i", Limit{Tokens: 100})
	l2.Add("a", "i", 0, Usage{Input: 100, Output: 50}, 1)
	if got, want := l2.Over("b", "i"), "spend limit reached: interaction i limit 100 tokens, spent 150 tokens"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := l2.Over("b", "other"); got != "" {
		t.Errorf("another interaction: %q", got)
	}
}

// A token the gateway did not give out, or none, is refused; nothing reaches the provider.
func TestUnknownTokenRefused(t *testing.T) {
	s := modelserver.Start(t, modelserver.MessagesAPI, modelserver.Script{{Replies: []modelserver.Reply{{Text: "hi"}}}})
	g := startGateway(t, Options{Upstream: map[Provider]string{Anthropic: s.URL}})
	g.Register(Caller{Agent: "coder", Keys: map[Provider]string{Anthropic: realKey}})
	a := apiCalls[0]
	for _, url := range []string{g.URL + "/t/acgw-forged" + a.path, g.URL + a.path} {
		resp, body := post(t, url, a.authHeader, "acgw-forged", a.body)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "authentication_error") {
			t.Errorf("%s: %d %s", url, resp.StatusCode, body)
		}
	}
	if len(s.Requests()) != 0 {
		t.Errorf("the provider got %d requests", len(s.Requests()))
	}
}

// Without a key for the provider (an account login), the agent's own credentials pass
// through, and the call is metered the same.
func TestLoginPassesCredentialsThrough(t *testing.T) {
	s := modelserver.Start(t, modelserver.MessagesAPI, modelserver.Script{{Replies: []modelserver.Reply{{Text: "hi"}}}})
	var got charges
	g := startGateway(t, Options{Upstream: map[Provider]string{Anthropic: s.URL}, OnCharge: got.add})
	_, base := g.Register(Caller{Agent: "coder", Interaction: "build"})
	a := apiCalls[0]
	if resp, body := post(t, base+a.path, "Authorization", "oauth-account-token", a.body); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if h := s.Requests()[0].Header.Get("Authorization"); h != "Bearer oauth-account-token" {
		t.Errorf("upstream Authorization %q", h)
	}
	if cs := got.all(); len(cs) != 1 || cs[0].Usage.Tokens() == 0 {
		t.Errorf("charges %+v", cs)
	}
}

// Streams pass through as they come: the agent reads the first event while the provider
// has not yet sent the rest.
func TestStreamsUnbuffered(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n")
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprint(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":5}}\n\n")
	}))
	defer up.Close()
	defer close(release)
	var got charges
	g := startGateway(t, Options{Upstream: map[Provider]string{Anthropic: up.URL}, OnCharge: got.add})
	token, base := g.Register(Caller{Agent: "a", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(apiCalls[0].body))
	req.Header.Set("X-Api-Key", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(resp.Body).ReadString('\n')
		first <- l
	}()
	select {
	case l := <-first:
		if !strings.HasPrefix(l, "event: message_start") {
			t.Errorf("first line %q", l)
		}
	case <-time.After(time.Minute): // a failure's bound, not a wait for success
		t.Fatal("the first event did not pass through before the stream ended")
	}
}

// Streams arrive whole, call after call: the request body the transport is still sending
// when the provider starts answering must not cut the answer (golang/go#40747, which cut
// about one stream in a hundred here before the gateway read requests whole).
func TestStreamsArriveWhole(t *testing.T) {
	up := httptest.NewServer(benchModel(200, 1024))
	defer up.Close()
	g := startGateway(t, Options{Upstream: map[Provider]string{Anthropic: up.URL}})
	token, base := g.Register(Caller{Agent: "a", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	cut := 0
	for range 600 {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(apiCalls[0].body))
		req.Header.Set("X-Api-Key", token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			cut++
		}
		resp.Body.Close()
	}
	if cut > 0 {
		t.Errorf("%d of 600 streams were cut", cut)
	}
}

// A token where the key goes identifies the agent too (Codex's base URL carries none); a
// token there that the gateway did not give out is refused, and so is a login's call
// without a token in the path (its header holds the account's credentials, not a token).
func TestTokenInKeyHeader(t *testing.T) {
	for _, a := range apiCalls {
		t.Run(string(a.provider), func(t *testing.T) {
			s := modelserver.Start(t, a.api, modelserver.Script{{Replies: []modelserver.Reply{{Text: "hi"}}}})
			g := startGateway(t, Options{Upstream: map[Provider]string{a.provider: s.URL}})
			token, _ := g.Register(Caller{Agent: "coder", Interaction: "build", Keys: map[Provider]string{a.provider: realKey}})
			if resp, body := post(t, g.URL+a.path, a.authHeader, token, a.body); resp.StatusCode != 200 {
				t.Fatalf("token in %s: %d %s", a.authHeader, resp.StatusCode, body)
			}
			if h := fmt.Sprint(s.Requests()[0].Header); !strings.Contains(h, realKey) || strings.Contains(h, token) {
				t.Errorf("upstream headers %s", h)
			}
			if resp, _ := post(t, g.URL+a.path, a.authHeader, "acgw-forged", a.body); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("forged token: %d", resp.StatusCode)
			}
			login, _ := g.Register(Caller{Agent: "other", Interaction: "build"})
			if resp, _ := post(t, g.URL+a.path, a.authHeader, login, a.body); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("a login's token outside the path: %d", resp.StatusCode)
			}
			if len(s.Requests()) != 1 {
				t.Errorf("the provider got %d requests, want 1", len(s.Requests()))
			}
		})
	}
}

// Close leaves no connection to the provider open (a sidecar makes a gateway per run).
func TestCloseClosesProviderConnections(t *testing.T) {
	var mu sync.Mutex
	open := 0
	up := httptest.NewUnstartedServer(benchModel(1, 10))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open++
		case http.StateClosed, http.StateHijacked:
			open--
		}
	}
	up.Start()
	defer up.Close()
	g, err := Start(Options{Upstream: map[Provider]string{Anthropic: up.URL}})
	if err != nil {
		t.Fatal(err)
	}
	token, base := g.Register(Caller{Agent: "a", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	if resp, body := post(t, base+"/v1/messages", "X-Api-Key", token, apiCalls[0].body); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	g.Close()
	deadline := time.Now().Add(time.Minute) // a failure's bound: the close is asynchronous
	for {
		mu.Lock()
		n := open
		mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections to the provider still open after Close", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A provider that cannot be reached is answered in its own error shape, saying so, with a
// status its CLI does not retry when the fault will not mend (nothing listens there); the
// call is not charged.
func TestUnreachableProvider(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, c := range []struct {
		a      apiCall
		status int
		shape  string
	}{{apiCalls[2], http.StatusBadRequest, `"status":"FAILED_PRECONDITION"`}, {apiCalls[0], http.StatusBadGateway, `"type":"invalid_request_error"`}} {
		var got charges
		var ref refusals
		g := startGateway(t, Options{Upstream: map[Provider]string{c.a.provider: dead}, OnCharge: got.add, OnRefuse: ref.add})
		token, base := g.Register(Caller{Agent: "a", Interaction: "i", Keys: map[Provider]string{c.a.provider: realKey}})
		resp, body := post(t, base+c.a.path, c.a.authHeader, token, c.a.body)
		if resp.StatusCode != c.status || !strings.Contains(body, "API at "+dead+" cannot be reached: the connection was refused") || !strings.Contains(body, c.shape) {
			t.Errorf("%d %s", resp.StatusCode, body)
		}
		if c.a.provider == Anthropic && resp.Header.Get("X-Should-Retry") != "false" {
			t.Errorf("x-should-retry %q", resp.Header.Get("X-Should-Retry"))
		}
		if strings.Contains(body, realKey) {
			t.Errorf("the error shows the key: %s", body)
		}
		if len(got.all()) != 0 || g.Ledger.Run().Calls != 0 || g.Ledger.Run().USD != 0 {
			t.Errorf("charged %+v", got.all())
		}
		if r := ref.all(); len(r) != 1 || !r[0].Unreachable {
			t.Errorf("refusals %+v", r)
		}
	}
}

// A fault that may pass (the provider's name resolves for a while, then times out) is a
// 502 the CLIs retry; permanent() tells them apart.
func TestPermanentFaults(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&net.DNSError{Name: "x.invalid", Err: "no such host", IsNotFound: true}, true},
		{&net.DNSError{Name: "api.example", Err: "server misbehaving", IsTemporary: true}, false},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, true},
		{&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, false},
		{context.DeadlineExceeded, false},
		{x509.UnknownAuthorityError{}, true},
	} {
		if got := permanent(c.err) != ""; got != c.want {
			t.Errorf("%v: permanent %v, want %v", c.err, got, c.want)
		}
	}
}

func TestQuietCanceled(t *testing.T) {
	var b strings.Builder
	q := quietCanceled{&b}
	q.Write([]byte("httputil: ReverseProxy read error during body copy: context canceled\n"))
	q.Write([]byte("httputil: ReverseProxy read error during body copy: unexpected EOF\n"))
	if b.String() != "httputil: ReverseProxy read error during body copy: unexpected EOF\n" {
		t.Errorf("logged %q", b.String())
	}
}

// A key the provider echoes is masked in its answer; a placeholder key shorter than
// MinSecretLen (x, for a local model) is not looked for, so an answer holding its letters
// reaches the agent whole (masking every "x" broke the CLI's JSON).
func TestAnswerMasksKeysNotPlaceholders(t *testing.T) {
	const answer = `{"type":"message","content":[{"type":"text","text":"fix the xml: `
	for key, want := range map[string]string{realKey: strings.Repeat("*", len(realKey)), "x": "x"} {
		echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, answer+key+`"}]}`)
		}))
		g := startGateway(t, Options{Upstream: map[Provider]string{Anthropic: echo.URL}})
		token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Anthropic: key}})
		resp, body := post(t, base+"/v1/messages", "X-Api-Key", token, `{"model":"claude-opus-5-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
		echo.Close()
		if resp.StatusCode != 200 || body != answer+want+`"}]}` {
			t.Errorf("key %q: %d %s", key, resp.StatusCode, body)
		}
	}
}
