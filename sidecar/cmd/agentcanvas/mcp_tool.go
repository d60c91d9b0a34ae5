package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The one tool `agentcanvas mcp` serves: its name and input schema, and the check of a
// call's arguments against that same schema, so a call the schema forbids runs nothing.

// toolInputSchema is what tools/list advertises and tools/call enforces.
var toolInputSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"task": map[string]any{"type": "string", "minLength": 1, "description": "what the flow should do"},
	},
	"required":             []string{"task"},
	"additionalProperties": false,
}

var toolNameRE = regexp.MustCompile(`[^a-z0-9_-]+`)

// toolName is run_ and the flow's name: (its title), else its file name, in the characters
// MCP clients accept, at most 64 of them: "Design debate" → run_design_debate.
func toolName(title, file string) string {
	base := strings.Trim(toolNameRE.ReplaceAllString(strings.ToLower(firstNonEmptyStr(title, file)), "_"), "_-")
	if base == "" {
		base = "flow"
	}
	name := "run_" + base
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// checkArguments checks a tools/call's arguments against schema (an object schema whose
// properties are strings, numbers, booleans or objects); "" when they conform.
func checkArguments(schema map[string]any, args map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	if args == nil {
		args = map[string]any{}
	}
	var problems []string
	for _, r := range schema["required"].([]string) {
		if _, ok := args[r]; !ok {
			problems = append(problems, fmt.Sprintf("%s is required", r))
		}
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, known := props[k].(map[string]any)
		if !known {
			if schema["additionalProperties"] == false {
				problems = append(problems, fmt.Sprintf("%s is not an argument of this tool", k))
			}
			continue
		}
		if want, got := p["type"].(string), jsonType(args[k]); want != "" && want != got {
			problems = append(problems, fmt.Sprintf("%s must be a %s, not a %s", k, want, got))
			continue
		}
		if n, ok := p["minLength"].(int); ok {
			if s, _ := args[k].(string); len(strings.TrimSpace(s)) < n {
				problems = append(problems, fmt.Sprintf("%s must not be empty", k))
			}
		}
	}
	return strings.Join(problems, "; ")
}

// jsonType is the JSON Schema type of a decoded JSON value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
