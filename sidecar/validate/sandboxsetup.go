package validate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// sandboxSetup checks runtime.shared and runtime.setup: shared folders are workspace-relative
// and outside .git and .agentcanvas, setup names a program, and both only do something for an
// agent that works in a sandbox (a warning otherwise: the run would ignore them).
func (c *checker) sandboxSetup() {
	for _, a := range c.f.Agents {
		r := a.Runtime
		if r == nil || len(r.Shared) == 0 && len(r.Setup) == 0 {
			continue
		}
		path := a.Path + "/runtime"
		for i, s := range r.Shared {
			p := fmt.Sprintf("%s/shared/%d", path, i)
			if _, err := sandbox.CleanShared(s); err != nil {
				c.report(p, c.at(p), diag.Error, CodeUnsafePath,
					fmt.Sprintf("shared folder %q is refused: %s; name a workspace-relative folder such as node_modules or .venv", s, err.(*sandbox.RefusedError).Reason), nil)
			}
		}
		if len(r.Setup) > 0 && strings.TrimSpace(r.Setup[0]) == "" {
			p := path + "/setup/0"
			c.report(p, c.at(p), diag.Error, CodeSchema, "runtime.setup's program is empty; name the program to run, e.g. [npm, ci]", nil)
		} else if c.ws.Root != "" && len(r.Setup) > 0 {
			var pe *runtime.CommandPathError
			if _, err := runtime.ResolveCommand(c.ws.Root, r.Setup); errors.As(err, &pe) {
				p := fmt.Sprintf("%s/setup/%d", path, pe.Index)
				c.report(p, c.at(p), diag.Warning, CodeCommandPath, fmt.Sprintf("agent %s: runtime.setup: %s, and the agent will fail to start", a.ID, pe.Problem()), nil)
			}
		}
		inSandbox := r.CwdMode == "agentHome" || r.CwdMode == "" && flow.IsWorkerRole(a.Role)
		if !inSandbox {
			field := "shared"
			if len(r.Shared) == 0 {
				field = "setup"
			}
			p := path + "/" + field
			c.report(p, c.at(p), diag.Warning, CodeSchema,
				fmt.Sprintf("agent %s works in the workspace, not in a sandbox: runtime.%s is ignored; give it cwdMode: agentHome or remove %s", a.ID, field, field), nil)
		}
	}
}
