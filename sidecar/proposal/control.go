package proposal

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
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

const (
	reasonFlow      = "a flow: decides which agents run, with what rights and limits"
	reasonRunFlow   = "the flow of the run that made this proposal: it decides what this agent may do"
	reasonUsed      = "the flow of the run that made this proposal uses it (%s): a change to it changes what that agent does, with that agent's rights"
	workspaceReason = "in the workspace's own list (" + WorkspaceControlFile + ")"
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
			out = append(out, controlPattern{source: p, reason: g.reason, pattern: parseControlPattern(p)})
		}
	}
	return out
}()

// controlRules classify a proposal's files: the built-in list, the workspace's additions and
// the flow of the run that made the proposal.
type controlRules struct {
	extra    []controlPattern
	flowFile string // workspace-relative, "" when unknown or outside the workspace
	// uses are the workspace files (or folders) the run's flow runs, or reads its agents'
	// rules from (Origin.FlowUses).
	uses []FlowUse
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
	return contentHold(p, before, after)
}

// byName is the reason a path is held for its name alone, or "".
func (cr controlRules) byName(p string) string {
	comps := foldedComponents(p)
	if cr.flowFile != "" && slices.Equal(comps, foldedComponents(cr.flowFile)) {
		return reasonRunFlow
	}
	for _, u := range cr.uses {
		if uc := foldedComponents(u.Path); len(comps) >= len(uc) && slices.Equal(comps[:len(uc)], uc) {
			return fmt.Sprintf(reasonUsed, u.Use)
		}
	}
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

// foldedComponents are p's components as a file system that ignores case, normalisation or
// trailing dots sees them (safepath.Fold), so ".VSCode", ".envrc.", ".gıthub" and "Maſefile"
// are held as well. Every path is matched as if it were a folder: a symbolic link named like
// a held folder is held too.
func foldedComponents(p string) []string {
	comps := strings.Split(p, "/")
	for i, c := range comps {
		comps[i] = safepath.Fold(c)
	}
	return comps
}

// parseControlPattern parses a .gitignore-style pattern, its components folded as names are.
func parseControlPattern(p string) gitignore.Pattern {
	comps := strings.Split(p, "/")
	for i, c := range comps {
		comps[i] = safepath.Fold(c)
	}
	return gitignore.ParsePattern(strings.Join(comps, "/"), nil)
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
