package proposal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

const reasonPackageJSON = "package.json %s (the commands a package manager runs)"

// isFlowText: data is a flow (YAML or JSON with the top-level keys a flow has), whatever its
// name: a flow may live anywhere and be run by path, under any extension (agentcanvas run
// flows/nightly.txt runs it).
func isFlowText(p string, data []byte) bool {
	yamlName := false
	switch strings.ToLower(path.Ext(p)) {
	case ".yaml", ".yml", ".json":
		yamlName = true
	}
	if !bytes.Contains(data, []byte("agents")) && !bytes.Contains(data, []byte("interactions")) {
		return false
	}
	if len(data) > 4<<20 {
		return yamlName // too big to read here: held, since it may be one
	}
	var top map[string]any
	if err := yaml.Unmarshal(data, &top); err != nil {
		return yamlName && (bytes.Contains(data, []byte("interactions:")) || bytes.Contains(data, []byte(`"interactions"`)))
	}
	_, agents := top["agents"]
	_, interactions := top["interactions"]
	return agents || interactions
}

// contentHold says why a file is held for what it holds (or held), or "": package.json's
// scripts, a requirements file's or go.mod's sources from outside the registry, a Go file's
// go:generate lines.
func contentHold(p string, before, after version) string {
	name := path.Base(p)
	switch {
	case strings.EqualFold(name, "package.json"):
		return packageJSONHold(before, after)
	case isRequirementsFile(p):
		return requirementsHold(before, after)
	case strings.EqualFold(name, "go.mod"):
		return goModHold(before, after)
	case strings.EqualFold(path.Ext(name), ".go"):
		return goGenerateHold(before, after)
	}
	return ""
}

// unreadable: the content rule cannot see one side (a review of a patch that does not apply
// now), so it holds.
func unreadable(before, after version) bool {
	return !before.known || !after.known || before.link || after.link
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
	if unreadable(before, after) {
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

// goGenerateHold says why a change of a Go file is held, or "": its //go:generate lines
// change, and go generate runs each as a command. Read only when both sides are (every
// apply's check reads them).
func goGenerateHold(before, after version) string {
	if !before.known || !after.known || before.link || after.link {
		return ""
	}
	if !bytes.Contains(before.data, goGenerate) && !bytes.Contains(after.data, goGenerate) {
		return ""
	}
	if slices.Equal(generateLines(before.data), generateLines(after.data)) {
		return ""
	}
	return "its //go:generate lines change: go generate runs each as a command"
}

var goGenerate = []byte("//go:generate")

// generateLines are data's //go:generate lines.
func generateLines(data []byte) []string {
	var out []string
	for _, l := range bytes.Split(data, []byte("\n")) {
		if l = bytes.TrimSpace(l); bytes.HasPrefix(l, goGenerate) {
			out = append(out, string(l))
		}
	}
	return out
}
