package gateway

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The tools a model call offers its model: those the agent's own CLI runs pass; those the
// provider runs itself (a web search, a fetch, code execution, MCP servers) reach the network
// from the provider's side, or bill per use, and are taken out of the request of an agent
// whose network is the gateway (docs/agents.md, Gateway, "What reaches the provider").

// Tools the agent's own CLI runs (the provider only asks for them), by API: every other
// kind runs at the provider, which reaches the network or bills per use.
func anthropicClientTool(t map[string]json.RawMessage) bool {
	var typ string
	_ = json.Unmarshal(t["type"], &typ)
	return typ == "" || typ == "custom" || hasAnyPrefix(typ, []string{"bash_", "text_editor_", "computer_", "memory_", "tool_search_tool_"})
}

func openaiClientTool(t map[string]json.RawMessage) bool {
	var typ string
	_ = json.Unmarshal(t["type"], &typ)
	return slices.Contains([]string{"function", "custom", "tool_search", "namespace", "local_shell", "shell", "apply_patch", "computer_use_preview"}, typ)
}

func geminiClientTool(t map[string]json.RawMessage) bool {
	for k := range t {
		if k != "functionDeclarations" && k != "function_declarations" {
			return false
		}
	}
	return true
}

// keepTools takes the tools the provider would run itself out of the member name (kept
// when networkOpen, and then counted by their kind in r.removed all the same).
func (r *modelRequest) keepTools(name string, client func(map[string]json.RawMessage) bool, networkOpen bool) error {
	raw, ok := r.members[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	list, err := elements(raw)
	if err != nil {
		return fmt.Errorf("%s is not a list of objects", name)
	}
	kept := make([]map[string]json.RawMessage, 0, len(list))
	rewrite := false
	for _, x := range list {
		t, dup, err := members(x)
		if err != nil {
			return fmt.Errorf("%s is not a list of objects", name)
		}
		rewrite = rewrite || dup // one of each member, as the gateway read it
		if !client(t) {
			r.removed = append(r.removed, toolKind(t))
			if !networkOpen {
				rewrite = true
				continue
			}
		}
		kept = append(kept, t)
	}
	if !rewrite {
		return nil
	}
	r.edited = true
	if len(kept) == 0 {
		delete(r.members, name)
		return nil
	}
	r.members[name], err = encodeList(kept)
	return err
}

// toolKind names a tool for a message: its type, or (Gemini) its member names.
func toolKind(t map[string]json.RawMessage) string {
	var typ string
	if json.Unmarshal(t["type"], &typ) == nil && typ != "" {
		return typ
	}
	names := make([]string, 0, len(t))
	for k := range t {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, "+")
}
