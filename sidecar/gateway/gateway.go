package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Caller is one agent in one interaction, as the gateway knows it.
type Caller struct {
	Agent, Interaction string
	// Keys are the real keys by provider. A provider without one passes the agent's own
	// credentials through (an account login).
	Keys map[Provider]string
	// Upstream overrides the gateway's upstream per provider (the base URL the flow gave).
	Upstream map[Provider]string
	// NetworkOpen: the agent may reach the network itself (runtime.network open), so the
	// provider's own tools that search and fetch stay in its requests.
	NetworkOpen bool
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
	// Estimated says why the charge is the call's reservation or what it streamed instead
	// of the usage the provider reported ("" when it is that usage).
	Estimated string
	// Reserved is what the call reserved before it was sent.
	Reserved float64
	Status   int
	// Totals after this call.
	AgentSpend, InteractionSpend, RunSpend Spend
	// Over names the limit this call reached ("" for none): the next call is refused.
	Over string
}

// Call is a request the gateway sends on to a provider.
type Call struct {
	Caller         Caller
	Method, Path   string
	Provider       Provider
	Model          string
	ModelCall      bool    // a model turn (else a token count)
	ReservedUSD    float64 // what it reserved against the limits
	ReservedTokens int64
	// OutputCap is the output cap the gateway set on the request (0: left as it was).
	OutputCap int64
	// Removed are the provider-side tools and betas taken out of the request.
	Removed []string
	// Unpriced: the price table does not name Model, so the call is priced at its provider's
	// dearest (Gateway.Price says at what).
	Unpriced bool
}

// Refusal is a request the gateway answered itself, without the provider.
type Refusal struct {
	Caller       Caller   // empty when the request named no agent the gateway knows
	Provider     Provider // "" when the request named none: its error is then Anthropic's shape
	Method, Path string   // as the agent sent them (quoted; the path cut short)
	Status       int
	Message      string
	// Limit is the spend limit the call would have passed (nil for other refusals).
	Limit *Hit
	// Unreachable: the provider could not be reached in a way a retry does not mend (a name
	// that does not resolve, a refused connection): the CLI is told not to retry.
	Unreachable bool
}

// Options configure a gateway.
type Options struct {
	// Upstream is each provider's API root (default DefaultUpstream); tests and proxies
	// give http://127.0.0.1:PORT. A trailing /v1 (OpenAI's base URL) is dropped.
	Upstream map[Provider]string
	// Pricing prices the calls (default DefaultPricing()).
	Pricing Pricing
	// OnCall is called for each request sent on, before it goes.
	OnCall func(Call)
	// OnCharge is called after each metered call, on the request's goroutine.
	OnCharge func(Charge)
	// OnRefuse is called for each request the gateway refuses.
	OnRefuse func(Refusal)
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
	hosts    [2]string // the Host a request may name: 127.0.0.1:PORT, localhost:PORT

	mu      sync.Mutex
	callers map[string]Caller // token → caller
	held    map[string]int64  // token → bytes its requests' bodies may take now
	flying  map[string]int    // token → its requests in flight
}

// Start listens on a free port of 127.0.0.1 until Close.
func Start(o Options) (*Gateway, error) {
	g := &Gateway{o: o, Ledger: newLedger(), callers: map[string]Caller{}, held: map[string]int64{}, flying: map[string]int{}, upstream: map[Provider]*url.URL{}}
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
		ModifyResponse: g.answer, ErrorHandler: g.upstreamError, ErrorLog: log.New(quietCanceled{os.Stderr}, "agentcanvas gateway: ", 0)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g.ln, g.URL = ln, "http://"+ln.Addr().String()
	g.hosts = [2]string{ln.Addr().String(), "localhost:" + strconv.Itoa(g.Port())}
	g.srv = &http.Server{Handler: g, ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeader, ConnContext: withConn}
	go func() { _ = g.srv.Serve(boundedListener{ln}) }() // conns.go
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

const (
	// maxRequest bounds a request's body: above the providers' own limits (Anthropic's is
	// 32 MB), so a conversation they would take is never refused here.
	maxRequest = 48 << 20
	// maxHeld bounds the bodies one agent's requests may hold in the gateway at once: a
	// hostile agent cannot fill the sidecar's memory with large requests made together.
	maxHeld = 128 << 20
	// maxHeader bounds a request's headers.
	maxHeader = 64 << 10
	// maxInFlight bounds the requests one agent may have in flight at once (a CLI makes a
	// few together): its connections carrying calls cannot fill the room of every agent's.
	maxInFlight = 128
)

// headerTimeout is how long a connection may take to send a request's headers, and
// bodyTimeout its body (a slow sender holds a goroutine, no more; tests shorten them).
var (
	headerTimeout = 30 * time.Second
	bodyTimeout   = 5 * time.Minute
	idleTimeout   = 5 * time.Minute
)

// tokenPrefix starts every token (so a token is never mistaken for a provider's key).
const tokenPrefix = "acgw-"

// tokens finds an agent's token in a request's target, to keep it out of events and logs.
var tokens = regexp.MustCompile(tokenPrefix + `[0-9A-Za-z]*`)

func redactToken(s string) string { return tokens.ReplaceAllString(s, tokenPrefix+"(token)") }

type ctxKey struct{}

// call is what a request's context carries from ServeHTTP to the proxy's hooks.
type call struct {
	caller   Caller
	e        endpoint
	path     string        // the path after the token
	query    url.Values    // its query, the token taken out
	req      *modelRequest // a model call's body as read (nil for a count)
	body     []byte        // what is sent on
	header   http.Header   // the headers sent on
	upstream *url.URL
	w        worst
	grant    Grant
	removed  []string    // provider-side tools and betas taken out
	unpriced bool        // the table does not name the model
	release  func()      // gives back what its body held
	written  atomic.Bool // the request reached the provider's connection
	settled  sync.Once
}

func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cl, ref := g.admit(w, r)
	if cl != nil && cl.release != nil {
		defer cl.release()
	}
	if ref != nil {
		g.refuse(w, *ref)
		return
	}
	defer conns.carrying(connOf(r.Context()))()
	defer g.settle(cl, metered{}, 0, "the gateway's answer to the agent ended without the provider's")
	if g.o.OnCall != nil {
		g.o.OnCall(cl.event(r.Method))
	}
	g.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, cl)))
}

// admit runs a request through every check before it may go on, in order: its target and
// Host, the endpoint list, the agent's token, its body, and (a model call) its reservation.
func (g *Gateway) admit(w http.ResponseWriter, r *http.Request) (*call, *Refusal) {
	refusal := func(c Caller, p Provider, status int, msg string) *Refusal {
		return &Refusal{Caller: c, Provider: p, Method: quoteShort(r.Method), Path: quoteShort(redactToken(r.RequestURI)), Status: status, Message: "agentcanvas gateway: " + msg}
	}
	t, why := readTarget(r.RequestURI)
	switch {
	case why != "":
		return nil, refusal(Caller{}, "", http.StatusBadRequest, why)
	case r.Host != g.hosts[0] && r.Host != g.hosts[1]:
		return nil, refusal(Caller{}, "", http.StatusMisdirectedRequest, "the request names the host "+quoteShort(r.Host)+", not the gateway")
	}
	e, status, why := match(r.Method, t)
	if why != "" {
		return nil, refusal(Caller{}, "", status, why)
	}
	token, c, ok := g.caller(e.provider, t, r)
	if !ok {
		return nil, refusal(Caller{}, e.provider, http.StatusUnauthorized, "unknown agent token")
	}
	cl := &call{caller: c, e: e, path: t.path, query: t.query}
	if cl.release = g.hold(token, r.ContentLength); cl.release == nil {
		return cl, refusal(c, e.provider, http.StatusTooManyRequests, fmt.Sprintf("the agent's requests in flight hold %d MiB, or are %d, already; try again when one has ended", maxHeld>>20, maxInFlight))
	}
	cl.query.Del("key")
	if raw := c.Upstream[e.provider]; raw != "" {
		u, err := parseUpstream(raw)
		if err != nil {
			return cl, refusal(c, e.provider, http.StatusBadRequest, err.Error())
		}
		cl.upstream = u
	}
	body, err := readBody(w, r)
	if err != nil {
		return cl, refusal(c, e.provider, http.StatusRequestEntityTooLarge, err.Error())
	}
	var dropped []string
	cl.header, dropped = outHeaders(e.provider, r.Header, c.Keys[e.provider])
	if msg, hit := g.prepare(r.Context(), cl, body); msg != "" {
		ref := refusal(c, e.provider, http.StatusBadRequest, "")
		ref.Message, ref.Limit = msg, hit
		return cl, ref
	}
	cl.removed = append(cl.removed, dropped...)
	return cl, nil
}

// caller finds the agent a request is from: the token in its path, or, for a CLI whose base
// URL is better without it (Codex puts it on its command line), where the key would be (a
// login's token only in the path: its key header holds its own credentials).
func (g *Gateway) caller(p Provider, t target, r *http.Request) (string, Caller, bool) {
	token := t.token
	if !t.inPath {
		token = tokenFromHeaders(p, r, t.query)
	}
	g.mu.Lock()
	c, known := g.callers[token]
	g.mu.Unlock()
	return token, c, token != "" && known && (t.inPath || c.Keys[p] != "")
}

// hold counts a request, and its body (its length, or the most a body may be), against what
// its agent's requests may hold at once, and returns what gives them back (nil: no room).
func (g *Gateway) hold(token string, length int64) (release func()) {
	if length < 0 || length > maxRequest {
		length = maxRequest
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held[token]+length > maxHeld || g.flying[token] >= maxInFlight {
		return nil
	}
	g.held[token] += length
	g.flying[token]++
	return func() {
		g.mu.Lock()
		g.held[token] -= length
		g.flying[token]--
		g.mu.Unlock()
	}
}

// readBody reads a request's body whole before it is sent on: streamed from the agent's
// connection, the server would close it when the provider's answer starts, while the
// transport still reads it, and the stream would be cut (golang/go#40747). Requests are a
// conversation's JSON; the answer is what streams. A sender that trickles is cut off.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout))
	buf := bytes.NewBuffer(make([]byte, 0, min(max(r.ContentLength, 0), maxRequest)+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(r.Body, maxRequest+1))
	body := buf.Bytes()
	_ = rc.SetReadDeadline(time.Time{})
	if err != nil || len(body) > maxRequest {
		return nil, fmt.Errorf("the request could not be read whole (%d MiB at most, within %s)", maxRequest>>20, bodyTimeout)
	}
	return body, nil
}

// refuse answers a request the gateway will not send on, in the provider's error shape,
// and tells of it. Statuses the CLIs do not retry: 400, 401, 404, 405, 413, 421.
func (g *Gateway) refuse(w http.ResponseWriter, ref Refusal) {
	if g.o.OnRefuse != nil {
		g.o.OnRefuse(ref)
	}
	writeError(w, ref.Provider, ref.Status, ref.Message, ref.Unreachable)
}

// rewrite points the request at the provider, with the gateway's own body and headers.
func (g *Gateway) rewrite(pr *httputil.ProxyRequest) {
	c := pr.In.Context().Value(ctxKey{}).(*call)
	up := g.upstream[c.e.provider]
	if u := c.upstream; u != nil {
		up = u
	}
	out := pr.Out
	out.URL.Scheme, out.URL.Host, out.Host = up.Scheme, up.Host, up.Host
	out.URL.Path, out.URL.RawPath = trimSlash(up.Path)+c.path, ""
	out.URL.RawQuery = c.query.Encode()
	out.Header = c.header
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(c.body)), int64(len(c.body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(c.body)), nil }
	out.TransferEncoding, out.Trailer = nil, nil // trailers the agent sent would follow the body over HTTP/2
	*out = *out.WithContext(withWroteTrace(out.Context(), c))
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// parseUpstream reads a provider's API root; OpenAI's base URL ends in /v1, which the
// agents' paths already hold.
func parseUpstream(raw string) (*url.URL, error) {
	s := trimSlash(raw)
	if len(s) >= 3 && s[len(s)-3:] == "/v1" {
		s = s[:len(s)-3]
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("the upstream " + quoteShort(raw) + " is not an http(s) URL of an API root")
	}
	return u, nil
}

// tokenFromHeaders is the token an agent sent where its key would go.
func tokenFromHeaders(p Provider, r *http.Request, q url.Values) string {
	for _, h := range authHeaders[p] {
		if v := trimBearer(r.Header.Get(h)); len(v) > len(tokenPrefix) && v[:len(tokenPrefix)] == tokenPrefix {
			return v
		}
	}
	if v := q.Get("key"); len(v) > len(tokenPrefix) && v[:len(tokenPrefix)] == tokenPrefix {
		return v
	}
	return ""
}

func trimBearer(v string) string {
	if len(v) > 7 && v[:7] == "Bearer " {
		return v[7:]
	}
	return v
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
