package validate

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// A small draft-07 checker, enough for schema/flow.schema.json (type, enum, properties,
// required, additionalProperties, items, $ref, oneOf, anyOf, minimum, maximum,
// exclusiveMinimum, minItems, minLength, pattern), so the tests can run the schema on real
// flows the way an editor does, without a dependency.
type jsonSchema map[string]any

func (s jsonSchema) check(root jsonSchema, v any, at string) []string {
	if ref, ok := s["$ref"].(string); ok {
		def := root["definitions"].(map[string]any)[strings.TrimPrefix(ref, "#/definitions/")]
		return jsonSchema(def.(map[string]any)).check(root, v, at)
	}
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	if t, ok := s["type"]; ok && !typeMatches(t, v) {
		bad("type %v, got %T", t, v)
		return errs
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || e == v
		}
		if !found {
			bad("%v not in enum", v)
		}
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts, ok := s[key].([]any)
		if !ok {
			continue
		}
		n := 0
		for _, a := range alts {
			if len(jsonSchema(a.(map[string]any)).check(root, v, at)) == 0 {
				n++
			}
		}
		if n == 0 || key == "oneOf" && n > 1 {
			bad("%s: %d alternatives match", key, n)
		}
	}
	if num, ok := v.(float64); ok {
		if m, ok := s["minimum"].(float64); ok && num < m {
			bad("%v < minimum %v", num, m)
		}
		if m, ok := s["maximum"].(float64); ok && num > m {
			bad("%v > maximum %v", num, m)
		}
		if m, ok := s["exclusiveMinimum"].(float64); ok && num <= m {
			bad("%v <= exclusiveMinimum %v", num, m)
		}
	}
	if str, ok := v.(string); ok {
		if m, ok := s["minLength"].(float64); ok && float64(len(str)) < m {
			bad("shorter than %v", m)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
			bad("%q does not match %s", str, p)
		}
	}
	if list, ok := v.([]any); ok {
		if m, ok := s["minItems"].(float64); ok && float64(len(list)) < m {
			bad("fewer than %v items", m)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range list {
				errs = append(errs, jsonSchema(items).check(root, x, fmt.Sprintf("%s/%d", at, i))...)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for _, r := range asList(s["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				bad("missing %s", r)
			}
		}
		for k, x := range obj {
			if p, ok := props[k]; ok {
				errs = append(errs, jsonSchema(p.(map[string]any)).check(root, x, at+"/"+k)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					bad("unknown property %s", k)
				}
			case map[string]any:
				errs = append(errs, jsonSchema(ap).check(root, x, at+"/"+k)...)
			}
		}
	}
	return errs
}

func asList(v any) []any { l, _ := v.([]any); return l }

func typeMatches(t, v any) bool {
	if list, ok := t.([]any); ok {
		for _, x := range list {
			if typeMatches(x, v) {
				return true
			}
		}
		return false
	}
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	}
	return false
}

// asJSON turns a YAML file into the JSON value an editor's schema check sees.
func asJSON(t *testing.T, src []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(src, &v); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(jsonable(v))
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
	}
	return v
}

func loadJSONSchema(t *testing.T) jsonSchema {
	t.Helper()
	data, err := os.ReadFile(repo + "/schema/flow.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s jsonSchema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSchemaAcceptsValidFlows: every example flow, and the flow format document's example,
// passes the JSON Schema as an editor would check it.
func TestSchemaAcceptsValidFlows(t *testing.T) {
	s := loadJSONSchema(t)
	files, _ := filepath.Glob(repo + "/flows/*.yaml")
	for _, file := range append(files, repo+"/sidecar/flow/testdata/team-alpha.yaml") {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range s.check(s, asJSON(t, src), "") {
			t.Errorf("%s: %s", filepath.Base(file), e)
		}
	}
}

// TestSchemaAgreesOnBrokenFlows: a flow the validator reports a schema error for (a value
// outside its set, a missing required field, a bad number) is rejected by the JSON Schema too.
func TestSchemaAgreesOnBrokenFlows(t *testing.T) {
	s := loadJSONSchema(t)
	for name, src := range map[string]string{
		"topology":        mw("{topology: star, termination: {type: max_rounds, rounds: 2}}"),
		"termination":     mw("{termination: {type: forever}}"),
		"rounds":          mw("{termination: {type: max_rounds, rounds: 0}}"),
		"threshold":       mw("{termination: {type: consensus_threshold, threshold: 1.5}}"),
		"operator":        mw(`{termination: {type: quality_gate, metric: score, op: "==", value: 1}}`),
		"verification":    mw("{verification: [vibes], termination: {type: max_rounds, rounds: 2}}"),
		"no agent id":     head + "agents: [{role: worker}]\ninteractions: []\n",
		"system type":     head + "agents: []\nsystemNodes: [{id: s, type: oracle}]\ninteractions: []\n",
		"backend":         head + "agents: [{id: a, runtime: {backendId: gpt}}]\ninteractions: []\n",
		"env name":        head + "agents: [{id: a, runtime: {env: [has-dash]}}]\ninteractions: []\n",
		"unknown field":   head + "agents: [{id: a, colour: red}]\ninteractions: []\n",
		"pattern id":      strings.Replace(mw(term2), "manager_worker", "P21", 1),
		"no edges":        head + "agents: []\ninteractions: [{id: i, patternId: P01, edges: []}]\n",
		"timeout_ms":      mw("{termination: {type: judge_decision}, params: {timeout_ms: 0}}"),
		"round_cap":       mw("{termination: {type: judge_decision}, params: {round_cap: 0}}"),
		"max_cost_usd":    mw("{termination: {type: max_cost_usd, usd: 0}}"),
		"max_tokens":      mw("{termination: {type: max_tokens, tokens: 0}}"),
		"budget":          "policy: {budget: {usd: -1}}\n" + mw(term2),
		"budget field":    "policy: {budget: {dollars: 5}}\n" + mw(term2),
		"dep timeout":     "policy: {dependencyTimeoutMs: 0}\n" + mw(term2),
		"no version":      "agents: []\ninteractions: []\n",
		"retention":       mw("{termination: {type: judge_decision}, params: {retention: {keep_last_n: 0}}}"),
		"source kind":     mw("{termination: {type: judge_decision}, sources: [{kind: blog, ref: x}]}"),
		"layout position": mw(term2) + "layout: {nodes: {lead: {x: left, y: 0}}}\n",
	} {
		if errs := s.check(s, asJSON(t, []byte(src)), ""); len(errs) == 0 {
			t.Errorf("%s: the schema accepts\n%s", name, src)
		}
	}
}
