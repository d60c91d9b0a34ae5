// Package modelserver serves scripted language models on 127.0.0.1 in the wire formats the
// real agent CLIs speak, so that tests can run the published Claude Code, Codex and Gemini
// CLI binaries end to end without an account or the network: the Anthropic Messages API with
// SSE (Claude Code, ANTHROPIC_BASE_URL), the OpenAI Responses API with SSE (Codex, a
// model_providers entry) and the Gemini API's streamGenerateContent with SSE (Gemini CLI,
// GOOGLE_GEMINI_BASE_URL). The CLI does everything else for real: tools, permissions,
// sessions, its stream-json output.
//
// A Script says, per conversation, which tool calls the model makes in which order and what
// it finally says. The server is stateless: it finds the conversation by the text that opened
// it and the reply by the number of model turns already in the request's history, so resumed
// sessions and parallel agents need nothing special. Facts about the wire formats are in
// /work/shared/recipes/real-agent-clis.md and docs/agents.md.
package modelserver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Script is what the model does: the first Conversation whose Match is in a request's
// opening text answers it.
type Script []Conversation

// Conversation is one agent's dialogue with the model.
type Conversation struct {
	// Match is looked for in the conversation's opening: the user text before the first model
	// turn (the prompt, and whatever context the CLI adds to it). Empty matches every request.
	Match string
	// Replies[i] answers the request that already holds i model turns: a reply with tool
	// calls is followed by the CLI's next request carrying their results.
	Replies []Reply
}

// Reply is one model response.
type Reply struct {
	// Text the model says (with Calls: before them; without: its final answer).
	Text string
	// Calls are tool calls, by the CLI's own tool names and arguments (Claude Code: Write,
	// Edit, Bash…; Codex: exec_command…; Gemini CLI: write_file, replace…). A string argument
	// may hold {{cwd}}: the working folder the CLI told the model about.
	Calls []Call
	// Usage is reported for this response (default: DefaultUsage).
	Usage *Usage
	// Error, when set, answers the request with an API error instead: every time, or only
	// the first FailTimes times (a CLI that retries then gets the rest of the reply).
	Error     *APIError
	FailTimes int
	// Headers are added to the response (rate-limit headers, say).
	Headers map[string]string
}

// APIError is an HTTP error in the API's own error format.
type APIError struct {
	Status  int
	Message string
	// RetryAfter is sent as the Retry-After header when set (seconds).
	RetryAfter string
}

// Call is one tool call.
type Call struct {
	Tool string
	Args map[string]any
	// Input is a freeform (custom) tool's input instead of Args: Codex's apply_patch takes
	// the patch text ("*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch").
	Input string
}

// Usage is a response's token counts, as each API reports them.
type Usage struct {
	InputTokens       int64
	CachedInputTokens int64
	OutputTokens      int64
}

// DefaultUsage is reported for a reply that names none.
var DefaultUsage = Usage{InputTokens: 1000, CachedInputTokens: 200, OutputTokens: 50}

func (r Reply) usage() Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	return DefaultUsage
}

// args returns the call's arguments with {{cwd}} replaced in every string.
func (c Call) args(cwd string) map[string]any {
	out, _ := replaceCwd(c.Args, cwd).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

func replaceCwd(v any, cwd string) any {
	switch t := v.(type) {
	case string:
		return strings.ReplaceAll(t, "{{cwd}}", cwd)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = replaceCwd(x, cwd)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = replaceCwd(x, cwd)
		}
		return out
	}
	return v
}

// dialogue is what the server reads from one request, whatever the API.
type dialogue struct {
	opening string // the user text before the first model turn
	turns   int    // model turns already in the history
	all     string // every string in the request, for the working folder
	stream  bool
	model   string
}

// cwdPatterns find the working folder each CLI tells its model about.
var cwdPatterns = []*regexp.Regexp{
	regexp.MustCompile(`Primary working directory: (\S+)`),              // Claude Code
	regexp.MustCompile(`<cwd>([^<]+)</cwd>`),                            // Codex
	regexp.MustCompile(`Workspace Directories:\*\*\s*\n\s*-\s*(\S+)`),   // Gemini CLI
	regexp.MustCompile(`I'm currently working in the directory: (\S+)`), // older Gemini CLI
}

// cwd is the working folder the CLI told the model about last: a resumed session in another
// folder (a fork's sandbox) keeps the first in its history, and the CLI says the new one after
// it ("Primary working directory: NEW (was OLD)").
func (d *dialogue) cwd() string {
	for _, re := range cwdPatterns {
		if ms := re.FindAllStringSubmatch(d.all, -1); ms != nil {
			return ms[len(ms)-1][1]
		}
	}
	return ""
}

// pick finds the reply for a request and the index of its conversation; why says why there
// is none (no conversation matches, or its replies ran out).
func (s Script) pick(d *dialogue) (Reply, int, string) {
	for i, c := range s {
		if c.Match != "" && !strings.Contains(d.opening, c.Match) {
			continue
		}
		if d.turns >= len(c.Replies) {
			return Reply{}, i, "conversation " + quoteMatch(c.Match) + " has " + itoa(len(c.Replies)) + " replies, and the request already holds " + itoa(d.turns) + " model turns"
		}
		return c.Replies[d.turns], i, ""
	}
	return Reply{}, -1, "no conversation matches the request's opening: " + truncate(d.opening, 300)
}

func quoteMatch(m string) string {
	if m == "" {
		return "(any)"
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// strings collects every string of a decoded JSON value, in document order.
func collectStrings(v any, b *strings.Builder) {
	switch t := v.(type) {
	case string:
		b.WriteString(t)
		b.WriteByte('\n')
	case map[string]any:
		for _, k := range sortedKeys(t) {
			collectStrings(t[k], b)
		}
	case []any:
		for _, x := range t {
			collectStrings(x, b)
		}
	}
}

func allStrings(v any) string {
	var b strings.Builder
	collectStrings(v, &b)
	return b.String()
}

// parseBody decodes a request body into req and returns every string in it (where the
// working folder is looked for).
func parseBody(path string, body []byte, req any) (string, error) {
	if err := json.Unmarshal(body, req); err != nil {
		return "", fmt.Errorf("POST %s: body: %v", path, err)
	}
	var all any
	_ = json.Unmarshal(body, &all)
	return allStrings(all), nil
}
