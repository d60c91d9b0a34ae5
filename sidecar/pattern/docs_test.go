package pattern

import (
	"os"
	"strings"
	"testing"
)

// docs/patterns.md summarises the library; it must name every pattern with the termination
// the template really has, and link both of its files.
func TestDocsPatternsMDMatchesLibrary(t *testing.T) {
	data, err := os.ReadFile("../../docs/patterns.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, p := range All() {
		head := "### " + p.ID + " — " + p.Name + " (`" + p.PatternID + "`)\n"
		i := strings.Index(doc, head)
		if i < 0 {
			t.Errorf("docs/patterns.md has no heading %q", head)
			continue
		}
		sec := doc[i+len(head):]
		if j := strings.Index(sec, "\n### "); j >= 0 {
			sec = sec[:j]
		}
		base := p.ID + "-" + p.PatternID
		for _, want := range []string{"`" + p.DefaultTermination.String() + "`", "../patterns/" + base + ".md", "../patterns/" + base + ".json"} {
			if !strings.Contains(sec, want) {
				t.Errorf("docs/patterns.md, %s: section lacks %s", p.ID, want)
			}
		}
	}
}
