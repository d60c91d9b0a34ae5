package gateway

import (
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// The gateway forwards exactly the model endpoints the pinned CLIs call, and nothing else: a
// request is matched against this list after its target has passed the checks below, never
// by prefix. Each entry was seen from the CLI itself (docs/agents.md, Gateway, lists them).

// callKind is what an endpoint does with the key.
type callKind int

const (
	modelCall   callKind = iota // asks the model for a turn: metered, reserved against limits
	countTokens                 // counts a request's tokens: free, not a model call
)

// endpoint is one allowed method and path of a provider.
type endpoint struct {
	provider Provider
	method   string
	path     *regexp.Regexp // the whole path after the agent's token
	kind     callKind
	// query are the parameters the CLI sends, with the one value each may have ("" for
	// Gemini's key, which holds the agent's token and is removed before forwarding).
	query map[string]string
	// chat: OpenAI's chat completions, which report a stream's usage only when asked.
	chat bool
}

// modelName is a model's name in a Gemini path.
const modelName = `[A-Za-z0-9][A-Za-z0-9._-]{0,127}`

var endpoints = []endpoint{
	// Claude Code: every turn (SDK adds ?beta=true), and token counts.
	{provider: Anthropic, method: http.MethodPost, path: regexp.MustCompile(`^/v1/messages$`), kind: modelCall, query: map[string]string{"beta": "true"}},
	{provider: Anthropic, method: http.MethodPost, path: regexp.MustCompile(`^/v1/messages/count_tokens$`), kind: countTokens, query: map[string]string{"beta": "true"}},
	// Codex: the Responses API (its provider speaks nothing else since wire_api "chat" was dropped).
	{provider: OpenAI, method: http.MethodPost, path: regexp.MustCompile(`^/v1/responses$`), kind: modelCall},
	// Chat completions: no pinned CLI calls it; kept for OpenAI-compatible clients, and
	// metered by asking for the stream's usage.
	{provider: OpenAI, method: http.MethodPost, path: regexp.MustCompile(`^/v1/chat/completions$`), kind: modelCall, chat: true},
	// Gemini CLI: turns (streamed), its router's and helpers' calls, and token counts of media.
	{provider: Gemini, method: http.MethodPost, path: regexp.MustCompile(`^/v1beta/models/` + modelName + `:streamGenerateContent$`), kind: modelCall, query: map[string]string{"alt": "sse", "key": ""}},
	{provider: Gemini, method: http.MethodPost, path: regexp.MustCompile(`^/v1beta/models/` + modelName + `:generateContent$`), kind: modelCall, query: map[string]string{"key": ""}},
	{provider: Gemini, method: http.MethodPost, path: regexp.MustCompile(`^/v1beta/models/` + modelName + `:countTokens$`), kind: countTokens, query: map[string]string{"key": ""}},
}

// target is a request's target as the gateway reads it: the agent's token when it is in the
// path, the path after it, and the query.
type target struct {
	token  string // "" when the token is not in the path
	inPath bool
	path   string
	query  url.Values
}

// pathChars are the only bytes a request's path may hold: no percent-encoding (so nothing
// decodes into a dot, a slash or anything else later), no backslash, no semicolon.
var pathChars = regexp.MustCompile(`^[A-Za-z0-9._~:/-]*$`)

// queryChars are the only bytes its query may hold.
var queryChars = regexp.MustCompile(`^[A-Za-z0-9._~=&-]*$`)

// readTarget checks a request's raw target (as sent, before any decoding) and splits it. The
// error says why it is refused: an absolute or authority form (a proxy request, CONNECT),
// an encoded or unusual byte, an empty, dot or doubled segment, or any difference from its
// cleaned form.
func readTarget(raw string) (target, string) {
	if !strings.HasPrefix(raw, "/") {
		return target{}, "only a path is accepted as the request target, not " + quoteShort(redactToken(raw))
	}
	p, q, _ := strings.Cut(raw, "?")
	switch {
	case !pathChars.MatchString(p):
		return target{}, "the path holds a byte outside letters, digits and ._~:/- (percent-encoding included)"
	case strings.Contains(p, "//"):
		return target{}, "the path has an empty segment (//)"
	case hasDotSegment(p):
		return target{}, "the path has a . or .. segment"
	case path.Clean(p) != p:
		return target{}, "the path differs from its cleaned form"
	case !queryChars.MatchString(q):
		return target{}, "the query holds a byte outside letters, digits and ._~=&-"
	}
	values, err := url.ParseQuery(q)
	if err != nil {
		return target{}, "the query does not parse"
	}
	t := target{path: p, query: values}
	if rest, ok := strings.CutPrefix(p, "/t/"); ok {
		t.token, t.path, _ = strings.Cut(rest, "/")
		t.path, t.inPath = "/"+t.path, true
	}
	return t, ""
}

func hasDotSegment(p string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}

// match finds the endpoint of a method and path; why says what is wrong when there is none,
// and status is the answer's (404: no such endpoint, 405: another method, 400: its query).
func match(method string, t target) (e endpoint, status int, why string) {
	var other []string
	for _, e := range endpoints {
		if !e.path.MatchString(t.path) {
			continue
		}
		if e.method != method {
			other = append(other, e.method)
			continue
		}
		for k, vs := range t.query {
			want, ok := e.query[k]
			switch {
			case !ok:
				return endpoint{}, http.StatusBadRequest, "the query parameter " + quoteShort(k) + " is not one the CLI sends"
			case len(vs) != 1:
				return endpoint{}, http.StatusBadRequest, "the query parameter " + quoteShort(k) + " is repeated"
			case want != "" && vs[0] != want:
				return endpoint{}, http.StatusBadRequest, "the query parameter " + k + " may only be " + want
			}
		}
		return e, 0, ""
	}
	if len(other) > 0 {
		return endpoint{}, http.StatusMethodNotAllowed, quoteShort(method) + " is not allowed on " + t.path + " (only " + strings.Join(other, ", ") + ")"
	}
	return endpoint{}, http.StatusNotFound, t.path + " is not a model endpoint the gateway forwards"
}

// geminiModel is the model in a Gemini path (/v1beta/models/MODEL:method).
func geminiModel(p string) string {
	_, m, _ := strings.Cut(p, "/models/")
	m, _, _ = strings.Cut(m, ":")
	return m
}

// quoteShort quotes s for a message (escaped: it is the agent's text, printed on a
// terminal), cut to a length a person reads.
func quoteShort(s string) string {
	if len(s) > 80 {
		return strconv.QuoteToASCII(s[:80]) + "…"
	}
	return strconv.QuoteToASCII(s)
}
