package server

import (
	"reflect"
	"strings"
	"testing"
)

func TestYAMLContext(t *testing.T) {
	cases := []struct {
		text    string // the text up to the cursor (|)
		chain   string
		key     string
		inValue bool
	}{
		{"ver|", "", "", false},
		{"agents:\n  - id: a1\n    |", "agents/*", "", false},
		{"agents:\n- id: a1\n  |", "agents/*", "", false},
		{"agents:\n  - id: a1\n    runtime:\n      backendId: |", "agents/*/runtime", "backendId", true},
		{"agents:\n  - id: a1\n    runtime: {kind: cli}\n  - |", "agents/*", "", false},
		{"interactions:\n  - id: i1\n    edges:\n      - source: a1\n        target: |", "interactions/*/edges/*", "target", true},
		{"interactions:\n  - id: i1\n    edges:\n      - source: a1\n        data:\n          termination:\n            any:\n              - type: |", "interactions/*/edges/*/data/termination/any/*", "type", true},
		{"agents:\n  - id: a1\n\n    # a comment\n    |", "agents/*", "", false},
		{"policy:\n  |", "policy", "", false},
	}
	for _, c := range cases {
		text := strings.TrimSuffix(c.text, "|")
		chain, key, inValue, _ := yamlContext(strings.Split(text, "\n"))
		if strings.Join(chain, "/") != c.chain || key != c.key || inValue != c.inValue {
			t.Errorf("%q: got chain %q key %q inValue %v; want %q %q %v", c.text, strings.Join(chain, "/"), key, inValue, c.chain, c.key, c.inValue)
		}
	}
	_, _, _, present := yamlContext(strings.Split("agents:\n  - id: a1\n    role: x\n    ", "\n"))
	if !reflect.DeepEqual(present, map[string]bool{"id": true, "role": true}) {
		t.Errorf("present = %v", present)
	}
}
