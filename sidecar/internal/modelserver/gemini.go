package modelserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// geminiHandler speaks the Gemini API as the Gemini CLI calls it with an API key:
// POST /v1beta/models/MODEL:streamGenerateContent?alt=sse, answered with "data: " lines each
// holding a GenerateContentResponse; :generateContent (not streamed) and :countTokens.
type geminiHandler struct{}

type geminiRequest struct {
	Contents []struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	} `json:"contents"`
}

func (geminiHandler) read(r *http.Request, body []byte) (*dialogue, any, error) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1beta/models/") {
		return nil, nil, fmt.Errorf("%s %s: not a Gemini API call", r.Method, r.URL.Path)
	}
	model, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
	if !ok {
		return nil, nil, fmt.Errorf("POST %s: no :method in the path", r.URL.Path)
	}
	d := &dialogue{model: model}
	switch method {
	case "countTokens":
		return nil, map[string]any{"totalTokens": len(body) / 4}, nil
	case "streamGenerateContent":
		d.stream = true
	case "generateContent":
	default:
		return nil, nil, fmt.Errorf("POST %s: method %q is not served", r.URL.Path, method)
	}
	var req geminiRequest
	all, err := parseBody(r.URL.Path, body, &req)
	if err != nil {
		return nil, nil, err
	}
	d.all = all
	var opening strings.Builder
	for _, c := range req.Contents {
		if c.Role == "model" {
			d.turns++
			continue
		}
		if d.turns == 0 {
			for _, p := range c.Parts {
				var t struct {
					Text string `json:"text"`
				}
				if json.Unmarshal(p, &t) == nil && t.Text != "" {
					opening.WriteString(t.Text)
					opening.WriteByte('\n')
				}
			}
		}
	}
	d.opening = opening.String()
	return d, nil, nil
}

func (geminiHandler) reply(w http.ResponseWriter, d *dialogue, rep Reply, cwd string, turn int) {
	u := rep.usage()
	var parts []any
	if rep.Text != "" {
		parts = append(parts, map[string]any{"text": rep.Text})
	}
	for _, c := range rep.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Tool, "args": c.args(cwd)}})
	}
	usage := map[string]any{
		"promptTokenCount": u.InputTokens, "cachedContentTokenCount": u.CachedInputTokens,
		"candidatesTokenCount": u.OutputTokens, "totalTokenCount": u.InputTokens + u.OutputTokens,
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": usage, "modelVersion": d.model, "responseId": fmt.Sprintf("scripted_%d", turn),
	}
	if !d.stream {
		writeJSON(w, resp)
		return
	}
	newSSE(w).event("", resp)
}

func (geminiHandler) errorBody(status int, msg string) any {
	st := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
		429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}[status]
	if st == "" {
		st = "INTERNAL"
	}
	return map[string]any{"error": map[string]any{"code": status, "status": st, "message": msg}}
}
