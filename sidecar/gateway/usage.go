package gateway

import (
	"encoding/json"
	"fmt"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/tally"
)

// Usage is one response's tokens, split the way prices are.
type Usage struct {
	Input       int64 `json:"inputTokens"`       // input not read from a cache
	CachedInput int64 `json:"cachedInputTokens"` // cache reads
	CacheWrite  int64 `json:"cacheWriteTokens"`  // cache writes
	// CacheWrite1h are those of CacheWrite written for an hour (Anthropic), priced higher.
	CacheWrite1h int64 `json:"cacheWrite1hTokens,omitempty"`
	Output       int64 `json:"outputTokens"` // output, reasoning included
}

// Tokens is every token of the response, as the run's token limits count them.
func (u Usage) Tokens() int64 { return tally.Sum(u.Input, u.CachedInput, u.CacheWrite, u.Output) }

// plus adds o to u, each count saturating.
func (u Usage) plus(o Usage) Usage {
	return Usage{Input: tally.Add(u.Input, o.Input), CachedInput: tally.Add(u.CachedInput, o.CachedInput),
		CacheWrite: tally.Add(u.CacheWrite, o.CacheWrite), CacheWrite1h: tally.Add(u.CacheWrite1h, o.CacheWrite1h), Output: tally.Add(u.Output, o.Output)}
}

// check says why a provider's report cannot be counted ("" when it can).
func (u Usage) check() string {
	if u.CacheWrite1h > u.CacheWrite {
		return fmt.Sprintf("%d one-hour cache writes of %d cache writes", u.CacheWrite1h, u.CacheWrite)
	}
	return tally.Report([]int64{u.Input, u.CachedInput, u.CacheWrite, u.CacheWrite1h, u.Output}, nil)
}

// wireUsage holds the usage fields of all three APIs.
type wireUsage struct {
	// Anthropic
	InputTokens   *int64 `json:"input_tokens"`
	CacheRead     *int64 `json:"cache_read_input_tokens"`
	CacheCreation *int64 `json:"cache_creation_input_tokens"`
	CacheBy       *struct {
		OneHour *int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"` // how long the writes are kept
	OutputTokens *int64 `json:"output_tokens"`
	// OpenAI Responses (input_tokens counts the cached ones too)
	InputDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	// OpenAI chat completions (prompt_tokens counts the cached ones too)
	PromptTokens     *int64 `json:"prompt_tokens"`
	CompletionTokens *int64 `json:"completion_tokens"`
	PromptDetails    *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	// Gemini (promptTokenCount counts the cached ones too)
	Prompt     *int64 `json:"promptTokenCount"`
	Cached     *int64 `json:"cachedContentTokenCount"`
	Candidates *int64 `json:"candidatesTokenCount"`
	Thoughts   *int64 `json:"thoughtsTokenCount"`
	ToolPrompt *int64 `json:"toolUsePromptTokenCount"`
}

func n(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// merge reads w into u for provider p. Anthropic's message_delta repeats only the counts
// that changed, so a field present replaces the one before and a field absent keeps it.
// Counts are taken as the provider wrote them (a negative one included): check refuses
// them before anything is charged.
func (u *Usage) merge(p Provider, w wireUsage) {
	switch p {
	case Anthropic:
		for _, f := range []struct {
			from *int64
			to   *int64
		}{{w.InputTokens, &u.Input}, {w.CacheRead, &u.CachedInput}, {w.CacheCreation, &u.CacheWrite}, {w.OutputTokens, &u.Output}} {
			if f.from != nil {
				*f.to = *f.from
			}
		}
		if w.CacheBy != nil && w.CacheBy.OneHour != nil {
			u.CacheWrite1h = *w.CacheBy.OneHour
		}
	case OpenAI:
		if w.PromptTokens != nil || w.CompletionTokens != nil { // chat completions
			cached := int64(0)
			if w.PromptDetails != nil {
				cached = w.PromptDetails.CachedTokens
			}
			*u = Usage{Input: n(w.PromptTokens) - cached, CachedInput: cached, Output: n(w.CompletionTokens)}
			return
		}
		cached := int64(0)
		if w.InputDetails != nil {
			cached = w.InputDetails.CachedTokens
		}
		*u = Usage{Input: n(w.InputTokens) - cached, CachedInput: cached, Output: n(w.OutputTokens)}
	case Gemini: // each chunk's usageMetadata is the total so far
		*u = Usage{Input: n(w.Prompt) - n(w.Cached) + n(w.ToolPrompt), CachedInput: n(w.Cached), Output: n(w.Candidates) + n(w.Thoughts)}
	}
}

// event is the part of a response (or of one streamed event) that carries usage, the model,
// whether the response is complete, and the text it streams.
type event struct {
	Type    string     `json:"type"`
	Model   string     `json:"model"`
	Usage   *wireUsage `json:"usage"`
	Message *struct {
		Model string     `json:"model"`
		Usage *wireUsage `json:"usage"`
	} `json:"message"` // Anthropic message_start
	Response *struct {
		Model string     `json:"model"`
		Usage *wireUsage `json:"usage"`
	} `json:"response"` // OpenAI response.completed
	UsageMetadata *wireUsage `json:"usageMetadata"` // Gemini
	ModelVersion  string     `json:"modelVersion"`
	// Text: Anthropic's content_block_delta (an object), OpenAI's *.delta events (a string).
	Delta   json.RawMessage `json:"delta"`
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			Reasoning string `json:"reasoning_content"`
			ToolCalls []struct {
				Function struct {
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"` // OpenAI chat completions
	Candidates []struct {
		Content struct {
			Parts []json.RawMessage `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
		Index        int    `json:"index"`
	} `json:"candidates"` // Gemini
}

// final says whether e carries a response's last word on its usage; for Gemini, finished
// counts the answers that have ended so far (e's included), out of answers asked for.
func (e *event) final(p Provider, finished map[int]bool, answers int64) bool {
	switch p {
	case Anthropic: // message_delta (streamed), or a whole message
		return (e.Type == "message_delta" || e.Type == "message") && e.Usage != nil
	case OpenAI: // response.completed (or .incomplete, .failed), a chat stream's last chunk, a whole response
		return (e.Response != nil && e.Response.Usage != nil) || e.Usage != nil
	}
	for _, c := range e.Candidates {
		if c.FinishReason != "" {
			finished[c.Index] = true
		}
	}
	if e.UsageMetadata == nil {
		return false
	}
	// Every answer has ended (a stream of two ends the first before the second is made,
	// its count then the first's alone), or a count with no answer (an error, a blocked prompt).
	return int64(len(finished)) >= answers || len(e.Candidates) == 0
}

// text is the bytes of model text e streams: at least one byte a token.
func (e *event) text() int64 {
	var t int64
	if len(e.Delta) > 0 {
		if e.Delta[0] == '"' {
			var s string
			_ = json.Unmarshal(e.Delta, &s)
			t += int64(len(s))
		} else {
			var d struct {
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				Thinking    string `json:"thinking"`
			}
			_ = json.Unmarshal(e.Delta, &d)
			t += int64(len(d.Text) + len(d.PartialJSON) + len(d.Thinking))
		}
	}
	for _, c := range e.Choices {
		t += int64(len(c.Delta.Content) + len(c.Delta.Reasoning))
		for _, tc := range c.Delta.ToolCalls {
			t += int64(len(tc.Function.Arguments))
		}
	}
	for _, c := range e.Candidates {
		for _, p := range c.Content.Parts {
			t += int64(len(p))
		}
	}
	return t
}
