package validate

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The docs, the example flows, the pattern documents and the schema stand alone: they never
// send a reader to a file outside the repository (the design notes and specification the
// project was written from), and every relative link in a doc leads to a file that exists,
// and to a heading that exists when it names one.
func TestDocsPointInsideTheRepository(t *testing.T) {
	outside := regexp.MustCompile(`spec §|DESIGN\.md|agentcanvas-protocol\.md|agent-stdout-protocols\.md|dependency-request-handling\.md|recipes/`)
	link := regexp.MustCompile(`\]\(([^)#\s]*)(#[^)\s]*)?\)`)
	var files []string
	for _, g := range []string{"../../docs/*.md", "../../README.md", "../../flows/*.yaml", "../../flows/invalid/*", "../../patterns/*", "../../schema/*.json"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 40 {
		t.Fatalf("only %d files found", len(files))
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if outside.MatchString(line) {
				t.Errorf("%s:%d points outside the repository: %s", f, i+1, strings.TrimSpace(line))
			}
		}
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target, anchor := m[1], strings.TrimPrefix(m[2], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			p := f
			if target != "" {
				p = filepath.Join(filepath.Dir(f), target)
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s links %s, which does not exist", f, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(p, ".md") && !hasAnchor(t, p, anchor) {
				t.Errorf("%s links %s#%s, a heading that does not exist", f, target, anchor)
			}
		}
	}
}

// hasAnchor: a heading of the Markdown file p makes the GitHub anchor a.
func hasAnchor(t *testing.T, p, a string) bool {
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	drop := regexp.MustCompile("[^a-z0-9 _-]")
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		if strings.ReplaceAll(drop.ReplaceAllString(h, ""), " ", "-") == a {
			return true
		}
	}
	return false
}
