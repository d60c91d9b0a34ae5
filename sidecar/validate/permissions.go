package validate

import (
	"fmt"
	"slices"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// cliPermission is one CLI's permission field and what it takes to edit.
type cliPermission struct {
	backend, field string
	value          func(*flow.Runtime) string
	// canEdit are the values that let the CLI edit its working folder in a headless run;
	// edit is the one the engine gives workers.
	canEdit []string
	edit    string
}

var cliPermissions = []cliPermission{
	{"claude", "permissionMode", func(r *flow.Runtime) string { return r.PermissionMode }, []string{"acceptEdits", "bypassPermissions", "auto"}, "acceptEdits"},
	{"codex", "codexSandbox", func(r *flow.Runtime) string { return r.CodexSandbox }, []string{"workspace-write", "danger-full-access"}, "workspace-write"},
	{"gemini", "geminiApprovalMode", func(r *flow.Runtime) string { return r.GeminiApprovalMode }, []string{"auto_edit", "yolo"}, "auto_edit"},
}

// permissions warns about the CLIs' permission settings that cannot do what the agent is
// for: a worker in its sandbox whose own setting keeps it from editing (its edits would be
// denied and nothing proposed), and a setting for a CLI the agent does not run (ignored).
func (c *checker) permissions() {
	for _, a := range c.f.Agents {
		r := a.Runtime
		if r == nil {
			continue
		}
		backend := r.BackendID
		if backend == "" {
			backend = "auto"
		}
		inSandbox := r.CwdMode == "agentHome" || r.CwdMode == "" && flow.IsWorkerRole(a.Role)
		for _, p := range cliPermissions {
			v := p.value(r)
			if v == "" {
				continue
			}
			path := a.Path + "/runtime/" + p.field
			switch {
			case backend != "auto" && backend != p.backend && (backend == "claude" || backend == "codex" || backend == "gemini"):
				c.report(path, c.at(path), diag.Warning, CodePermissionMode,
					fmt.Sprintf("agent %q runs %s, which ignores %s (%s's setting); remove it, and set %s instead if the agent needs a setting", a.ID, backend, p.field, p.backend, fieldOf(backend)),
					c.deleteFix("Remove "+p.field, path))
			case flow.IsWorkerRole(a.Role) && inSandbox && slices.Contains(permissionValues(p.field), v) && !slices.Contains(p.canEdit, v):
				c.report(path, c.at(path), diag.Warning, CodePermissionMode,
					fmt.Sprintf("worker %q cannot edit its sandbox with %s: %s: in a headless run %s denies every edit, so the worker proposes nothing; use %s: %s, or remove it for the workers' default (%s)", a.ID, p.field, v, p.backend, p.field, p.edit, p.edit),
					c.replaceFix("Set "+p.field+": "+p.edit, path, p.edit))
			}
		}
	}
}

// permissionValues is the closed set of a permission field.
func permissionValues(field string) []string {
	switch field {
	case "permissionMode":
		return PermissionModes
	case "codexSandbox":
		return CodexSandboxes
	case "geminiApprovalMode":
		return GeminiApprovalModes
	}
	return nil
}

// fieldOf is a backend's permission field.
func fieldOf(backend string) string {
	for _, p := range cliPermissions {
		if p.backend == backend {
			return p.field
		}
	}
	return ""
}
