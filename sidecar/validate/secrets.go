package validate

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
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
	Random bool // the match must also look random (digits and both letter cases): "sk-learn-…" is not a key
}

// secretKinds are ordered most specific first (an Anthropic key also matches OpenAI's shape).
var secretKinds = []secretKind{
	{"a private key", "PRIVATE_KEY", []string{"PRIVATE KEY"}, regexp.MustCompile(`-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----`), false},
	{"an Anthropic API key", "ANTHROPIC_API_KEY", []string{"sk-ant-"}, regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{20,}`), true},
	{"an OpenAI API key", "OPENAI_API_KEY", []string{"sk-"}, regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`), true},
	{"a GitHub token", "GITHUB_TOKEN", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,}`), false},
	{"a GitHub token", "GITHUB_TOKEN", []string{"github_pat_"}, regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,}`), false},
	{"an AWS access key id", "AWS_ACCESS_KEY_ID", []string{"AKIA", "ASIA"}, regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), false},
	{"a Google API key", "GOOGLE_API_KEY", []string{"AIza"}, regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`), false},
	{"a Slack token", "SLACK_TOKEN", []string{"xox"}, regexp.MustCompile(`\bxox[abposr]-[0-9A-Za-z\-]{10,}`), false},
	{"a Stripe secret key", "STRIPE_SECRET_KEY", []string{"_live_", "_test_"}, regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}`), false},
	{"a JSON Web Token", "AUTH_TOKEN", []string{"eyJ"}, regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`), false},
}

// secretKeyRE matches keys whose values are credentials (password, api_key, client_secret…).
var secretKeyRE = regexp.MustCompile(`(?i)(^|[_\-.])(password|passwd|passphrase|secret|token|api_?key|apikey|access_?key|private_?key|client_secret|credentials?|bearer)$`)

// markerKeyRE are keys named like a credential that hold a marker word instead: a model's
// stop or done token (CAMEL's done_token: <CAMEL_TASK_DONE>).
var markerKeyRE = regexp.MustCompile(`(?i)(^|[_\-.])(done|stop|end|eos|bos|pad|sep|start|finish|max)_?tokens?$`)

// envRefRE is a value that already names an environment variable instead of holding one.
var envRefRE = regexp.MustCompile(`^(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|env:[A-Za-z_][A-Za-z0-9_]*|[A-Z_][A-Z0-9_]*)$`)

// secrets walks every scalar of the file (and notes whether it uses aliases). The path of a
// value is built only when it is reported. The message never contains the value.
func (c *checker) secrets() {
	var segs []string
	var walk func(n *yaml.Node, key string, inConfig bool)
	walk = func(n *yaml.Node, key string, inConfig bool) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, k := range n.Content {
				walk(k, key, inConfig)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				segs = append(segs, escapeKey(k))
				walk(n.Content[i+1], k, inConfig || k == "params" || k == "env")
				segs = segs[:len(segs)-1]
			}
		case yaml.SequenceNode:
			for i, x := range n.Content {
				segs = append(segs, strconv.Itoa(i))
				walk(x, key, inConfig)
				segs = segs[:len(segs)-1]
			}
		case yaml.AliasNode:
			c.aliases = true
		case yaml.ScalarNode:
			if (n.Tag == "!!str" || n.Tag == "!!binary") && len(n.Value) >= 8 {
				c.secretValue(n.Value, segs, key, inConfig)
			}
		}
	}
	walk(c.f.Doc, "", false)
}

func (c *checker) secretValue(v string, segs []string, key string, inConfig bool) {
	what, env, loc := "", "", []int(nil)
	kinds := secretKinds
	if !mayHoldKey(v) {
		kinds = nil
	}
	for _, k := range kinds {
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
		if m := k.RE.FindStringIndex(v); m != nil && (!k.Random || looksRandom(v[m[0]:m[1]])) {
			what, env, loc = k.What, k.Env, m
			break
		}
	}
	if what == "" && inConfig && highEntropy(v) {
		what, env, loc = "a credential (a long random string)", "SECRET_TOKEN", []int{0, len(v)}
		if key != "" && !isIndex(key) {
			env = envName(key)
		}
	}
	if what == "" && key != "" && c.secretKey(key) && !strings.ContainsAny(v, " \t\n<>") && !envRefRE.MatchString(strings.TrimSpace(v)) {
		what, env, loc = fmt.Sprintf("a credential (the value of %q)", key), envName(key), []int{0, len(v)}
	}
	if what == "" {
		return
	}
	path := "/" + strings.Join(segs, "/")
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
	var fix *diag.Fix
	if replacement == env && c.listedEnv(segs, env) {
		// The name is listed already: replacing the value by it would list it twice.
		fix = c.deleteFix("Remove the secret ("+env+" is listed already)", path)
	} else {
		fix = c.replaceFix("Replace the secret by the name "+env, path, replacement)
	}
	c.report(path, c.at(path), diag.Error, CodeRawSecret, msg, fix)
}

// listedEnv reports whether segs is an entry of a runtime.env list that has another entry
// name.
func (c *checker) listedEnv(segs []string, name string) bool {
	n := len(segs)
	if n < 3 || segs[n-3] != "runtime" || segs[n-2] != "env" && segs[n-2] != "secrets" || !isIndex(segs[n-1]) {
		return false
	}
	list := nodeAt(c.f, "/"+strings.Join(segs[:n-1], "/"))
	if list == nil || list.Kind != yaml.SequenceNode {
		return false
	}
	for i, x := range list.Content {
		if x = deref(x); x != nil && x.Kind == yaml.ScalarNode && x.Value == name && strconv.Itoa(i) != segs[n-1] {
			return true
		}
	}
	return false
}

// mayHoldKey is a one-pass pre-filter: does v contain the start of any provider's format?
func mayHoldKey(v string) bool {
	for i := 0; i+3 <= len(v); i++ {
		switch v[i] {
		case 's', 'r':
			if v[i+1] == 'k' && (v[i+2] == '-' || v[i+2] == '_') {
				return true
			}
		case 'g':
			if v[i+1] == 'h' || v[i+1] == 'i' { // ghp_ … and github_pat_
				return true
			}
		case 'A':
			if v[i+1] == 'K' || v[i+1] == 'S' || v[i+1] == 'I' {
				return true
			}
		case 'x':
			if v[i+1] == 'o' && v[i+2] == 'x' {
				return true
			}
		case 'e':
			if v[i+1] == 'y' && v[i+2] == 'J' {
				return true
			}
		case 'P':
			if v[i+1] == 'R' && v[i+2] == 'I' {
				return true
			}
		}
	}
	return false
}

// looksRandom: digits and both letter cases, as generated keys have.
func looksRandom(s string) bool {
	var up, lo, dig bool
	for _, r := range s {
		up = up || r >= 'A' && r <= 'Z'
		lo = lo || r >= 'a' && r <= 'z'
		dig = dig || r >= '0' && r <= '9'
	}
	return up && lo && dig
}

// secretKey reports whether a key names a credential, remembering the answer per key.
func (c *checker) secretKey(key string) bool {
	if c.keys == nil {
		c.keys = map[string]bool{}
	}
	is, ok := c.keys[key]
	if !ok {
		is = secretKeyRE.MatchString(key) && !markerKeyRE.MatchString(key)
		c.keys[key] = is
	}
	return is
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
	var counts [128]int
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
		if k == 0 {
			continue
		}
		p := float64(k) / n
		h -= p * math.Log2(p)
	}
	return h >= 4
}
