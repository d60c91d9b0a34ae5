package engine

import (
	"fmt"
	"os"

	"github.com/agentcanvas/agentcanvas/sidecar/doctor"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
)

// warnUnsetEnv tells the person, once per agent and name, of a variable the agent's
// runtime.env names that is not set (or empty): the agent runs without it. Two kinds are
// quiet: a provider's base URL (unset, the CLI calls the provider's own API), and an API key
// of a CLI that is logged in (the login is used instead; the first-run flows name the key so
// that either works). A key with no login to fall back on says the model calls will fail.
func (c *ictx) warnUnsetEnv(node string, names []string, env map[string]string) {
	for _, n := range names {
		if env[n] != "" || isBaseURLVar(n) || !c.r.firstTime("unset-env\x00"+node+"\x00"+n) {
			continue
		}
		msg := fmt.Sprintf("runtime.env of %s names %s, which is not set: the agent runs without it", node, n)
		if cli, ok := doctor.KeyCLI(n); ok {
			if doctor.LoginOf(cli, os.Getenv) != "" {
				continue
			}
			msg = fmt.Sprintf("runtime.env of %s names %s, which is not set, and %s has no login: its model calls will fail (set %s, or log in: %s; agentcanvas doctor FLOW checks this)", node, n, cli.Program, n, cli.LogIn)
		}
		c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "message": msg})
	}
}

func isBaseURLVar(n string) bool {
	for _, v := range gateway.BaseURLVars {
		if v == n {
			return true
		}
	}
	return false
}
