package proposal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"gopkg.in/yaml.v3"
)

// Control files decide what runs, or what an agent may do: a flow, editor tasks that run when
// a folder opens, CI workflows, an .envrc, an agent's instructions and tools, git hooks, the
// scripts a package manager runs on install. A proposal that changes one is held: never
// applied automatically, and applied only when a person confirms each such file by name
// (ApplyOptions.Confirm). docs/proposals.md ("Control files") lists them.

// HoldControl and HoldName are a Hold's kinds.
const (
	HoldControl = "control" // the file changes how things run
	HoldName    = "name"    // the name looks like another one
)

// Hold is one file of a proposal that a person must confirm by name before it is applied.
type Hold struct {
	Path string `json:"path"`
	Kind string `json:"kind"` // HoldControl or HoldName
	// Reason says why, in words ("CI configuration: runs on a push or a pull request").
	Reason string `json:"reason"`
	// Shown is the name as it must be shown: look-alike letters, format characters and
	// combining marks written as \u escapes, inside quotes when it has spaces at either end.
	Shown string `json:"shown"`
}

// controlGroup is a set of gitignore-style patterns with the reason they are held.
type controlGroup struct {
	reason   string
	patterns []string
}

// builtinControl is the list a workspace adds to (WorkspaceControlFile); nothing takes from it.
// Patterns follow .gitignore: without a slash a name at any depth, a trailing slash a folder
// and everything in it, a slash inside anchors at the workspace root. Compared ignoring case.
var builtinControl = []controlGroup{
	{"editor configuration: tasks can run when the folder is opened", []string{
		".vscode/", "*.code-workspace", ".idea/", ".devcontainer/", ".devcontainer.json", ".fleet/", ".zed/"}},
	{"CI configuration: runs on a push or a pull request", []string{
		".github/", ".gitlab-ci.yml", ".gitlab/", ".circleci/", ".travis.yml", "azure-pipelines.yml",
		".azure-pipelines/", "Jenkinsfile", ".buildkite/", ".drone.yml", "bitbucket-pipelines.yml",
		".woodpecker.yml", ".woodpecker/", "appveyor.yml", ".appveyor.yml", "cloudbuild.yaml",
		"cloudbuild.yml", ".gitpod.yml", ".forgejo/", ".gitea/"}},
	{"sets the environment of a shell or tool that enters the folder", []string{
		".envrc", ".env", "mise.toml", ".mise.toml", ".tool-versions"}},
	{"what an agent is told or may do: its instructions, tools and permissions", []string{
		".mcp.json", ".claude/", ".codex/", ".gemini/", ".cursor/", ".continue/", "CLAUDE.md",
		"CLAUDE.local.md", "AGENTS.md", "GEMINI.md", ".cursorrules", ".windsurfrules", ".aider.conf.yml"}},
	{"AgentCanvas's own state and flows", []string{".agentcanvas/"}},
	{"git hooks, filters or configuration: run by git itself", []string{
		".git/", ".gitattributes", ".gitmodules", ".githooks/", ".husky/", "lefthook.yml",
		"lefthook.yaml", ".lefthook.yml", ".pre-commit-config.yaml", ".lfsconfig"}},
	{"package manager configuration: runs code on install or build", []string{
		".npmrc", ".yarnrc", ".yarnrc.yml", ".yarn/", ".pnpmfile.cjs", "pnpm-workspace.yaml",
		"bunfig.toml", ".bunfig.toml", "deno.json", "deno.jsonc", "composer.json", "Gemfile",
		".bundle/", "pyproject.toml", "setup.py", "setup.cfg", "Cargo.toml", "build.rs", ".cargo/"}},
	{"a build script that a person or CI runs", []string{
		"Makefile", "GNUmakefile", "*.mk", "justfile", ".justfile", "Taskfile.yml", "Taskfile.yaml",
		"Rakefile", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts",
		"gradlew", "gradle/wrapper/", "mvnw", ".mvn/", "tox.ini", "noxfile.py"}},
}

const (
	reasonFlow        = "a flow: decides which agents run, with what rights and limits"
	reasonRunFlow     = "the flow of the run that made this proposal: it decides what this agent may do"
	reasonPackageJSON = "package.json %s (the commands a package manager runs)"
	workspaceReason   = "in the workspace's own list (" + WorkspaceControlFile + ")"
)

// controlPattern is one parsed pattern of a list.
type controlPattern struct {
	source  string
	reason  string
	pattern gitignore.Pattern
}

var builtinPatterns = func() []controlPattern {
	var out []controlPattern
	for _, g := range builtinControl {
		for _, p := range g.patterns {
			out = append(out, controlPattern{source: p, reason: g.reason, pattern: gitignore.ParsePattern(strings.ToLower(p), nil)})
		}
	}
	return out
}()

// controlRules classify a proposal's files: the built-in list, the workspace's additions and
// the flow of the run that made the proposal.
type controlRules struct {
	extra    []controlPattern
	flowFile string // workspace-relative, "" when unknown or outside the workspace
}

// version is one side of a changed file, as far as known.
type version struct {
	exists bool
	link   bool
	data   []byte // content, or a symlink's target
	known  bool   // the content was read (a check's plan); false: only the name is known
}

// classify says why p (with its two versions) changes how things run, or "".
func (cr controlRules) classify(p string, before, after version) string {
	if why := cr.byName(p); why != "" {
		return why
	}
	for _, v := range []version{before, after} {
		if !v.exists {
			continue
		}
		if v.link {
			if t := linkTargetPath(p, string(v.data)); t != "" {
				if why := cr.byName(t); why != "" {
					return "a symbolic link to " + t + ", which is held: " + why
				}
			}
			continue
		}
		if v.known && isFlowText(p, v.data) {
			return reasonFlow
		}
	}
	if strings.EqualFold(path.Base(p), "package.json") {
		return packageJSONHold(before, after)
	}
	return ""
}

// byName is the reason a path is held for its name alone, or "".
func (cr controlRules) byName(p string) string {
	if cr.flowFile != "" && p == cr.flowFile {
		return reasonRunFlow
	}
	comps := foldedComponents(p)
	for _, c := range builtinPatterns {
		if c.pattern.Match(comps, true) == gitignore.Exclude {
			return c.reason
		}
	}
	for _, c := range cr.extra {
		if c.pattern.Match(comps, true) == gitignore.Exclude {
			return c.reason
		}
	}
	return ""
}

// foldedComponents are p's components as a case-insensitive file system (and Windows, which
// drops trailing dots and spaces) sees them, so ".VSCode" and ".envrc." are held as well.
// Every path is matched as if it were a folder: a symbolic link named like a held folder is
// held too.
func foldedComponents(p string) []string {
	comps := strings.Split(p, "/")
	for i, c := range comps {
		comps[i] = strings.TrimRight(strings.ToLower(c), ". ")
	}
	return comps
}

// linkTargetPath is the workspace-relative path a symbolic link at p points to, or "" when
// it leaves the workspace (check refuses that anyway).
func linkTargetPath(p, target string) string {
	if path.IsAbs(target) {
		return ""
	}
	t := path.Join(path.Dir(p), target)
	if t == ".." || strings.HasPrefix(t, "../") || t == "." {
		return ""
	}
	return t
}

// isFlowText: data is a flow (YAML or JSON with the top-level keys a flow has), whatever its
// name: a flow may live anywhere and be run by path.
func isFlowText(p string, data []byte) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".yaml", ".yml", ".json":
	default:
		return false
	}
	if len(data) > 4<<20 {
		return true // too big to read here: held, since it may be one
	}
	var top map[string]any
	if err := yaml.Unmarshal(data, &top); err != nil {
		return bytes.Contains(data, []byte("interactions:")) || bytes.Contains(data, []byte(`"interactions"`))
	}
	_, agents := top["agents"]
	_, interactions := top["interactions"]
	return agents || interactions
}

// packageJSONSafeKeys are the package.json keys whose change runs nothing new: metadata,
// entry points and dependencies (a dependency's own scripts are the registry's, reviewed
// as a dependency). Any other key changed (scripts, bin, config, hooks, workspaces,
// overrides, packageManager, …) holds the file.
var packageJSONSafeKeys = map[string]bool{
	"name": true, "version": true, "description": true, "keywords": true, "homepage": true,
	"bugs": true, "license": true, "author": true, "contributors": true, "funding": true,
	"repository": true, "private": true, "files": true, "main": true, "module": true,
	"types": true, "typings": true, "exports": true, "type": true, "sideEffects": true,
	"browser": true, "engines": true, "os": true, "cpu": true, "dependencies": true,
	"devDependencies": true, "peerDependencies": true, "peerDependenciesMeta": true,
	"optionalDependencies": true,
}

// packageJSONHold says why a change of package.json is held, or "" when only safe keys
// changed and every dependency it adds or changes comes from the registry.
func packageJSONHold(before, after version) string {
	if !before.known || !after.known || before.link || after.link {
		return fmt.Sprintf(reasonPackageJSON, "may change its scripts: its content cannot be read here")
	}
	var a, b map[string]any
	if before.exists && json.Unmarshal(before.data, &a) != nil || after.exists && json.Unmarshal(after.data, &b) != nil {
		return fmt.Sprintf(reasonPackageJSON, "is not valid JSON on one side, so a change to its scripts cannot be ruled out")
	}
	var changed []string
	for k := range keysOf(a, b) {
		if !reflect.DeepEqual(a[k], b[k]) && !packageJSONSafeKeys[k] {
			changed = append(changed, k)
		}
	}
	if len(changed) > 0 {
		sort.Strings(changed)
		return fmt.Sprintf(reasonPackageJSON, "changes "+strings.Join(changed, ", "))
	}
	for _, k := range []string{"dependencies", "devDependencies", "peerDependencies", "optionalDependencies"} {
		old, _ := a[k].(map[string]any)
		now, _ := b[k].(map[string]any)
		for name, spec := range now {
			s, _ := spec.(string)
			if !reflect.DeepEqual(old[name], spec) && !registrySpec(s) {
				return fmt.Sprintf("package.json takes %s from outside the registry (%q): its install scripts run on install", name, s)
			}
		}
	}
	return ""
}

// registrySpec: a dependency's version spec names a registry version or tag, not a path, a
// URL or a git repository (which carry code no registry has seen).
func registrySpec(s string) bool {
	return s != "" && !strings.ContainsAny(s, ":/\\") && !strings.HasPrefix(s, ".") && !strings.HasPrefix(s, "~/")
}

func keysOf(ms ...map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			out[k] = true
		}
	}
	return out
}

// flowFileOf is the run's flow file as a workspace-relative slash path, or "" when it is not
// in the workspace.
func flowFileOf(workspace, flowFile string) string {
	if flowFile == "" {
		return ""
	}
	if filepath.IsAbs(flowFile) {
		ws, err := filepath.Abs(workspace)
		if err != nil {
			return ""
		}
		if real, err := filepath.EvalSymlinks(ws); err == nil {
			ws = real
		}
		if real, err := filepath.EvalSymlinks(filepath.Dir(flowFile)); err == nil {
			flowFile = filepath.Join(real, filepath.Base(flowFile))
		}
		rel, err := filepath.Rel(ws, flowFile)
		if err != nil {
			return ""
		}
		flowFile = rel
	}
	f := filepath.ToSlash(filepath.Clean(flowFile))
	if f == ".." || strings.HasPrefix(f, "../") {
		return ""
	}
	return f
}
