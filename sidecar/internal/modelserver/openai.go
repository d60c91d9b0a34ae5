package modelserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// openaiHandler speaks the Responses API as Codex calls it through a custom model provider
// (wire_api = "responses"): POST /v1/responses, streamed. A reply is response.created, one
// response.output_item.done per output item (a message with output_text, function_call
// items), then response.completed with the usage.
type openaiHandler struct{}

type openaiRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Input  []json.RawMessage `json:"input"`
}

type openaiItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// modelItem reports whether an input item is the model's own output (a turn's part).
func (it openaiItem) modelItem() bool {
	switch it.Type {
	case "function_call", "reasoning", "custom_tool_call", "local_shell_call", "web_search_call":
		return true
	case "message", "":
		return it.Role == "assistant"
	}
	return false
}

func (openaiHandler) read(r *http.Request, body []byte) (*dialogue, any, error) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		return nil, map[string]any{"object": "list", "data": []any{}}, nil
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
	default:
		return nil, nil, fmt.Errorf("%s %s: not a Responses API call", r.Method, r.URL.Path)
	}
	var req openaiRequest
	all, err := parseBody(r.URL.Path, body, &req)
	if err != nil {
		return nil, nil, err
	}
	d := &dialogue{all: all, stream: req.Stream, model: req.Model}
	var opening strings.Builder
	inModel := false // consecutive model items are one turn
	for _, raw := range req.Input {
		var it openaiItem
		_ = json.Unmarshal(raw, &it)
		if it.modelItem() {
			if !inModel {
				d.turns++
			}
			inModel = true
			continue
		}
		inModel = false
		if d.turns == 0 && it.Role == "user" {
			var c any
			_ = json.Unmarshal(it.Content, &c)
			collectStrings(c, &opening)
		}
	}
	d.opening = opening.String()
	return d, nil, nil
}

func (openaiHandler) reply(w http.ResponseWriter, d *dialogue, rep Reply, cwd string, turn int) {
	u := rep.usage()
	id := fmt.Sprintf("resp_scripted_%d", turn)
	var items []map[string]any
	if rep.Text != "" {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_scripted_%d", turn), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}})
	}
	for i, c := range rep.Calls {
		callID := fmt.Sprintf("call_scripted_%d_%d", turn, i)
		if c.Input != "" { // a freeform tool (apply_patch)
			items = append(items, map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_scripted_%d_%d", turn, i), "status": "completed",
				"call_id": callID, "name": c.Tool, "input": strings.ReplaceAll(c.Input, "{{cwd}}", cwd)})
			continue
		}
		args, _ := json.Marshal(c.args(cwd))
		items = append(items, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_scripted_%d_%d", turn, i), "status": "completed",
			"call_id": callID, "name": c.Tool, "arguments": string(args)})
	}
	resp := map[string]any{"id": id, "object": "response", "status": "in_progress", "model": d.model, "output": []any{}}
	usage := map[string]any{
		"input_tokens": u.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": u.CachedInputTokens},
		"output_tokens": u.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": u.InputTokens + u.OutputTokens,
	}
	if !d.stream {
		resp["status"], resp["output"], resp["usage"] = "completed", items, usage
		writeJSON(w, resp)
		return
	}
	e := newSSE(w)
	e.event("response.created", map[string]any{"type": "response.created", "response": resp})
	for i, it := range items {
		added := map[string]any{}
		for k, v := range it {
			added[k] = v
		}
		added["status"] = "in_progress"
		if it["type"] == "message" {
			added["content"] = []any{}
		}
		e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": added})
		if it["type"] == "message" {
			e.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": it["id"], "output_index": i, "content_index": 0, "delta": rep.Text})
		}
		e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	done := map[string]any{"id": id, "object": "response", "status": "completed", "model": d.model, "output": items, "usage": usage}
	e.event("response.completed", map[string]any{"type": "response.completed", "response": done})
}

func (openaiHandler) errorBody(status int, msg string) any {
	typ := "invalid_request_error"
	switch {
	case status == 429:
		typ = "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	return map[string]any{"error": map[string]any{"type": typ, "code": typ, "message": msg}}
}
