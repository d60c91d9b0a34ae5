package validate

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// The JSON Schema (schema/flow.schema.json) is written by hand for editors; these tests keep
// it in step with the Go model, the loader and the validator's enums, so it cannot drift.

type schemaNode struct {
	Ref                  string                 `json:"$ref"`
	Type                 any                    `json:"type"`
	Enum                 []string               `json:"enum"`
	Properties           map[string]*schemaNode `json:"properties"`
	Required             []string               `json:"required"`
	Items                *schemaNode            `json:"items"`
	AdditionalProperties any                    `json:"additionalProperties"`
	OneOf                []*schemaNode          `json:"oneOf"`
	AnyOf                []*schemaNode          `json:"anyOf"`
	Definitions          map[string]*schemaNode `json:"definitions"`
}

func loadSchema(t *testing.T) *schemaNode {
	t.Helper()
	data, err := os.ReadFile(repo + "/schema/flow.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s schemaNode
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("schema/flow.schema.json: %v", err)
	}
	return &s
}

func (s *schemaNode) resolve(root *schemaNode) *schemaNode {
	if s != nil && s.Ref != "" {
		return root.Definitions[strings.TrimPrefix(s.Ref, "#/definitions/")]
	}
	return s
}

// modelKeys are the YAML keys of a model type: its JSON field names, less the bookkeeping
// fields that are not in the file (path, file, spans), with the renames the loader makes.
func modelKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		tag := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
		switch tag {
		case "-", "path", "":
			continue
		}
		if t == reflect.TypeOf(flow.Flow{}) {
			switch tag {
			case "file", "spans", "name":
				continue // the file's name and the loader's bookkeeping
			case "title":
				tag = "name" // the top-level "name:" field
			}
		}
		keys = append(keys, tag)
	}
	sort.Strings(keys)
	return keys
}

func propKeys(s *schemaNode) []string {
	var keys []string
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestSchemaMatchesModel(t *testing.T) {
	s := loadSchema(t)
	types := map[string]reflect.Type{
		"":              reflect.TypeOf(flow.Flow{}),
		"commonRules":   reflect.TypeOf(flow.CommonRules{}),
		"policy":        reflect.TypeOf(flow.Policy{}),
		"budget":        reflect.TypeOf(flow.Budget{}),
		"agent":         reflect.TypeOf(flow.Agent{}),
		"runtime":       reflect.TypeOf(flow.Runtime{}),
		"sessionLoop":   reflect.TypeOf(flow.SessionLoop{}),
		"systemNode":    reflect.TypeOf(flow.SystemNode{}),
		"interaction":   reflect.TypeOf(flow.Interaction{}),
		"edge":          reflect.TypeOf(flow.Edge{}),
		"edgeData":      reflect.TypeOf(flow.EdgeData{}),
		"termination":   reflect.TypeOf(flow.Termination{}),
		"observability": reflect.TypeOf(flow.Observability{}),
		"source":        reflect.TypeOf(flow.Source{}),
		"layout":        reflect.TypeOf(flow.Layout{}),
		"point":         reflect.TypeOf(flow.Point{}),
	}
	for name, typ := range types {
		def := s
		if name != "" {
			def = s.Definitions[name]
		}
		if def == nil {
			t.Errorf("schema has no definition %q for %s", name, typ)
			continue
		}
		if got, want := propKeys(def), modelKeys(typ); !slices.Equal(got, want) {
			t.Errorf("schema %q properties = %v, model %s fields = %v", name, got, typ, want)
		}
		if def.AdditionalProperties != false {
			t.Errorf("schema %q allows unknown properties; the loader warns about them", name)
		}
	}
	// Every definition is a model type or one of the documented helpers.
	for name := range s.Definitions {
		if _, ok := types[name]; !ok && name != "params" {
			t.Errorf("schema definition %q matches no model type", name)
		}
	}
}

func TestSchemaEnums(t *testing.T) {
	s := loadSchema(t)
	d := s.Definitions
	at := map[string]*schemaNode{
		"intent":                     d["edgeData"].Properties["intent"],
		"topology":                   d["edgeData"].Properties["topology"],
		"messageForm":                d["edgeData"].Properties["messageForm"],
		"sync":                       d["edgeData"].Properties["sync"],
		"termination.type":           d["termination"].Properties["type"],
		"termination.op":             d["termination"].Properties["op"],
		"verification":               d["edgeData"].Properties["verification"].OneOf[0],
		"runtime.kind":               d["runtime"].Properties["kind"],
		"runtime.backendId":          d["runtime"].Properties["backendId"],
		"runtime.cwdMode":            d["runtime"].Properties["cwdMode"],
		"runtime.permissionMode":     d["runtime"].Properties["permissionMode"],
		"runtime.codexSandbox":       d["runtime"].Properties["codexSandbox"],
		"runtime.geminiApprovalMode": d["runtime"].Properties["geminiApprovalMode"],
		"systemNode.type":            d["systemNode"].Properties["type"],
		"source.kind":                d["source"].Properties["kind"],
	}
	for name, values := range Enums {
		node := at[name]
		if node == nil {
			t.Errorf("no schema location for enum %s", name)
			continue
		}
		if !slices.Equal(node.Enum, values) {
			t.Errorf("schema enum %s = %v, validator = %v", name, node.Enum, values)
		}
	}
	if v := d["edgeData"].Properties["verification"].OneOf[1].Items; !slices.Equal(v.Enum, Verifications) {
		t.Errorf("verification list enum = %v", v.Enum)
	}
	if got := d["interaction"].Properties["patternId"].AnyOf[0].Enum; !slices.Equal(got, PatternIDs()) {
		t.Errorf("schema pattern ids = %v, validator = %v", got, PatternIDs())
	}
	if !slices.Equal(flow.SystemNodeTypes, SystemNodeTypes) {
		t.Errorf("flow.SystemNodeTypes = %v", flow.SystemNodeTypes)
	}
}

// sample builds a value that uses every property the schema describes, of the schema's
// type, so the loader can confirm it knows each key and agrees on each type.
func sample(s, root *schemaNode, depth int) any {
	s = s.resolve(root)
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if len(s.OneOf) > 0 {
		return sample(s.OneOf[len(s.OneOf)-1], root, depth)
	}
	if len(s.AnyOf) > 0 {
		return sample(s.AnyOf[0], root, depth)
	}
	typ, _ := s.Type.(string)
	if list, ok := s.Type.([]any); ok {
		typ = list[0].(string)
	}
	switch typ {
	case "object":
		m := map[string]any{}
		for k, p := range s.Properties {
			if depth > 7 && (k == "any" || k == "all") {
				continue // one level of nesting is enough
			}
			m[k] = sample(p, root, depth+1)
		}
		if ap, ok := s.AdditionalProperties.(map[string]any); ok && len(s.Properties) == 0 {
			if ref, _ := ap["$ref"].(string); ref != "" {
				m["n1"] = sample(&schemaNode{Ref: ref}, root, depth+1)
			} else {
				m["n1"] = map[string]any{}
			}
		}
		return m
	case "array":
		return []any{sample(s.Items, root, depth+1)}
	case "string":
		return "x"
	case "integer":
		return 1
	case "number":
		return 0.5
	case "boolean":
		return true
	}
	return nil
}

func TestSchemaMatchesLoader(t *testing.T) {
	s := loadSchema(t)
	doc := sample(s, s, 0)
	src, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	f := flow.Parse("sample.yaml", src)
	for _, p := range f.Problems {
		t.Errorf("the loader disagrees with the schema: %s", p)
	}
	if len(f.Agents) != 1 || f.Agents[0].Runtime == nil || f.Agents[0].Runtime.SessionLoop == nil ||
		len(f.Interactions) != 1 || len(f.Interactions[0].Edges) != 1 || f.Interactions[0].Edges[0].Data.Termination == nil ||
		len(f.Interactions[0].Edges[0].Data.Termination.Any) != 1 {
		t.Errorf("sample not fully loaded:\n%s", src)
	}
}
