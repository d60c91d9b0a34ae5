package validate

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
)

// secretKind is one recognisable credential format. Env is the conventional variable name
// the fix writes instead of the value.
type secretKind struct {
	What   string
	Env    string
	Prefix []string // cheap pre-filter: the regexp runs only when one of these occurs
	RE     *regexp.Regexp
}

// secretKinds are ordered most specific first (an Anthropic key also matches OpenAI's shape).
var secretKinds = []secretKind{
	{"a private key", "PRIVATE_KEY", []string{"PRIVATE KEY"}, regexp.MustCompile(`-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----`)},
	{"an Anthropic API key", "ANTHROPIC_API_KEY", []string{"sk-ant-"}, regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{20,}`)},
	{"an OpenAI API key", "OPENAI_API_KEY", []string{"sk-"}, regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`)},
	{"a GitHub token", "GITHUB_TOKEN", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,}`)},
	{"a GitHub token", "GITHUB_TOKEN", []string{"github_pat_"}, regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,}`)},
	{"an AWS access key id", "AWS_ACCESS_KEY_ID", []string{"AKIA", "ASIA"}, regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"a Google API key", "GOOGLE_API_KEY", []string{"AIza"}, regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`)},
	{"a Slack token", "SLACK_TOKEN", []string{"xox"}, regexp.MustCompile(`\bxox[abposr]-[0-9A-Za-z\-]{10,}`)},
	{"a Stripe secret key", "STRIPE_SECRET_KEY", []string{"_live_", "_test_"}, regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}`)},
	{"a JSON Web Token", "AUTH_TOKEN", []string{"eyJ"}, regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`)},
}

// secretKeyRE matches keys whose values are credentials (password, api_key, client_secret…).
var secretKeyRE = regexp.MustCompile(`(?i)(^|[_\-.])(password|passwd|passphrase|secret|token|api_?key|apikey|access_?key|private_?key|client_secret|credentials?|bearer)$`)

// envRefRE is a value that already names an environment variable instead of holding one.
var envRefRE = regexp.MustCompile(`^(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|env:[A-Za-z_][A-Za-z0-9_]*|[A-Z_][A-Z0-9_]*)$`)

// secrets walks every scalar of the file. The message never contains the value.
func (c *checker) secrets() {
	var walk func(n *yaml.Node, path, key string)
	walk = func(n *yaml.Node, path, key string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, k := range n.Content {
				walk(k, path, key)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				walk(n.Content[i+1], path+"/"+escapeKey(k.Value), k.Value)
			}
		case yaml.SequenceNode:
			for i, x := range n.Content {
				walk(x, fmt.Sprintf("%s/%d", path, i), key)
			}
		case yaml.ScalarNode:
			if n.Tag == "!!str" || n.Tag == "!!binary" {
				c.secretValue(n.Value, path, key)
			}
		}
	}
	walk(c.f.Doc, "", "")
}

func (c *checker) secretValue(v, path, key string) {
	if len(v) < 8 {
		return
	}
	what, env, loc := "", "", []int(nil)
	for _, k := range secretKinds {
		hit := false
		for _, p := range k.Prefix {
			if strings.Contains(v, p) {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		if m := k.RE.FindStringIndex(v); m != nil {
			what, env, loc = k.What, k.Env, m
			break
		}
	}
	inConfig := strings.Contains(path, "/params/") || strings.Contains(path, "/env/") || strings.HasSuffix(path, "/params")
	if what == "" && inConfig && highEntropy(v) {
		what, env, loc = "a credential (a long random string)", "SECRET_TOKEN", []int{0, len(v)}
		if key != "" && !isIndex(key) {
			env = envName(key)
		}
	}
	if what == "" && key != "" && secretKeyRE.MatchString(key) && !envRefRE.MatchString(strings.TrimSpace(v)) && !strings.ContainsAny(v, " \t\n") {
		what, env, loc = fmt.Sprintf("a credential (the value of %q)", key), envName(key), []int{0, len(v)}
	}
	if what == "" {
		return
	}
	c.secretAt[path] = true
	// Replace the whole value by the variable's name, or the secret inside a longer string
	// (a command argument) by a $NAME reference.
	replacement := env
	if loc[0] > 0 || loc[1] < len(v) {
		if what == "a private key" {
			replacement = env
		} else {
			replacement = v[:loc[0]] + "$" + env + v[loc[1]:]
		}
	}
	msg := fmt.Sprintf("this value looks like %s; a flow holds environment-variable names only: put the value in VS Code's secret storage or your environment as %s, list %s in the agent's runtime.env, and remove the value from the file (rotate it if it was ever committed)", what, env, env)
	c.report(path, c.at(path), diag.Error, CodeRawSecret, msg, replaceFix(c.f, "Replace the secret by the name "+env, path, replacement))
}

func isIndex(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// highEntropy: at least 24 characters of a token alphabet with upper case, lower case and
// two digits or more, and at least 4 bits of Shannon entropy per character. Paths, prose,
// CamelCase names and lower-case hex (commit ids) do not qualify.
func highEntropy(s string) bool {
	if len(s) < 24 || len(s) > 4096 {
		return false
	}
	var up, lo bool
	dig := 0
	counts := map[rune]int{}
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			up = true
		case r >= 'a' && r <= 'z':
			lo = true
		case r >= '0' && r <= '9':
			dig++
		case r == '+' || r == '=' || r == '_' || r == '-':
		default:
			return false
		}
		counts[r]++
	}
	if !up || !lo || dig < 2 {
		return false
	}
	h := 0.0
	n := float64(len(s))
	for _, k := range counts {
		p := float64(k) / n
		h -= p * math.Log2(p)
	}
	return h >= 4
}
