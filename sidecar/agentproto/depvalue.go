package agentproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// ValidateDependencyValue checks a value the user provides for a dependency
// before it is injected (dependency-request-handling.md, validateDependencyValue):
// never empty; api_key: letters, digits, _ and -, at least 8 long; env_variable:
// at most 10000 bytes; service: an http(s) URL; file: no "..", at most 500
// bytes; permission: true/false/yes/no; package: a valid name in its ecosystem
// (see ParsePackage). The messages are the spec's.
func ValidateDependencyValue(typ, value string) error {
	if strings.TrimSpace(value) == "" {
		return errors.New("Value cannot be empty")
	}
	switch typ {
	case "api_key":
		if !apiKeyRE.MatchString(value) {
			return errors.New("Invalid API key format")
		}
		if len(value) < 8 {
			return errors.New("API key too short")
		}
	case "env_variable":
		if len(value) > 10000 {
			return errors.New("Environment variable too long")
		}
	case "service":
		u, err := url.Parse(value)
		if err != nil || u.Scheme == "" {
			return errors.New("Invalid URL format")
		}
		if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
			return errors.New("Only HTTP(S) protocols allowed")
		}
		if u.Host == "" {
			return errors.New("Invalid URL format")
		}
	case "file":
		if strings.Contains(value, "..") {
			return errors.New("Path traversal detected")
		}
		if len(value) > 500 {
			return errors.New("File path too long")
		}
	case "permission":
		switch strings.ToLower(value) {
		case "true", "false", "yes", "no":
		default:
			return errors.New("Permission must be true/false or yes/no")
		}
	case "package":
		if _, _, err := ParsePackage(value); err != nil {
			return err
		}
	default:
		return fmt.Errorf("Unknown dependency type: %s", typ)
	}
	return nil
}

var apiKeyRE = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// Package ecosystems ParsePackage knows, with the prefixes that name them.
var ecosystemPrefixes = map[string]string{
	"npm": "npm", "pypi": "pypi", "pip": "pypi", "go": "go", "cargo": "cargo", "crates": "cargo",
	"gem": "gem", "rubygems": "gem", "maven": "maven", "nuget": "nuget", "composer": "composer",
	"apt": "apt", "deb": "apt",
}

// Name rules per ecosystem, from each registry's own rules.
var (
	// npm: validate-npm-package-name for new packages (lower case, URL-safe,
	// optional @scope/). The spec's /^(@[a-z0-9-]+\/)?[a-z0-9-]+$/ is a subset
	// that refuses real names such as "socket.io" and "lodash.merge".
	npmRE = regexp.MustCompile(`^(@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*$`)
	// PyPI: PEP 508 names.
	pypiRE = regexp.MustCompile(`^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$`)
	// crates.io: ASCII letter first, then letters, digits, _ and -, at most 64.
	cargoRE = lazyRE(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)
	// RubyGems.
	gemRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	// Maven: groupId:artifactId.
	mavenRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+$`)
	// NuGet package ids, at most 100.
	nugetRE = lazyRE(`^[A-Za-z0-9_]([A-Za-z0-9_.-]{0,98}[A-Za-z0-9_])?$`)
	// Composer (Packagist): vendor/package.
	composerRE = regexp.MustCompile(`^[a-z0-9]([_.-]?[a-z0-9]+)*/[a-z0-9](([_.]|-{1,2})?[a-z0-9]+)*$`)
	// Debian package names (Policy 5.6.1).
	aptRE = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
	// Go module path elements.
	goElemRE = regexp.MustCompile(`^[A-Za-z0-9_~-]([A-Za-z0-9._~-]*[A-Za-z0-9_~-])?$`)
)

// ParsePackage reads a package dependency name and validates it for the
// ecosystem it names. The ecosystem is named by a prefix ("pypi:requests",
// "cargo:serde", "go:golang.org/x/mod", "maven:org.slf4j:slf4j-api"; also
// pip:, crates:, gem:, rubygems:, nuget:, composer:, apt:, deb:, npm:); without
// one, a path whose first element is a domain ("github.com/x/y") is a Go module
// and anything else is npm, as in the spec. Names only: no version suffixes.
func ParsePackage(name string) (ecosystem, pkg string, err error) {
	ecosystem, pkg = "npm", name
	if i := strings.IndexByte(name, ':'); i > 0 {
		eco, ok := ecosystemPrefixes[strings.ToLower(name[:i])]
		if !ok {
			return "", "", fmt.Errorf("unknown package ecosystem %q (known: npm, pypi, go, cargo, gem, maven, nuget, composer, apt)", clip(name[:i]))
		}
		ecosystem, pkg = eco, name[i+1:]
	} else if first, _, ok := strings.Cut(name, "/"); ok && strings.Contains(first, ".") && !strings.HasPrefix(name, "@") {
		ecosystem = "go"
	}
	if pkg == "" {
		return "", "", fmt.Errorf("empty %s package name", ecosystem)
	}
	bad := func(rule string) (string, string, error) {
		return "", "", fmt.Errorf("Invalid package name format: %q is not a valid %s package name (%s)", clip(pkg), ecosystem, rule)
	}
	switch ecosystem {
	case "npm":
		if len(pkg) > 214 || !npmRE.MatchString(pkg) || pkg == "node_modules" || pkg == "favicon.ico" {
			return bad("lower case letters, digits, - . _ ~, optional @scope/, at most 214")
		}
	case "pypi":
		if !pypiRE.MatchString(pkg) {
			return bad("PEP 508: letters, digits, - . _, starting and ending with a letter or digit")
		}
	case "go":
		if !validGoModulePath(pkg) {
			return bad("a module path such as github.com/owner/repo: domain first, slash-separated elements")
		}
	case "cargo":
		if !cargoRE().MatchString(pkg) {
			return bad("a letter, then letters, digits, _ or -, at most 64")
		}
	case "gem":
		if !gemRE.MatchString(pkg) {
			return bad("letters, digits, . _ -")
		}
	case "maven":
		if !mavenRE.MatchString(pkg) {
			return bad("groupId:artifactId")
		}
	case "nuget":
		if !nugetRE().MatchString(pkg) {
			return bad("letters, digits, . _ -, at most 100")
		}
	case "composer":
		if !composerRE.MatchString(pkg) {
			return bad("vendor/package in lower case")
		}
	case "apt":
		if !aptRE.MatchString(pkg) {
			return bad("lower case letters, digits, + . -, at least 2")
		}
	}
	return ecosystem, pkg, nil
}

// validGoModulePath follows golang.org/x/mod/module.CheckPath in outline: the
// first element is a lower-case domain with a dot, every element is non-empty,
// made of letters, digits and - . _ ~, and neither starts nor ends with a dot.
func validGoModulePath(p string) bool {
	if len(p) > 1024 {
		return false
	}
	elems := strings.Split(p, "/")
	first := elems[0]
	if !strings.Contains(first, ".") || strings.HasPrefix(first, "-") || strings.ToLower(first) != first {
		return false
	}
	for _, e := range elems {
		if !goElemRE.MatchString(e) {
			return false
		}
	}
	return true
}

// FormatDependencyProvided renders the stdin message that hands a provided
// dependency to the agent (dependency-request-handling.md, injectDependency):
//
//	[DEPENDENCY_PROVIDED]
//	name: NAME
//	value: VALUE
//	[/DEPENDENCY_PROVIDED]
//
// A value with several lines continues on lines indented by two spaces (the
// protocol's multi-line rule). The result carries a secret: write it to the
// agent's stdin only, never to a log.
func FormatDependencyProvided(name, value string) (string, error) {
	if strings.TrimSpace(name) == "" || strings.ContainsAny(name, "\r\n") {
		return "", fmt.Errorf("dependency name %q must be one non-empty line", clip(name))
	}
	value = strings.ReplaceAll(value, "\r\n", "\n")
	value = strings.ReplaceAll(value, "\n", "\n  ")
	return "[DEPENDENCY_PROVIDED]\nname: " + name + "\nvalue: " + value + "\n[/DEPENDENCY_PROVIDED]\n", nil
}

// ParseDependencyProvided reads a message made by FormatDependencyProvided (for
// agents and test doubles that receive one). Leading blanks of continuation
// lines are not kept.
func ParseDependencyProvided(msg string) (name, value string, err error) {
	lines := strings.Split(strings.ReplaceAll(msg, "\r\n", "\n"), "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "[DEPENDENCY_PROVIDED]" {
			start = i
			break
		}
	}
	if start < 0 {
		return "", "", errors.New("no [DEPENDENCY_PROVIDED] block")
	}
	fp := newFieldParser(keyMap("name", "value"))
	for i := start + 1; i < len(lines); i++ {
		// The closing tag counts only unindented: an indented one is part of a value.
		if strings.TrimRight(lines[i], " \t") == "[/DEPENDENCY_PROVIDED]" {
			if fp.err != nil {
				return "", "", fmt.Errorf("DEPENDENCY_PROVIDED: %s", fp.err.msg)
			}
			fields := fp.fields()
			n, _ := fields["name"].(string)
			v, _ := fields["value"].(string)
			if n == "" {
				return "", "", errors.New("DEPENDENCY_PROVIDED: missing required field 'name'")
			}
			if _, ok := fields["value"]; !ok {
				return "", "", errors.New("DEPENDENCY_PROVIDED: missing required field 'value'")
			}
			return n, v, nil
		}
		fp.feed(lines[i], i+1, true)
	}
	return "", "", errors.New("DEPENDENCY_PROVIDED: missing closing tag [/DEPENDENCY_PROVIDED]")
}

// FormatQuestionAnswer renders the stdin answer to a USER_QUESTION
// (agent-stdout-protocols.md, "응답 형식 (stdin)") as one JSON line:
// {"type":"question_answer","questionId":ID,"answer":ANSWER}.
func FormatQuestionAnswer(questionID, answer string) ([]byte, error) {
	if questionID == "" {
		return nil, errors.New("question answer: empty questionId")
	}
	b, err := json.Marshal(struct {
		Type       string `json:"type"`
		QuestionID string `json:"questionId"`
		Answer     string `json:"answer"`
	}{"question_answer", questionID, answer})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// lazyRE compiles a regexp on first use: the counted repetitions above ({0,63}, {0,98}) unroll
// into large programs whose compilation at init cost every start of the binary ~0.3 ms.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
