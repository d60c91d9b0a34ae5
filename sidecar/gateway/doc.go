// Package gateway is the sidecar's model gateway: a reverse proxy on 127.0.0.1, one per run,
// between the agent CLIs and their model providers (the Anthropic Messages API for Claude
// Code, the OpenAI Responses API for Codex, the Gemini API for Gemini CLI).
//
// Each agent gets a token that means nothing anywhere else, in place of its API key, and a
// base URL that carries the token. The gateway swaps the token for the real key, which only
// the sidecar holds, forwards the call unbuffered (streams pass through as they come), reads
// the usage of every response (streamed usage events included), prices it (pricing.go) and
// charges it to the agent, its interaction and the run (ledger.go). Before each call it
// checks their spend limits: a call over a limit is refused with an error in the provider's
// own shape, which the CLI shows its model and the person.
//
// An agent signed in with an account instead of a key (no key registered for the provider)
// keeps its own credentials: they pass through unchanged, and the call is metered the same.
package gateway
