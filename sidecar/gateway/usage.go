package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// Usage is one response's tokens, split the way prices are.
type Usage struct {
	Input       int64 `json:"inputTokens"`       // input not read from a cache
	CachedInput int64 `json:"cachedInputTokens"` // cache reads
	CacheWrite  int64 `json:"cacheWriteTokens"`  // cache writes
	Output      int64 `json:"outputTokens"`      // output, reasoning included
}

// Tokens is every token of the response, as the run's token limits count them.
func (u Usage) Tokens() int64 { return u.Input + u.CachedInput + u.CacheWrite + u.Output }

// wireUsage holds the usage fields of all three APIs.
type wireUsage struct {
	// Anthropic
	InputTokens   *int64 `json:"input_tokens"`
	CacheRead     *int64 `json:"cache_read_input_tokens"`
	CacheCreation *int64 `json:"cache_creation_input_tokens"`
	OutputTokens  *int64 `json:"output_tokens"`
	// OpenAI (input_tokens counts the cached ones too)
	InputDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	// Gemini (promptTokenCount counts the cached ones too)
	Prompt     *int64 `json:"promptTokenCount"`
	Cached     *int64 `json:"cachedContentTokenCount"`
	Candidates *int64 `json:"candidatesTokenCount"`
	Thoughts   *int64 `json:"thoughtsTokenCount"`
}

func n(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// merge reads w into u for provider p. Anthropic's message_delta repeats only the counts
// that changed, so a field present replaces the one before and a field absent keeps it.
func (u *Usage) merge(p Provider, w wireUsage) {
	switch p {
	case Anthropic:
		if w.InputTokens != nil {
			u.Input = *w.InputTokens
		}
		if w.CacheRead != nil {
			u.CachedInput = *w.CacheRead
		}
		if w.CacheCreation != nil {
			u.CacheWrite = *w.CacheCreation
		}
		if w.OutputTokens != nil {
			u.Output = *w.OutputTokens
		}
	case OpenAI:
		cached := int64(0)
		if w.InputDetails != nil {
			cached = w.InputDetails.CachedTokens
		}
		*u = Usage{Input: max(n(w.InputTokens)-cached, 0), CachedInput: cached, Output: n(w.OutputTokens)}
	case Gemini: // each chunk's usageMetadata is the total so far
		*u = Usage{Input: max(n(w.Prompt)-n(w.Cached), 0), CachedInput: n(w.Cached), Output: n(w.Candidates) + n(w.Thoughts)}
	}
}

// event is the part of a response (or of one streamed event) that carries usage.
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
}

// read takes what one JSON value says about usage and the model.
func (m *meter) read(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' { // Gemini's streamGenerateContent without alt=sse
		var all []json.RawMessage
		if json.Unmarshal(b, &all) == nil {
			for _, x := range all {
				m.read(x)
			}
		}
		return
	}
	var e event
	if json.Unmarshal(b, &e) != nil {
		return
	}
	for _, w := range []struct {
		model string
		u     *wireUsage
	}{{e.Model, e.Usage}, {e.ModelVersion, e.UsageMetadata}} {
		m.found(w.model, w.u)
	}
	if e.Message != nil {
		m.found(e.Message.Model, e.Message.Usage)
	}
	if e.Response != nil {
		m.found(e.Response.Model, e.Response.Usage)
	}
}

func (m *meter) found(model string, u *wireUsage) {
	if model != "" && m.model == "" {
		m.model = model
	}
	if u != nil {
		m.usage.merge(m.p, *u)
		m.seen = true
	}
}

// meter reads a response's body as it passes to the agent, unchanged and unbuffered, and
// calls done once with the usage it found when the body ends or is closed.
type meter struct {
	body   io.ReadCloser
	p      Provider
	sse    bool
	line   []byte // SSE: the line read so far
	whole  []byte // JSON: the body so far (up to maxJSON)
	model  string
	usage  Usage
	seen   bool
	once   sync.Once
	done   func(model string, u Usage, seen bool)
	closed bool
}

const maxJSON = 16 << 20

func (m *meter) Read(b []byte) (int, error) {
	k, err := m.body.Read(b)
	m.scan(b[:k])
	if err != nil {
		m.finish()
	}
	return k, err
}

func (m *meter) Close() error {
	err := m.body.Close()
	m.finish()
	return err
}

func (m *meter) finish() {
	m.once.Do(func() {
		if m.sse {
			m.sseLine(m.line)
		} else {
			m.read(m.whole)
		}
		m.done(m.model, m.usage, m.seen)
	})
}

func (m *meter) scan(b []byte) {
	if !m.sse {
		if len(m.whole)+len(b) <= maxJSON {
			m.whole = append(m.whole, b...)
		}
		return
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(m.line)+len(b) <= maxJSON {
				m.line = append(m.line, b...)
			}
			return
		}
		m.line = append(m.line, b[:i]...)
		m.sseLine(m.line)
		m.line, b = m.line[:0], b[i+1:]
	}
}

func (m *meter) sseLine(l []byte) {
	l = bytes.TrimRight(l, "\r")
	// Only events that carry usage (or the model) are decoded: text deltas, most of a
	// stream, pass by without it.
	if d, ok := bytes.CutPrefix(l, []byte("data:")); ok && (bytes.Contains(d, []byte(`sage`)) || bytes.Contains(d, []byte(`"model`))) {
		m.read(d)
	}
}
