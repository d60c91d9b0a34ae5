// Package gateway is the sidecar's model gateway: a reverse proxy on 127.0.0.1, one per run,
// between the agent CLIs and their model providers (the Anthropic Messages API for Claude
// Code, the OpenAI Responses API for Codex, the Gemini API for Gemini CLI).
//
// Each agent gets a token that means nothing anywhere else, in place of its API key, and a
// base URL that carries the token. The gateway swaps the token for the real key, which only
// the sidecar holds. A request passes only as one of the model endpoints the CLIs call
// (endpoints.go), checked on its raw target before anything is matched, with the headers and
// tools that keep it within the request (headers.go, tools.go); its body is read in one pass
// (jsonscan.go, request.go) and its worst case estimated (estimate.go) and reserved against
// the agent's, its interaction's and the run's limits (reserve.go, ledger.go), its output cap
// lowered or set to what they leave room for. The call is then forwarded unbuffered (streams
// pass through as they come), its usage read as it passes (meter.go, usage.go), priced
// (pricing.go), and the reservation settled to what it cost, or to the worst case when its
// usage never came (call.go). A provider that cannot be reached is answered so the CLI does
// not retry a fault that will not mend (upstream.go).
//
// An agent signed in with an account instead of a key (no key registered for the provider)
// keeps its own credentials: they pass through unchanged, and the call is metered the same.
package gateway
