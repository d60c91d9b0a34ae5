package modelserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// anthropicHandler speaks the Messages API as Claude Code calls it: POST /v1/messages
// (?beta=true) with "stream": true, answered with the Messages streaming events; and
// POST /v1/messages/count_tokens.
type anthropicHandler struct{}

type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (anthropicHandler) read(r *http.Request, body []byte) (*dialogue, any, error) {
	if r.Method != http.MethodPost {
		return nil, nil, fmt.Errorf("%s %s: only POST is served", r.Method, r.URL.Path)
	}
	switch r.URL.Path {
	case "/v1/messages/count_tokens":
		return nil, map[string]any{"input_tokens": len(body) / 4}, nil
	case "/v1/messages":
	default:
		return nil, nil, fmt.Errorf("POST %s: not a Messages API path", r.URL.Path)
	}
	var req anthropicRequest
	all, err := parseBody(r.URL.Path, body, &req)
	if err != nil {
		return nil, nil, err
	}
	d := &dialogue{all: all, stream: req.Stream, model: req.Model}
	var opening strings.Builder
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			d.turns++
			continue
		}
		if d.turns == 0 {
			var c any
			_ = json.Unmarshal(m.Content, &c)
			collectStrings(c, &opening)
		}
	}
	d.opening = opening.String()
	return d, nil, nil
}

func (anthropicHandler) reply(w http.ResponseWriter, d *dialogue, rep Reply, cwd string, turn int) {
	u := rep.usage()
	usage := map[string]any{
		"input_tokens":                u.InputTokens - u.CachedInputTokens,
		"cache_read_input_tokens":     u.CachedInputTokens,
		"cache_creation_input_tokens": 0,
		"output_tokens":               u.OutputTokens,
	}
	stop := "end_turn"
	if len(rep.Calls) > 0 {
		stop = "tool_use"
	}
	id := fmt.Sprintf("msg_scripted_%d", turn)
	var blocks []map[string]any
	if rep.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": rep.Text})
	}
	for i, c := range rep.Calls {
		_ = c.Input // Claude Code's tools all take JSON arguments
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_scripted_%d_%d", turn, i), "name": c.Tool, "input": c.args(cwd)})
	}
	if !d.stream {
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": d.model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	e := newSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": d.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": usage["input_tokens"], "cache_read_input_tokens": u.CachedInputTokens, "cache_creation_input_tokens": 0, "output_tokens": 1},
	}})
	for i, b := range blocks {
		start := map[string]any{"type": b["type"]}
		var delta map[string]any
		if b["type"] == "text" {
			start["text"] = ""
			delta = map[string]any{"type": "text_delta", "text": b["text"]}
		} else {
			start["id"], start["name"], start["input"] = b["id"], b["name"], map[string]any{}
			js, _ := json.Marshal(b["input"])
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(js)}
		}
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": u.OutputTokens}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}

func (anthropicHandler) errorBody(status int, msg string) any {
	typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
		404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}[status]
	if typ == "" {
		typ = "api_error"
	}
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}
