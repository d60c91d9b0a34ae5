package proposal

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Where code comes from: a dependency from the registry is reviewed as a dependency, but one
// from a URL, a git repository or a path (or another index) carries code no registry has
// seen, and its build runs on install. Held as package.json's are (control_content.go):
// pip's requirements files and go.mod, by what a change adds; go.work always (control_builtin.go).

// isRequirementsFile: pip's requirements and constraints files by their usual names:
// requirements.txt, requirements-dev.txt, dev-requirements.txt, constraints.txt, their .in
// sources (pip-tools), and any .txt or .in in a requirements/ folder.
func isRequirementsFile(p string) bool {
	name := strings.ToLower(path.Base(p))
	ext := path.Ext(name)
	if ext != ".txt" && ext != ".in" {
		return false
	}
	stem := strings.TrimSuffix(name, ext)
	if strings.Contains(stem, "requirements") || strings.Contains(stem, "constraints") {
		return true
	}
	dir := strings.ToLower(path.Base(path.Dir(p)))
	return dir == "requirements" || dir == "requirements.d"
}

// registryRequirement is a requirement pip takes from the index: a name, extras, version
// specifiers and an environment marker, nothing else (no option, URL, path or variable).
var registryRequirement = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?\s*(\[[A-Za-z0-9._,\s-]*\])?\s*(\(?\s*(~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*(,\s*(~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*)*\)?)?\s*(;[^@$/\\]*)?$`)

// pipHash is the hash-checking option a pinned requirement carries (--hash=sha256:…).
var pipHash = regexp.MustCompile(`\s+--hash[=\s]+[a-z0-9]+:[0-9a-fA-F]+`)

// requirementsHold says why a change of a requirements file is held, or "": a line it adds
// that is not a registry requirement.
func requirementsHold(before, after version) string {
	if unreadable(before, after) {
		return "a requirements file whose content cannot be read here may take code from outside the registry"
	}
	old := map[string]bool{}
	for _, l := range requirementLines(before.data) {
		old[l] = true
	}
	for _, l := range requirementLines(after.data) {
		if old[l] || registryRequirement.MatchString(pipHash.ReplaceAllString(l, "")) {
			continue
		}
		return fmt.Sprintf("the requirements file takes %q from outside the registry (an option, a URL, a path or another index): pip runs code from it on install", cutLine(l))
	}
	return ""
}

// requirementLines are a requirements file's lines as pip reads them: continuations joined,
// comments and blank lines dropped.
func requirementLines(data []byte) []string {
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		cur.WriteString(line)
		l := strings.TrimSpace(pipComment.ReplaceAllString(cur.String(), ""))
		cur.Reset()
		if l != "" {
			out = append(out, l)
		}
	}
	if l := strings.TrimSpace(pipComment.ReplaceAllString(cur.String(), "")); l != "" {
		out = append(out, l)
	}
	return out
}

// pipComment is a comment as pip strips it: a # at the start or after whitespace.
var pipComment = regexp.MustCompile(`(^|\s)#.*$`)

// goModHold says why a change of go.mod is held, or "": any directive changed but require
// (replace, exclude, retract, tool, toolchain, go, godebug, module) — where Go takes code,
// what it runs, and which toolchain it downloads.
func goModHold(before, after version) string {
	if unreadable(before, after) {
		return "go.mod, whose content cannot be read here, may change where Go takes code from"
	}
	b, a := goModDirectives(before.data), goModDirectives(after.data)
	if slices.Equal(b, a) {
		return ""
	}
	var changed []string
	for _, d := range append(slices.Clone(b), a...) {
		if slices.Contains(b, d) != slices.Contains(a, d) {
			kw, _, _ := strings.Cut(d, " ")
			if !slices.Contains(changed, kw) {
				changed = append(changed, kw)
			}
		}
	}
	return fmt.Sprintf("go.mod changes its %s directives: where Go takes code from, what go tool runs, or the toolchain it downloads", strings.Join(changed, ", "))
}

// goModDirectives are go.mod's directives other than require, one "keyword args" string
// each (a block's lines with its keyword), comments and spacing dropped.
func goModDirectives(data []byte) []string {
	var out []string
	block := ""
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			continue
		case block != "" && f[0] == ")":
			block = ""
			continue
		case block != "":
			f = append([]string{block}, f...)
		case f[len(f)-1] == "(":
			block = f[0]
			continue
		}
		if f[0] != "require" {
			out = append(out, strings.Join(f, " "))
		}
	}
	return out
}
