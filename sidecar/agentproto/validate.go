package agentproto

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// knownKeys maps each block's field names, lower-cased, to the spec's spelling,
// so "Type:" and "type:" both land under "type". Unknown keys are kept as written.
var knownKeys = map[Kind]map[string]string{
	KindDependencyRequest: keyMap("type", "name", "description", "required", "default"),
	KindUserQuestion:      keyMap("category", "question", "options", "default", "required"),
	KindError:             keyMap("type", "message", "details", "recovery"),
	KindHandoff:           keyMap("Context", "Goal", "DoD", "SandboxWorkDir", "ProposalJson", "ChangedFiles", "Tests", "Next"),
}

func keyMap(names ...string) map[string]string {
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[strings.ToLower(n)] = n
	}
	return m
}

// The enums of agent-stdout-protocols.md.
var (
	DependencyTypes    = []string{"api_key", "env_variable", "service", "file", "permission", "package"}
	QuestionCategories = []string{"business", "clarification", "choice", "confirmation"}
	ErrorTypes         = []string{"recoverable", "fatal"}
	RecoveryStrategies = []string{"pause_and_retry", "checkpoint_and_fail", "notify_user"}
)

// checker accumulates the problems of one block while typing its fields.
type checker struct {
	fields map[string]any
	probs  []problem
}

func (k *checker) add(field, format string, args ...any) {
	k.probs = append(k.probs, problem{field, fmt.Sprintf(format, args...)})
}

// text returns a scalar field; present is false when it is absent or empty.
func (k *checker) text(name string, required bool) (string, bool) {
	v, ok := k.fields[name]
	if !ok {
		if required {
			k.add(name, "missing required field '%s'", name)
		}
		return "", false
	}
	s, isText := v.(string)
	if !isText {
		k.add(name, "field '%s' must be a single value, not a list", name)
		return "", false
	}
	if s == "" && required {
		k.add(name, "missing required field '%s' (empty value)", name)
		return "", false
	}
	return s, s != ""
}

// list returns a list field; present is false when it is absent.
func (k *checker) list(name string, required bool) ([]string, bool) {
	v, ok := k.fields[name]
	if !ok {
		if required {
			k.add(name, "missing required field '%s'", name)
		}
		return nil, false
	}
	if s, isText := v.(string); isText && s == "" {
		k.fields[name] = []string{} // "key:" with no items is an empty list
		return nil, true
	}
	l, isList := v.([]string)
	if !isList {
		k.add(name, "field '%s' must be a list of '- item' lines", name)
		return nil, false
	}
	return l, true
}

func (k *checker) enum(name string, allowed []string) string {
	s, ok := k.text(name, true)
	if !ok {
		return ""
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	k.add(name, "field '%s': %q is not one of %s", name, s, strings.Join(allowed, ", "))
	return ""
}

func (k *checker) boolean(name string) {
	s, ok := k.text(name, true)
	if !ok {
		return
	}
	switch strings.ToLower(s) {
	case "true":
		k.fields[name] = true
	case "false":
		k.fields[name] = false
	default:
		k.add(name, "field '%s' must be true or false, got %q", name, clip(s))
	}
}

// validate types the fields of a complete block into b and returns its problems.
func validate(c *pending, b *Block) []problem {
	k := &checker{fields: c.fp.fields()}
	if c.fp.err != nil {
		k.probs = append(k.probs, *c.fp.err)
	}
	b.Fields, b.Keys = k.fields, c.fp.keys
	switch c.of {
	case KindDependencyRequest:
		typ := k.enum("type", DependencyTypes)
		if name, ok := k.text("name", true); ok && typ != "" {
			if err := validateDependencyName(typ, name); err != nil {
				k.add("name", "field 'name': %v", err)
			}
		}
		k.text("description", true)
		k.boolean("required")
		k.text("default", false)
	case KindUserQuestion:
		cat := k.enum("category", QuestionCategories)
		k.text("question", true)
		opts, ok := k.list("options", false)
		if cat == "choice" && !ok && k.fields["options"] == nil {
			k.add("options", "field 'options' is required when category is choice")
		} else if ok && len(opts) == 0 {
			k.add("options", "field 'options' has no items")
		}
		k.text("default", false)
		k.boolean("required")
	case KindError:
		k.enum("type", ErrorTypes)
		k.text("message", true)
		k.text("details", false)
		k.enum("recovery", RecoveryStrategies)
	case KindPhaseComplete:
		n, ok := phaseNumber(c.phaseN)
		if ok {
			k.fields["N"] = n
		} else {
			k.fields["N"] = c.phaseN
			k.add("N", "phase number N must be a positive integer, got %q", clip(c.phaseN))
		}
		b.Keys = append([]string{"N"}, b.Keys...)
	case KindHandoff:
		validateHandoff(k)
	}
	return k.probs
}

// validateHandoff enforces agentcanvas-protocol.md §3.2: SandboxWorkDir and
// ProposalJson present, at least one ChangedFiles entry, and a DoD that can be
// checked. Context, Goal and DoD may be text or a list; Tests and Next are lists.
func validateHandoff(k *checker) {
	k.text("SandboxWorkDir", true)
	k.text("ProposalJson", true)
	if files, ok := k.list("ChangedFiles", true); ok {
		if len(files) == 0 {
			k.add("ChangedFiles", "field 'ChangedFiles' must list at least one file")
		}
		for _, f := range files {
			if _, err := safepath.Clean(f, safepath.Rules{}); err != nil {
				k.add("ChangedFiles", "field 'ChangedFiles': %v", err)
			}
		}
	}
	for _, name := range []string{"Context", "Goal"} {
		if _, isList := k.fields[name].([]string); !isList {
			k.text(name, false)
		}
	}
	switch dod := k.fields["DoD"].(type) {
	case nil:
		k.add("DoD", "missing required field 'DoD'")
	case string:
		if dod == "" {
			k.add("DoD", "missing required field 'DoD' (empty value)")
		} else if vagueDoD(dod) {
			k.add("DoD", "field 'DoD' is not verifiable (%q): state a check, such as \"tests pass, build succeeds, 0 lint errors\"", clip(dod))
		}
	case []string:
		if len(dod) == 0 {
			k.add("DoD", "missing required field 'DoD' (no items)")
		}
		for _, d := range dod {
			if vagueDoD(d) {
				k.add("DoD", "field 'DoD' item is not verifiable (%q): state a check, such as \"tests pass\"", clip(d))
			}
		}
	}
	k.list("Tests", false)
	k.list("Next", false)
}

// vaguePhrases are DoDs that say nothing checkable (§3.2: "잘 작동함" is the
// spec's own example of what not to write).
var vaguePhrases = map[string]bool{}

func init() {
	for _, s := range []string{
		"works", "it works", "works well", "works fine", "works correctly", "working",
		"everything works", "all good", "looks good", "lgtm", "good", "fine", "ok", "okay",
		"done", "complete", "completed", "finished", "should work", "works as expected",
		"잘 작동함", "잘 작동", "작동함", "잘 동작함", "동작함", "잘 됨", "완료", "완료됨",
		"정상 작동", "정상 동작", "문제 없음",
	} {
		vaguePhrases[s] = true
	}
}

func vagueDoD(s string) bool {
	s = strings.ToLower(strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r)
	}))
	return vaguePhrases[strings.Join(strings.Fields(s), " ")]
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validateDependencyName checks a request's name for what the runtime will do
// with it: api_key and env_variable names become environment variable names,
// a file name must not climb out of the workspace, a package name must be valid
// in its ecosystem.
func validateDependencyName(typ, name string) error {
	switch typ {
	case "api_key", "env_variable":
		if !envNameRE.MatchString(name) {
			return fmt.Errorf("%q is not an environment variable name (letters, digits, _; not starting with a digit)", clip(name))
		}
	case "file":
		return ValidateDependencyValue("file", name)
	case "package":
		_, _, err := ParsePackage(name)
		return err
	}
	return nil
}
