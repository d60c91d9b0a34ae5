package gateway

import (
	"net/http"
	"strings"
)

// Provider is a model API the gateway forwards.
type Provider string

const (
	Anthropic Provider = "anthropic" // Messages API (Claude Code)
	OpenAI    Provider = "openai"    // Responses API (Codex)
	Gemini    Provider = "gemini"    // Gemini API (Gemini CLI)
)

// Providers are the three, in a fixed order.
var Providers = []Provider{Anthropic, OpenAI, Gemini}

// DefaultUpstream is each provider's real API root (without a version path).
var DefaultUpstream = map[Provider]string{
	Anthropic: "https://api.anthropic.com",
	OpenAI:    "https://api.openai.com",
	Gemini:    "https://generativelanguage.googleapis.com",
}

// providerOf tells the provider from a request path (the part after the agent's token).
func providerOf(path string) (Provider, bool) {
	switch {
	case strings.HasPrefix(path, "/v1/messages"), strings.HasPrefix(path, "/v1/complete"):
		return Anthropic, true
	case strings.HasPrefix(path, "/v1/responses"), strings.HasPrefix(path, "/v1/chat/completions"), path == "/v1/models" || strings.HasPrefix(path, "/v1/models/"):
		return OpenAI, true
	case strings.HasPrefix(path, "/v1beta/"), strings.HasPrefix(path, "/v1alpha/"), strings.HasPrefix(path, "/v1/models/gemini"):
		return Gemini, true
	}
	return "", false
}

// authHeaders are the headers (and, for Gemini, the ?key= parameter) a client authenticates
// with: the agent's token arrives there, and the real key leaves there.
var authHeaders = map[Provider][]string{
	Anthropic: {"X-Api-Key", "Authorization"},
	OpenAI:    {"Authorization"},
	Gemini:    {"X-Goog-Api-Key", "Authorization"},
}

// setKey replaces whatever credentials the agent sent with the real key.
func setKey(p Provider, r *http.Request, key string) {
	for _, h := range authHeaders[p] {
		r.Header.Del(h)
	}
	switch p {
	case Anthropic:
		r.Header.Set("X-Api-Key", key)
	case OpenAI:
		r.Header.Set("Authorization", "Bearer "+key)
	case Gemini:
		r.Header.Set("X-Goog-Api-Key", key)
	}
	if q := r.URL.Query(); q.Has("key") {
		q.Del("key")
		r.URL.RawQuery = q.Encode()
	}
}

// errorBody is an error in the provider's own JSON shape, so the CLI shows its message.
func errorBody(p Provider, status int, msg string) any {
	switch p {
	case Anthropic:
		typ := "invalid_request_error"
		if status == http.StatusUnauthorized {
			typ = "authentication_error"
		}
		return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	case Gemini:
		st := "FAILED_PRECONDITION"
		if status == http.StatusUnauthorized {
			st = "UNAUTHENTICATED"
		}
		return map[string]any{"error": map[string]any{"code": status, "status": st, "message": msg}}
	}
	code := "insufficient_quota"
	if status == http.StatusUnauthorized {
		code = "invalid_api_key"
	}
	return map[string]any{"error": map[string]any{"type": "invalid_request_error", "code": code, "message": msg}}
}

// KeyVars are the environment variables each provider's CLI reads its key from: a flow that
// names one of them in an agent's runtime.env routes the agent through the gateway.
var KeyVars = map[Provider][]string{
	Anthropic: {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"},
	OpenAI:    {"OPENAI_API_KEY", "CODEX_API_KEY"},
	Gemini:    {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
}

// BaseURLVars are the variables that point each provider's CLI at an API root: the gateway
// sets them for the agent, and a value the flow gives is the gateway's upstream instead.
var BaseURLVars = map[Provider]string{
	Anthropic: "ANTHROPIC_BASE_URL",
	OpenAI:    "OPENAI_BASE_URL",
	Gemini:    "GOOGLE_GEMINI_BASE_URL",
}

// FromEnv reads an agent's environment (the values of its runtime.env): the real key of each
// provider whose key variable has a value, and the upstream of each whose base-URL variable
// has one (a proxy, or a scripted model in tests). No key at all: the agent uses an account
// login, or no model the gateway knows.
func FromEnv(env map[string]string) (keys, upstream map[Provider]string) {
	keys, upstream = map[Provider]string{}, map[Provider]string{}
	for _, p := range Providers {
		for _, k := range KeyVars[p] {
			if v := env[k]; v != "" && keys[p] == "" {
				keys[p] = v
			}
		}
		if v := env[BaseURLVars[p]]; v != "" {
			upstream[p] = v
		}
	}
	return keys, upstream
}
