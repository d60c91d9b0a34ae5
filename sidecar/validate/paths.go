package validate

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// ruleRefRE splits a rule-chain reference "SCOPE:path" (spec §10: CODEX_GLOBAL:~/.codex/AGENTS.md,
// PROJECT:./AGENTS.md).
var ruleRefRE = regexp.MustCompile(`^([A-Z][A-Z0-9_]*):(.*)$`)

// wholeWorkspace is the agent file that asks for the whole workspace (sandbox.WholeWorkspace).
const wholeWorkspace = "."

// paths checks every path a flow hands to the sandbox or the rule loader (spec §6.3, §8)
// with the shared rules of sidecar/safepath.
func (c *checker) paths() {
	rules := safepath.Rules{}
	for _, a := range c.f.Agents {
		for i, file := range a.Files {
			if file == wholeWorkspace {
				continue // the whole workspace, with the folder rules applied file by file
			}
			p := fmt.Sprintf("%s/files/%d", a.Path, i)
			c.checkPath(p, file, "agent file", c.ws.Rules)
		}
		for i, r := range a.Rules {
			if looksLikePath(r) {
				c.ruleRef(fmt.Sprintf("%s/rules/%d", a.Path, i), r, rules)
			}
		}
	}
	for i, r := range c.f.CommonRules.RuleChainRefs {
		c.ruleRef(fmt.Sprintf("/commonRules/ruleChainRefs/%d", i), r, rules)
	}
}

// looksLikePath tells a rule file reference from a rule written out as text.
func looksLikePath(s string) bool {
	if strings.ContainsAny(s, " \t\n") {
		return false
	}
	return ruleRefRE.MatchString(s) || strings.Contains(s, "/") || strings.HasSuffix(strings.ToLower(s), ".md")
}

func (c *checker) ruleRef(path, ref string, rules safepath.Rules) {
	scope, p := "", ref
	if m := ruleRefRE.FindStringSubmatch(ref); m != nil {
		scope, p = m[1], m[2]
	}
	if strings.HasPrefix(p, "~/") || p == "~" {
		if !strings.HasSuffix(scope, "_GLOBAL") {
			c.report(path, c.at(path), diag.Error, CodeUnsafePath,
				"~/ (the home folder) is allowed only in global rule-chain references such as CODEX_GLOBAL:~/.codex/AGENTS.md; use a path relative to the workspace root, e.g. PROJECT:./AGENTS.md", nil)
			return
		}
		// A global reference points into the home folder; it still may not climb out of it.
		if _, err := safepath.Clean(strings.TrimPrefix(p, "~/"), safepath.Lexical); err != nil && !c.secretAt[path] {
			c.report(path, c.at(path), diag.Error, CodeUnsafePath,
				fmt.Sprintf("global rule reference %q is refused: %s; name a file under your home folder, e.g. CODEX_GLOBAL:~/.codex/AGENTS.md", p, reason(err)), nil)
		}
		return
	}
	c.checkPath(path, p, "rule reference", rules)
}

func (c *checker) checkPath(path, p, what string, rules safepath.Rules) {
	if c.secretAt[path] {
		return
	}
	if _, err := safepath.Clean(p, rules); err != nil {
		msg := fmt.Sprintf("%s %q is refused: %s; agents may only be given files inside the workspace, outside .agentcanvas/, .git/, node_modules/ and dist/", what, p, reason(err))
		switch {
		case errors.Is(err, safepath.ErrNotAllowed):
			msg = fmt.Sprintf("%s %q is refused: %s; a sandbox copies files only from the allowed folders", what, p, reason(err))
		case errors.Is(err, safepath.ErrBlocked):
			msg = fmt.Sprintf("%s %q is refused: %s; a sandbox never copies a blocked folder", what, p, reason(err))
		}
		var fix *diag.Fix
		// An absolute path inside the workspace has a safe relative spelling.
		if c.ws.Root != "" && filepath.IsAbs(p) {
			if rel, err := filepath.Rel(c.ws.Root, p); err == nil {
				if clean, err := safepath.Clean(filepath.ToSlash(rel), rules); err == nil {
					msg = fmt.Sprintf("%s %q is absolute; write it relative to the workspace root: %s", what, p, clean)
					fix = c.replaceFix("Use "+clean, path, clean)
				}
			}
		}
		c.report(path, c.at(path), diag.Error, CodeUnsafePath, msg, fix)
	}
}

func reason(err error) string {
	var se *safepath.Error
	if errors.As(err, &se) {
		return se.Reason
	}
	return err.Error()
}
