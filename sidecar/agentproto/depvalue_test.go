package agentproto

import (
	"strings"
	"testing"
)

// The cases of the spec's own unit tests (dependency-request-handling.md, 테스트),
// then the rest of each validator.
func TestValidateDependencyValue(t *testing.T) {
	cases := []struct {
		typ, value string
		errHas     string // "" means valid
	}{
		{"api_key", "sk-1234567890abcdef", ""},
		{"api_key", "short", "too short"},
		{"service", "https://api.example.com", ""},
		{"service", "ftp://example.com", "Only HTTP(S)"},
		{"file", "../../../etc/passwd", "traversal"},

		{"api_key", "sk-proj.with.dots", "Invalid API key format"},
		{"api_key", "   ", "Value cannot be empty"},
		{"env_variable", "postgres://u:p@db:5432/app?sslmode=require", ""},
		{"env_variable", "-----BEGIN KEY-----\nabc\n-----END KEY-----", ""},
		{"env_variable", strings.Repeat("x", 10001), "too long"},
		{"service", "http://localhost:8080/v1", ""},
		{"service", "api.example.com", "Invalid URL format"},
		{"service", "https://", "Invalid URL format"},
		{"service", "mailto:ops@example.com", "Only HTTP(S)"},
		{"file", "assets/logo.png", ""},
		{"file", "/tmp/upload/logo.png", ""},
		{"file", strings.Repeat("a/", 251), "too long"},
		{"permission", "Yes", ""},
		{"permission", "false", ""},
		{"permission", "maybe", "true/false or yes/no"},
		{"package", "@supabase/supabase-js", ""},
		{"package", "pypi:Django", ""},
		{"package", "@Supabase/JS", "npm"},
		{"package", "", "Value cannot be empty"},
		{"secret", "x", "Unknown dependency type"},
	}
	for _, c := range cases {
		err := ValidateDependencyValue(c.typ, c.value)
		switch {
		case c.errHas == "" && err != nil:
			t.Errorf("%s %q: unexpected error %v", c.typ, clip(c.value), err)
		case c.errHas != "" && (err == nil || !strings.Contains(err.Error(), c.errHas)):
			t.Errorf("%s %q: error %v, want one containing %q", c.typ, clip(c.value), err, c.errHas)
		}
	}
}

func TestParsePackage(t *testing.T) {
	valid := map[string]string{
		"@supabase/supabase-js":      "npm",
		"socket.io":                  "npm",
		"lodash.merge":               "npm",
		"npm:react-dom":              "npm",
		"pypi:requests":              "pypi",
		"pip:scikit-learn":           "pypi",
		"pypi:zope.interface":        "pypi",
		"go:golang.org/x/mod":        "go",
		"github.com/spf13/cobra":     "go",
		"go:gopkg.in/yaml.v3":        "go",
		"cargo:serde_json":           "cargo",
		"crates:tokio":               "cargo",
		"gem:rails":                  "gem",
		"maven:org.slf4j:slf4j-api":  "maven",
		"nuget:Newtonsoft.Json":      "nuget",
		"composer:laravel/framework": "composer",
		"apt:libssl-dev":             "apt",
		"deb:g++":                    "apt",
	}
	for name, eco := range valid {
		got, _, err := ParsePackage(name)
		if err != nil || got != eco {
			t.Errorf("ParsePackage(%q) = %q, %v; want %s", name, got, err, eco)
		}
	}
	invalid := []string{
		"React", ".hidden", "_private", "has space", "node_modules", "@scope/", strings.Repeat("a", 215),
		"pypi:-bad", "pypi:bad-", "pypi:a b",
		"go:GitHub.com/x/y", "go:nodomain/x", "go:github.com//x", "go:github.com/x/.hidden",
		"cargo:1abc", "cargo:" + strings.Repeat("a", 65),
		"maven:no-artifact", "composer:NoVendor", "apt:A", "brew:wget", "pypi:",
	}
	for _, name := range invalid {
		if eco, _, err := ParsePackage(name); err == nil {
			t.Errorf("ParsePackage(%q) accepted it as %s", name, eco)
		}
	}
}

func TestFormatDependencyProvided(t *testing.T) {
	got, err := FormatDependencyProvided("OPENAI_API_KEY", "sk-1234567890abcdef")
	if err != nil {
		t.Fatal(err)
	}
	// The spec's template, byte for byte.
	want := "[DEPENDENCY_PROVIDED]\nname: OPENAI_API_KEY\nvalue: sk-1234567890abcdef\n[/DEPENDENCY_PROVIDED]\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, v := range []string{"", "one line", "-----BEGIN KEY-----\r\nabc\n[/DEPENDENCY_PROVIDED]\n-----END KEY-----"} {
		msg, err := FormatDependencyProvided("PEM", v)
		if err != nil {
			t.Fatal(err)
		}
		n, back, err := ParseDependencyProvided("noise before\n" + msg + "noise after\n")
		if err != nil || n != "PEM" || back != strings.ReplaceAll(v, "\r\n", "\n") {
			t.Errorf("round trip of %q: %q %q %v", v, n, back, err)
		}
	}
	if _, err := FormatDependencyProvided("TWO\nLINES", "v"); err == nil {
		t.Error("a name with a newline was accepted")
	}
	if _, _, err := ParseDependencyProvided("[DEPENDENCY_PROVIDED]\nname: X\n"); err == nil {
		t.Error("an unterminated message was accepted")
	}
}

func TestFormatQuestionAnswer(t *testing.T) {
	got, err := FormatQuestionAnswer("q_abc123", "Subscription (monthly/yearly)")
	if err != nil {
		t.Fatal(err)
	}
	// The spec's 응답 형식 (stdin), on one line.
	want := `{"type":"question_answer","questionId":"q_abc123","answer":"Subscription (monthly/yearly)"}` + "\n"
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := FormatQuestionAnswer("", "x"); err == nil {
		t.Error("an empty questionId was accepted")
	}
}
