package validate

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

var (
	docSectionRE = regexp.MustCompile("(?m)^## `([a-z-]+)`$")
	docBlockRE   = regexp.MustCompile("(?s)```yaml (broken|fixed)\n(.*?)```")
)

// TestValidationDoc: docs/validation.md documents every code, and each section's broken
// example gives that code while its fixed example gives none.
func TestValidationDoc(t *testing.T) {
	data, err := os.ReadFile(repo + "/docs/validation.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	ws := Workspace{Root: workspaceDir(t, `{"servers": ["github", "jira"]}`, map[string]string{
		"review": "---\nname: review\ndescription: Review a diff.\n---\n",
	})}
	locs := docSectionRE.FindAllStringSubmatchIndex(doc, -1)
	seen := map[string]bool{}
	for i, loc := range locs {
		code := doc[loc[2]:loc[3]]
		seen[code] = true
		end := len(doc)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		blocks := docBlockRE.FindAllStringSubmatch(doc[loc[1]:end], -1)
		if len(blocks) != 2 || blocks[0][1] != "broken" || blocks[1][1] != "fixed" {
			t.Errorf("section %s: want one broken and one fixed yaml example", code)
			continue
		}
		for _, b := range blocks {
			ds := Flow(flow.Parse(code+"-"+b[1]+".yaml", []byte(b[2])), ws)
			has := false
			for _, d := range ds {
				has = has || d.Code == code
				if b[1] == "fixed" {
					t.Errorf("section %s, fixed example: %s", code, d)
				}
			}
			if b[1] == "broken" && !has {
				t.Errorf("section %s: the broken example gives no %s diagnostic: %v", code, code, ds)
			}
		}
	}
	for _, code := range Codes {
		if !seen[code] {
			t.Errorf("docs/validation.md has no section for %s", code)
		}
		if !strings.Contains(doc, "| `"+code+"` |") {
			t.Errorf("docs/validation.md's table has no row for %s", code)
		}
	}
}

// TestFlowFormatDoc: docs/flow-format.md names every field of the model.
func TestFlowFormatDoc(t *testing.T) {
	data, err := os.ReadFile(repo + "/docs/flow-format.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	s := loadSchema(t)
	var walk func(name string, n *schemaNode)
	walk = func(name string, n *schemaNode) {
		for key := range n.Properties {
			if !strings.Contains(doc, "`"+key+"`") {
				t.Errorf("docs/flow-format.md does not describe %s.%s", name, key)
			}
		}
	}
	walk("flow", s)
	// The complete example at the top is a clean flow.
	first := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(doc)
	if first == nil {
		t.Fatal("no yaml example")
	}
	for _, d := range Flow(flow.Parse("flow-format.yaml", []byte(first[1])), Workspace{}) {
		t.Errorf("the first example in docs/flow-format.md: %s", d)
	}
	for name, def := range s.Definitions {
		walk(name, def)
	}
	for _, m := range QualityGateMetrics {
		if !strings.Contains(doc, "`"+m+"`") {
			t.Errorf("docs/flow-format.md does not list the quality-gate metric %s", m)
		}
	}
	for name, values := range Enums {
		for _, v := range values {
			if !strings.Contains(doc, "`"+v+"`") {
				t.Errorf("docs/flow-format.md does not list %s value %s", name, v)
			}
		}
	}
}
