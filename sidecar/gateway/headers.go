package gateway

import (
	"net/http"
	"strings"
)

// The request headers a provider gets: a list per provider, and nothing else the agent
// sent. Dropped on purpose: an organisation or project header (OpenAI-Organization,
// OpenAI-Project, X-Goog-User-Project) would bill another account of the key's owner, and the
// key headers are the gateway's to set. The agent's own credentials pass only for a login
// (no key registered for the provider).
var forwardedHeaders = map[Provider][]string{
	Anthropic: {"Accept", "User-Agent", "Anthropic-Version", "Anthropic-Beta"},
	OpenAI:    {"Accept", "User-Agent"},
	Gemini:    {"Accept", "User-Agent"},
}

// anthropicBetas are the Messages API betas the pinned Claude Code uses that change neither
// what a call costs nor what the provider reaches: any other is taken out of the header (the
// 1M-token context is priced differently; files, MCP servers, skills and web fetches reach
// beyond the request).
var anthropicBetas = map[string]bool{
	"claude-code-20250219": true, "interleaved-thinking-2025-05-14": true, "context-management-2025-06-27": true,
	"per-turn-control-2026-07-01": true, "mid-conversation-tool-changes-2026-07-01": true, "thinking-token-count-2026-05-13": true,
	"advanced-tool-use-2025-11-20": true, "effort-2025-11-24": true, "thinking-display-updates-2026-08-18": true,
	"token-counting-2024-11-01": true, "oauth-2025-04-20": true, "fine-grained-tool-streaming-2025-05-14": true,
	"redact-thinking-2026-02-12": true, "structured-outputs-2025-12-15": true, "prompt-caching-scope-2026-01-05": true,
	"tool-search-tool-2025-10-19": true, "thinking-resumption-2026-07-17": true, "mid-conversation-system-2026-04-07": true,
}

// outHeaders builds the headers of a request to provider p from the agent's: the listed ones,
// Anthropic's betas filtered, the real key (or, for a login, the agent's own credentials).
// dropped names the betas taken out.
func outHeaders(p Provider, in http.Header, key string) (out http.Header, dropped []string) {
	// The body is JSON, as the gateway read it: no other type or character set (which a
	// provider might read the body by, differently) is said of it.
	out = http.Header{"Content-Type": {"application/json"}}
	for _, h := range forwardedHeaders[p] {
		if v := in.Values(h); len(v) > 0 {
			out[h] = append([]string(nil), v...)
		}
	}
	if betas := out.Values("Anthropic-Beta"); len(betas) > 0 {
		var kept []string
		for _, v := range betas {
			for _, b := range strings.Split(v, ",") {
				if b = strings.TrimSpace(b); anthropicBetas[b] {
					kept = append(kept, b)
				} else if b != "" {
					dropped = append(dropped, b)
				}
			}
		}
		out.Del("Anthropic-Beta")
		if len(kept) > 0 {
			out.Set("Anthropic-Beta", strings.Join(kept, ","))
		}
	}
	if key == "" { // a login: its own credentials, as it sent them
		for _, h := range authHeaders[p] {
			if v := in.Values(h); len(v) > 0 {
				out[h] = append([]string(nil), v...)
			}
		}
		return out, dropped
	}
	switch p {
	case Anthropic:
		out.Set("X-Api-Key", key)
	case OpenAI:
		out.Set("Authorization", "Bearer "+key)
	case Gemini:
		out.Set("X-Goog-Api-Key", key)
	}
	return out, dropped
}
