package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
)

// Caller is one agent in one interaction, as the gateway knows it.
type Caller struct {
	Agent, Interaction string
	// Keys are the real keys by provider. A provider without one passes the agent's own
	// credentials through (an account login).
	Keys map[Provider]string
	// Upstream overrides the gateway's upstream per provider (the base URL the flow gave).
	Upstream map[Provider]string
}

// Charge is one metered model call.
type Charge struct {
	Agent, Interaction string
	Provider           Provider
	Model              string
	Usage              Usage
	USD                float64
	// CostKnown is false when the pricing has no entry for the provider.
	CostKnown bool
	// UsageSeen is false when the response said nothing about usage (an error, say).
	UsageSeen bool
	Status    int
	// Totals after this call.
	AgentSpend, InteractionSpend, RunSpend Spend
	// Over names the limit this call reached ("" for none): the next call is refused.
	Over string
}

// Options configure a gateway.
type Options struct {
	// Upstream is each provider's API root (default DefaultUpstream); tests and proxies
	// give http://127.0.0.1:PORT. A trailing /v1 (OpenAI's base URL) is dropped.
	Upstream map[Provider]string
	// Pricing prices the calls (default DefaultPricing()).
	Pricing Pricing
	// OnCharge is called after each metered call, on the request's goroutine.
	OnCharge func(Charge)
	// OnRefuse is called when a call is refused for a limit.
	OnRefuse func(c Caller, message string)
	// Transport reaches the providers (default: a clone of http.DefaultTransport).
	Transport http.RoundTripper
}

// Gateway is a run's model gateway on 127.0.0.1.
type Gateway struct {
	// URL is http://127.0.0.1:PORT.
	URL    string
	Ledger *Ledger

	o        Options
	ln       net.Listener
	srv      *http.Server
	upstream map[Provider]*url.URL
	proxy    *httputil.ReverseProxy

	mu      sync.Mutex
	callers map[string]Caller // token → caller
}

// Start listens on a free port of 127.0.0.1 until Close.
func Start(o Options) (*Gateway, error) {
	g := &Gateway{o: o, Ledger: newLedger(), callers: map[string]Caller{}, upstream: map[Provider]*url.URL{}}
	if g.o.Pricing == nil {
		g.o.Pricing = DefaultPricing()
	}
	for _, p := range Providers {
		raw := DefaultUpstream[p]
		if v := o.Upstream[p]; v != "" {
			raw = v
		}
		u, err := parseUpstream(raw)
		if err != nil {
			return nil, errors.New("gateway: " + err.Error())
		}
		g.upstream[p] = u
	}
	tr := o.Transport
	if tr == nil {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	g.proxy = &httputil.ReverseProxy{Rewrite: g.rewrite, Transport: tr, FlushInterval: -1,
		ModifyResponse: g.meter, ErrorHandler: g.upstreamError, ErrorLog: log.New(quietCanceled{os.Stderr}, "agentcanvas gateway: ", 0)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g.ln, g.URL = ln, "http://"+ln.Addr().String()
	g.srv = &http.Server{Handler: g}
	go func() { _ = g.srv.Serve(ln) }()
	return g, nil
}

// Port is the port the gateway listens on.
func (g *Gateway) Port() int { return g.ln.Addr().(*net.TCPAddr).Port }

// Close stops the gateway; calls in flight are cut, and its connections to the providers
// closed (a long-lived sidecar starts a gateway per run).
func (g *Gateway) Close() error {
	err := g.srv.Close()
	if c, ok := g.proxy.Transport.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
	return err
}

// Register gives c a new token and returns it with the base URL c's CLI is to use (the
// token is in its path, so it identifies the agent whatever credentials it sends).
func (g *Gateway) Register(c Caller) (token, baseURL string) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	token = tokenPrefix + hex.EncodeToString(b)
	g.mu.Lock()
	g.callers[token] = c
	g.mu.Unlock()
	return token, g.URL + "/t/" + token
}

// Unregister makes token mean nothing again.
func (g *Gateway) Unregister(token string) {
	g.mu.Lock()
	delete(g.callers, token)
	g.mu.Unlock()
}

// maxRequest bounds a request's body (a long conversation with images stays far below).
const maxRequest = 256 << 20

// tokenPrefix starts every token (so a token is never mistaken for a provider's key).
const tokenPrefix = "acgw-"

type ctxKey struct{}

// call is what a request's context carries from ServeHTTP to the proxy's hooks.
type call struct {
	caller   Caller
	provider Provider
	rest     string   // the path after the token
	upstream *url.URL // the caller's own upstream, if it has one
}

func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The token is in the path (/t/TOKEN/v1/…), or, for a CLI whose base URL is better
	// without it (Codex puts it on its command line), where the key would be.
	token, rest, inPath := "", r.URL.Path, strings.HasPrefix(r.URL.Path, "/t/")
	if inPath {
		token, rest, _ = strings.Cut(strings.TrimPrefix(r.URL.Path, "/t/"), "/")
		rest = "/" + rest
	}
	p, ok := providerOf(rest)
	if !ok {
		http.Error(w, "agentcanvas gateway: "+rest+" is not a model API path", http.StatusNotFound)
		return
	}
	if !inPath {
		token = tokenFromHeaders(p, r)
	}
	g.mu.Lock()
	c, known := g.callers[token]
	g.mu.Unlock()
	if token == "" || !known || (!inPath && c.Keys[p] == "") {
		refuse(w, p, http.StatusUnauthorized, "agentcanvas gateway: unknown agent token")
		return
	}
	if msg := g.Ledger.Over(c.Agent, c.Interaction); msg != "" {
		if g.o.OnRefuse != nil {
			g.o.OnRefuse(c, msg)
		}
		refuse(w, p, http.StatusBadRequest, msg)
		return
	}
	// The request is read whole before it is sent on: streamed from the agent's connection,
	// the server would close it when the provider's answer starts, while the transport still
	// reads it, and the stream would be cut (golang/go#40747). Requests are a conversation's
	// JSON; the answer is what streams.
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err != nil || len(body) > maxRequest {
		refuse(w, p, http.StatusRequestEntityTooLarge, fmt.Sprintf("agentcanvas gateway: the request could not be read whole (%d MiB at most)", maxRequest>>20))
		return
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.Header.Del("Transfer-Encoding")
	r.TransferEncoding = nil
	cl := &call{caller: c, provider: p, rest: rest}
	if raw := c.Upstream[p]; raw != "" {
		u, err := parseUpstream(raw)
		if err != nil {
			refuse(w, p, http.StatusBadGateway, "agentcanvas gateway: "+err.Error())
			return
		}
		cl.upstream = u
	}
	g.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, cl)))
}

// refuse answers with an error the CLI shows (400: the CLIs do not retry it).
func refuse(w http.ResponseWriter, p Provider, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody(p, status, msg))
}

// rewrite points the request at the provider, with the real key in place of the token.
func (g *Gateway) rewrite(pr *httputil.ProxyRequest) {
	c := pr.In.Context().Value(ctxKey{}).(*call)
	up := g.upstream[c.provider]
	if u := c.upstream; u != nil {
		up = u
	}
	out := pr.Out
	out.URL.Scheme, out.URL.Host = up.Scheme, up.Host
	out.URL.Path, out.URL.RawPath = strings.TrimSuffix(up.Path, "/")+c.rest, ""
	out.Host = up.Host
	// Usage is read from the body: let the transport negotiate (and undo) compression.
	out.Header.Del("Accept-Encoding")
	if key := c.caller.Keys[c.provider]; key != "" {
		setKey(c.provider, out, key)
	}
}

func (g *Gateway) meter(resp *http.Response) error {
	c := resp.Request.Context().Value(ctxKey{}).(*call)
	status := resp.StatusCode
	resp.Body = &meter{body: resp.Body, p: c.provider,
		sse: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"),
		done: func(model string, u Usage, seen bool) {
			if model == "" && c.provider == Gemini {
				model = geminiModel(c.rest)
			}
			g.charge(c, model, u, seen, status)
		}}
	return nil
}

// geminiModel is the model in a Gemini path (/v1beta/models/MODEL:method).
func geminiModel(path string) string {
	_, m, _ := strings.Cut(path, "/models/")
	m, _, _ = strings.Cut(m, ":")
	return m
}

func (g *Gateway) charge(c *call, model string, u Usage, seen bool, status int) {
	usd, known := g.o.Pricing.Cost(c.provider, model, u)
	calls := 0
	if isModelCall(c.rest) {
		calls = 1
	}
	a, in, run := g.Ledger.Add(c.caller.Agent, c.caller.Interaction, usd, u, calls)
	ch := Charge{Agent: c.caller.Agent, Interaction: c.caller.Interaction, Provider: c.provider, Model: model, Usage: u,
		USD: usd, CostKnown: known, UsageSeen: seen, Status: status, AgentSpend: a, InteractionSpend: in, RunSpend: run,
		Over: g.Ledger.Over(c.caller.Agent, c.caller.Interaction)}
	if g.o.OnCharge != nil {
		g.o.OnCharge(ch)
	}
}

// isModelCall: the request asks the model for a turn (not a token count or a model list).
func isModelCall(path string) bool {
	return strings.HasSuffix(path, "/v1/messages") || strings.HasSuffix(path, "/v1/responses") ||
		strings.HasSuffix(path, "/v1/chat/completions") || strings.Contains(path, ":generateContent") || strings.Contains(path, ":streamGenerateContent")
}

func (g *Gateway) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	c := r.Context().Value(ctxKey{}).(*call)
	if r.Context().Err() != nil {
		return // the agent went away
	}
	refuse(w, c.provider, http.StatusBadGateway, "agentcanvas gateway: the "+string(c.provider)+" API could not be reached: "+err.Error())
}

// parseUpstream reads a provider's API root; OpenAI's base URL ends in /v1, which the
// agents' paths already hold.
func parseUpstream(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSuffix(raw, "/"), "/v1"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("the upstream " + raw + " is not an http(s) URL")
	}
	return u, nil
}

// tokenFromHeaders is the token an agent sent where its key would go.
func tokenFromHeaders(p Provider, r *http.Request) string {
	for _, h := range authHeaders[p] {
		if v := strings.TrimPrefix(r.Header.Get(h), "Bearer "); strings.HasPrefix(v, tokenPrefix) {
			return v
		}
	}
	if v := r.URL.Query().Get("key"); strings.HasPrefix(v, tokenPrefix) {
		return v
	}
	return ""
}

// quietCanceled writes the proxy's log but for a stream cut because its agent was stopped (a
// spend limit, a timeout): that is the engine's doing, and the run's log says so.
type quietCanceled struct{ w io.Writer }

func (q quietCanceled) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte(context.Canceled.Error())) {
		return len(b), nil
	}
	return q.w.Write(b)
}
