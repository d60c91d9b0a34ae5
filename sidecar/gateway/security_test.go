package gateway

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// bodyOK is a small model call of each API.
const bodyOK = `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`

// post builds a raw HTTP/1.1 request with a body.
func rawPost(method, target, host, extra, body string) string {
	return fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s", method, target, host, len(body), extra, body)
}

// Only the model endpoints reach the provider, with the key: every other path (dot segments,
// their encodings in any case, doubled and encoded slashes, a path that is not its cleaned
// form, an unknown query), every other method, an absolute request URI, CONNECT and a forged
// Host are refused by the gateway, sent as raw bytes so no client cleans them first.
func TestOnlyModelCallsReachTheProvider(t *testing.T) {
	b := startBiller(t, 10)
	g, _, ref := gatewayFor(t, b, Anthropic)
	token, _ := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	addr := strings.TrimPrefix(g.URL, "http://")
	tp := "/t/" + token
	refused := []struct{ method, target, host string }{
		{"POST", tp + "/v1/messages/../../v1/organizations/api_keys", addr},
		{"POST", tp + "/v1/complete/%2e%2e/%2e%2e/v1/files", addr},
		{"POST", tp + "/v1/messages/%2E%2E/%2E%2E/v1/files", addr},
		{"POST", tp + "/v1/messages/batches", addr},
		{"POST", tp + "/v1/messages/count_tokens/..", addr},
		{"POST", tp + "/v1/messages/.", addr},
		{"POST", tp + "/./v1/messages", addr},
		{"POST", tp + "//v1/messages", addr},
		{"POST", tp + "/v1//messages", addr},
		{"POST", tp + "/v1/messages/", addr},
		{"POST", tp + "/v1%2fmessages", addr},
		{"POST", tp + "/v1%2Fmessages", addr},
		{"POST", tp + "/v1/messages%00", addr},
		{"POST", tp + "/v1/messages;x=1", addr},
		{"POST", tp + "/v1/messages\\..\\files", addr},
		{"POST", tp + "/V1/messages", addr},
		{"POST", tp + "/v1/complete", addr},
		{"POST", tp + "/v1/models", addr},
		{"POST", tp + "/v1/files", addr},
		{"POST", tp + "/v1/messages?beta=false", addr},
		{"POST", tp + "/v1/messages?beta=true&beta=true", addr},
		{"POST", tp + "/v1/messages?beta=true&anthropic-version=x", addr},
		{"POST", tp + "/v1/messages?%62eta=true", addr},
		{"GET", tp + "/v1/messages", addr},
		{"PUT", tp + "/v1/messages", addr},
		{"DELETE", tp + "/v1/messages", addr},
		{"PATCH", tp + "/v1/messages", addr},
		{"OPTIONS", tp + "/v1/messages", addr},
		{"HEAD", tp + "/v1/messages", addr},
		{"GET", tp + "/v1/models", addr},
		{"POST", "http://" + addr + tp + "/v1/messages", addr},
		{"POST", "http://api.anthropic.com" + tp + "/v1/messages", "api.anthropic.com"},
		{"CONNECT", "api.anthropic.com:443", "api.anthropic.com:443"},
		{"POST", tp + "/v1/messages", "api.anthropic.com"},
		{"POST", tp + "/v1/messages", "evil.example:" + fmt.Sprint(g.Port())},
		{"POST", "/t/acgw-forged/v1/messages", addr},
	}
	for _, c := range refused {
		st := rawRequest(t, addr, rawPost(c.method, c.target, c.host, "X-Api-Key: "+token+"\r\n", bodyOK), 1)
		if len(st) == 1 && st[0] < 300 {
			t.Errorf("%s %s (Host %s): %d, want refused", c.method, c.target, c.host, st[0])
		}
	}
	if n := len(b.requests()); n != 0 {
		t.Fatalf("%d requests reached the provider: %+v", n, b.requests())
	}
	if n := len(ref.all()); n < len(refused)-3 { // the ones the HTTP server itself refuses are not the gateway's to tell of
		t.Errorf("%d refusals told of, for %d refused requests", n, len(refused))
	}
	for _, r := range ref.all() {
		if strings.Contains(r.Path+r.Message, token) {
			t.Errorf("a refusal tells the agent's token: %+v", r)
		}
	}
	// The endpoints themselves pass.
	for _, target := range []string{tp + "/v1/messages?beta=true", tp + "/v1/messages", tp + "/v1/messages/count_tokens?beta=true"} {
		if st := rawRequest(t, addr, rawPost("POST", target, addr, "", bodyOK), 1); len(st) != 1 || st[0] != 200 {
			t.Errorf("POST %s: %v", target, st)
		}
	}
	for _, r := range b.requests() {
		if r.method != "POST" || (r.path != "/v1/messages" && r.path != "/v1/messages/count_tokens") || r.header.Get("X-Api-Key") != realKey {
			t.Errorf("the provider got %s %s with key %q", r.method, r.path, r.header.Get("X-Api-Key"))
		}
	}
}

// Gemini's and OpenAI's endpoints, and theirs only.
func TestEndpointList(t *testing.T) {
	ok := map[string]string{
		"/v1/responses":        "POST",
		"/v1/chat/completions": "POST",
		"/v1beta/models/gemini-2.5-flash:streamGenerateContent": "POST",
		"/v1beta/models/gemini-2.5-flash:generateContent":       "POST",
		"/v1beta/models/gemini-2.5-flash:countTokens":           "POST",
		"/v1/messages":              "POST",
		"/v1/messages/count_tokens": "POST",
	}
	for p, m := range ok {
		if _, _, why := match(m, target{path: p}); why != "" {
			t.Errorf("%s %s: %s", m, p, why)
		}
	}
	for _, p := range []string{"/v1/responses/resp_1", "/v1/responses/resp_1/cancel", "/v1/files", "/v1/embeddings", "/v1/images/generations",
		"/v1/organization/admin_api_keys", "/v1beta/models", "/v1beta/models/gemini-2.5-flash", "/v1beta/models/x:embedContent",
		"/v1beta/models/x:batchEmbedContents", "/v1beta/files", "/v1beta/cachedContents", "/v1beta/tunedModels/x:generateContent",
		"/v1beta/models/a/b:generateContent", "/upload/v1beta/files", "/v1/models", "/v1alpha/models/x:generateContent"} {
		if _, _, why := match("POST", target{path: p}); why == "" {
			t.Errorf("POST %s matched", p)
		}
	}
}

// readTarget refuses what is not a clean path before any matching.
func TestReadTarget(t *testing.T) {
	for _, raw := range []string{"/a/../b", "/a/./b", "/a//b", "/a/", "/a/%2e%2e/b", "/a%2Fb", "/a/%2E", "*", "example.com:443",
		"http://x/a", "/a?b=%20", "/a?b c", "/a#f", "/a\\b", "/..", "/a/.."} {
		if _, why := readTarget(raw); why == "" {
			t.Errorf("%q passed", raw)
		}
	}
	tg, why := readTarget("/t/acgw-1/v1beta/models/m:streamGenerateContent?alt=sse&key=acgw-1")
	if why != "" || tg.token != "acgw-1" || tg.path != "/v1beta/models/m:streamGenerateContent" || tg.query.Get("alt") != "sse" {
		t.Errorf("%+v %q", tg, why)
	}
}

// Headers the agent adds to change who pays or what the provider does never reach it: its
// own key or bearer token, an organisation or project, a beta that reaches beyond the
// request. The real key is the only credential the provider sees.
func TestForwardedHeaders(t *testing.T) {
	for _, c := range budgetCalls {
		t.Run(c.name, func(t *testing.T) {
			b := startBiller(t, 10)
			g, _, _ := gatewayFor(t, b, c.provider())
			token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{c.provider(): realKey}})
			req, _ := http.NewRequest(http.MethodPost, base+c.path, strings.NewReader(c.body))
			for k, v := range map[string]string{"X-Api-Key": "sk-attacker", "Authorization": "Bearer sk-attacker", "X-Goog-Api-Key": "sk-attacker",
				"OpenAI-Organization": "org-other", "OpenAI-Project": "proj-other", "X-Goog-User-Project": "other", "Anthropic-Beta": "files-api-2025-04-14, claude-code-20250219,mcp-client-2025-04-04",
				"Cookie": "a=b", "X-Forwarded-For": "1.2.3.4"} {
				req.Header.Set(k, v)
			}
			if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%v %v", resp, err)
			} else {
				resp.Body.Close()
			}
			r := b.requests()[0]
			all := fmt.Sprint(r.header)
			if strings.Contains(all, "attacker") || strings.Contains(all, "other") || strings.Contains(all, token) || !strings.Contains(all, realKey) ||
				strings.Contains(all, "1.2.3.4") || r.header.Get("Cookie") != "" {
				t.Errorf("the provider got headers %s", all)
			}
			if got := r.header.Get("Anthropic-Beta"); c.provider() == Anthropic && got != "claude-code-20250219" {
				t.Errorf("anthropic-beta %q", got)
			}
		})
	}
}

// The provider's own tools that reach the network (a web search, a fetch, MCP servers) are
// taken out of the request of an agent whose network is the gateway, and kept for one whose
// network is open.
func TestProviderSideToolsRemoved(t *testing.T) {
	b := startBiller(t, 10)
	g, _, _ := gatewayFor(t, b, OpenAI)
	confined, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{OpenAI: realKey}})
	open, openBase := g.Register(Caller{Agent: "web", Interaction: "i", Keys: map[Provider]string{OpenAI: realKey}, NetworkOpen: true})
	c := budgetCalls[1]
	c.body = `{"model":"gpt-5","stream":true,"input":"hi","tools":[{"type":"function","name":"exec_command"},{"type":"web_search"},{"type":"mcp","server_url":"https://evil.example"},{"type":"tool_search"}]}`
	c.send(t, base, confined, false)
	c.send(t, openBase, open, false)
	reqs := b.requests()
	if got := fmt.Sprint(reqs[0].body["tools"]); strings.Contains(got, "web_search") || strings.Contains(got, "evil") || !strings.Contains(got, "exec_command") || !strings.Contains(got, "tool_search") {
		t.Errorf("confined agent's tools %s", got)
	}
	if got := fmt.Sprint(reqs[1].body["tools"]); !strings.Contains(got, "web_search") {
		t.Errorf("open agent's tools %s", got)
	}
	a := `{"model":"m","max_tokens":5,"mcp_servers":[{"url":"https://evil.example"}],"tools":[{"name":"Bash"},{"type":"web_fetch_20250910","name":"web_fetch"},{"type":"bash_20250124","name":"bash"}],"messages":[]}`
	r, err := readModelRequest(endpoints[0], "/v1/messages", []byte(a), false)
	body, _ := r.body()
	if err != nil || strings.Contains(string(body), "evil") || strings.Contains(string(body), "web_fetch") || !strings.Contains(string(body), `"bash_20250124"`) {
		t.Errorf("anthropic: %s (%v)", body, err)
	}
	gm := `{"contents":[],"tools":[{"googleSearch":{}},{"functionDeclarations":[{"name":"f"}]},{"urlContext":{}}]}`
	r, _ = readModelRequest(endpoints[4], "/v1beta/models/m:streamGenerateContent", []byte(gm), false)
	body, _ = r.body()
	if strings.Contains(string(body), "googleSearch") || strings.Contains(string(body), "urlContext") || !strings.Contains(string(body), "functionDeclarations") {
		t.Errorf("gemini: %s", body)
	}
}

// The body the provider reads is the one the gateway read: a repeated member, a member
// spelled with escapes, or two spellings of one are never read differently.
func TestBodyReadOnce(t *testing.T) {
	b := startBiller(t, 1_000_000)
	g, _, _ := gatewayFor(t, b, Anthropic)
	g.Ledger.SetAgentLimit("coder", Limit{USD: 0.2})
	token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	c := budgetCalls[0]
	c.body = `{"model":"claude-sonnet-4-5","max_tokens":100,"max_tokens":900000,"max\u005ftokens":800000,"stream":true,"messages":[]}`
	c.send(t, base, token, false)
	if r := b.requests(); len(r) != 1 || outputCap(r[0].body) > 20_000 {
		t.Errorf("the provider read a cap of %d", outputCap(r[0].body))
	}
	gm := `{"generationConfig":{"maxOutputTokens":5},"generation_config":{"maxOutputTokens":900000},"contents":[]}`
	if _, err := readModelRequest(endpoints[4], "/v1beta/models/m:streamGenerateContent", []byte(gm), false); err == nil {
		t.Error("two spellings of generationConfig passed")
	}
	for _, bad := range []string{`[]`, `"x"`, `{"max_tokens":"100"}`, `{"max_tokens":-1}`, `{"max_tokens":1.5}`, `not json`} {
		if _, err := readModelRequest(endpoints[0], "/v1/messages", []byte(bad), false); err == nil {
			t.Errorf("%s passed", bad)
		}
	}
}

// Requests smuggled behind another (pipelined on one connection, or hidden by a body length
// the gateway and the provider would read differently) never reach the provider: the
// gateway reads each request itself and sends only a body of its own making.
func TestSmuggledRequests(t *testing.T) {
	b := startBiller(t, 10)
	g, _, _ := gatewayFor(t, b, Anthropic)
	token, _ := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	addr := strings.TrimPrefix(g.URL, "http://")
	tp := "/t/" + token
	smuggled := "POST " + tp + "/v1/files HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 2\r\n\r\n{}"
	// Pipelined: a model call, then a request for another endpoint, in one write.
	st := rawRequest(t, addr, rawPost("POST", tp+"/v1/messages", addr, "", bodyOK)+smuggled, 2)
	if len(st) != 2 || st[0] != 200 || st[1] == 200 {
		t.Errorf("pipelined: %v", st)
	}
	// Content-Length and Transfer-Encoding at once, the smuggled request in the body.
	chunked := "0\r\n\r\n" + smuggled
	req := "POST " + tp + "/v1/messages HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: " + fmt.Sprint(len(chunked)) + "\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked
	t.Logf("CL+TE: %v", rawRequest(t, addr, req, 2))
	// Two lengths.
	t.Logf("two lengths: %v", rawRequest(t, addr, "POST "+tp+"/v1/messages HTTP/1.1\r\nHost: "+addr+"\r\nContent-Length: 2\r\nContent-Length: 90\r\n\r\n{}"+smuggled, 2))
	for _, r := range b.requests() {
		if r.path != "/v1/messages" {
			t.Errorf("the provider got %s %s", r.method, r.path)
		}
	}
}

// A body larger than the gateway reads, and a sender that trickles its request, are cut off
// without reaching the provider.
func TestLargeAndSlowRequests(t *testing.T) {
	b := startBiller(t, 10)
	g, _, _ := gatewayFor(t, b, Anthropic)
	token, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	big := `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"` + strings.Repeat("x", maxRequest) + `"}]}`
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(big))
	req.Header.Set("X-Api-Key", token)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("a body of %d MiB: %d", len(big)>>20, resp.StatusCode)
		}
	}
	// Slowloris: headers that never end are cut at the server's header timeout.
	restore := headerTimeout
	headerTimeout = 200 * time.Millisecond
	defer func() { headerTimeout = restore }()
	g2 := startGateway(t, Options{Upstream: map[Provider]string{Anthropic: b.srv.URL}})
	c, err := net.Dial("tcp", strings.TrimPrefix(g2.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: %s\r\nX-Slow: ", strings.TrimPrefix(g2.URL, "http://"))
	_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a failure's bound
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	if err == nil && !strings.Contains(string(buf[:n]), "408") {
		t.Errorf("a trickling sender got %q", buf[:n])
	}
	if len(b.requests()) != 0 {
		t.Errorf("the provider got %d requests", len(b.requests()))
	}
}

// An agent's large requests made together cannot fill the sidecar's memory: past what one
// agent's bodies may hold at once, a request is refused (429: the CLI tries again later)
// before its body is read; another agent is not held up.
func TestLargeRequestsHeldAtOnce(t *testing.T) {
	b := startBiller(t, 10)
	g, _, _ := gatewayFor(t, b, Anthropic)
	token, _ := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	other, _ := g.Register(Caller{Agent: "other", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	addr := strings.TrimPrefix(g.URL, "http://")
	head := func(tok string) string {
		return fmt.Sprintf("POST /t/%s/v1/messages HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n{", tok, addr, maxRequest)
	}
	for range maxHeld / maxRequest { // as many as fit, their bodies still coming
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprint(c, head(token))
	}
	waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.held[token] == maxHeld/maxRequest*maxRequest })
	if st := rawRequest(t, addr, head(token), 1); len(st) != 1 || st[0] != http.StatusTooManyRequests {
		t.Errorf("one more large request: %v, want 429", st)
	}
	if st := rawRequest(t, addr, rawPost("POST", "/t/"+other+"/v1/messages", addr, "", bodyOK), 1); len(st) != 1 || st[0] != 200 {
		t.Errorf("another agent's call: %v", st)
	}
}
