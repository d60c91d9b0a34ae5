package gateway

import (
	"encoding/json"
	"net/http"
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

// authHeaders are the headers (and, for Gemini, the ?key= parameter) a client authenticates
// with: the agent's token arrives there, and the real key leaves there.
var authHeaders = map[Provider][]string{
	Anthropic: {"X-Api-Key", "Authorization"},
	OpenAI:    {"Authorization"},
	Gemini:    {"X-Goog-Api-Key", "Authorization"},
}

// writeError answers with an error in the provider's own JSON shape, so the CLI shows its
// message (Anthropic's shape when the request named no provider). final: the CLI is not to
// retry it (Claude Code reads x-should-retry).
func writeError(w http.ResponseWriter, p Provider, status int, msg string, final bool) {
	w.Header().Set("Content-Type", "application/json")
	if final {
		w.Header().Set("X-Should-Retry", "false")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody(p, status, msg))
}

// errorBody is an error in the provider's own JSON shape.
func errorBody(p Provider, status int, msg string) any {
	switch p {
	case OpenAI:
		code := map[int]string{401: "invalid_api_key", 413: "request_too_large"}[status]
		if code == "" {
			code = "invalid_request_error"
		}
		return map[string]any{"error": map[string]any{"type": "invalid_request_error", "code": code, "message": msg}}
	case Gemini:
		st := map[int]string{401: "UNAUTHENTICATED", 404: "NOT_FOUND", 413: "INVALID_ARGUMENT"}[status]
		if st == "" {
			st = "FAILED_PRECONDITION"
		}
		return map[string]any{"error": map[string]any{"code": status, "status": st, "message": msg}}
	}
	typ := map[int]string{401: "authentication_error", 404: "not_found_error", 413: "request_too_large"}[status]
	if typ == "" {
		typ = "invalid_request_error"
	}
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
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
