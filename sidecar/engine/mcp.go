package engine

import (
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/mcpconfig"
)

// mcpState is a run's view of the workspace's MCP files (spec §7.3), read once per run, and
// the agents already told what they do not get (warned once per agent, not every turn).
type mcpState struct {
	once   sync.Once
	cfg    *mcpconfig.Config
	err    error
	mu     sync.Mutex
	warned map[string]bool
}

// mcpServers returns the servers agent gets of the ones its flow names (agents[].mcp): those
// defined in .mcp.json and allowed by .agentcanvas/mcp-allowlist.json. Every other one is a
// warning event naming it and why, as is a variable a server refers to that the run's
// environment does not supply. The result is never nil: an agent that names servers gets
// exactly these, even none.
func (r *run) mcpServers(interactionID, agent string, names []string) []mcpconfig.Server {
	m := &r.mcp
	m.once.Do(func() {
		root, err := os.OpenRoot(r.o.Workspace)
		if err != nil {
			m.err = err
			return
		}
		defer root.Close()
		m.cfg, m.err = mcpconfig.Load(root)
	})
	var got []mcpconfig.Server
	var skipped []mcpconfig.Skip
	if m.err != nil {
		for _, n := range slices.Compact(slices.Clone(names)) {
			skipped = append(skipped, mcpconfig.Skip{Name: n, Reason: "the workspace's MCP files cannot be used: " + m.err.Error()})
		}
	} else {
		got, skipped = m.cfg.Resolve(names)
	}
	m.mu.Lock()
	first := !m.warned[agent]
	if m.warned == nil {
		m.warned = map[string]bool{}
	}
	m.warned[agent] = true
	m.mu.Unlock()
	if first {
		for _, s := range skipped {
			r.emit(interactionID, "", "warning", map[string]any{"agent": agent, "mcpServer": s.Name,
				"message": fmt.Sprintf("MCP server %q skipped for agent %s: %s", s.Name, agent, s.Reason)})
		}
		for _, s := range got {
			for _, n := range s.Names() {
				if _, ok := r.o.Env[n]; ok {
					continue
				}
				if _, ok := os.LookupEnv(n); !ok {
					r.emit(interactionID, "", "warning", map[string]any{"agent": agent, "mcpServer": s.Name,
						"message": fmt.Sprintf("MCP server %q of agent %s refers to %s, which has no value in the run's environment; supply it with the run or set it where the sidecar runs", s.Name, agent, n)})
				}
			}
		}
	}
	if got == nil {
		got = []mcpconfig.Server{}
	}
	return got
}

// mcpEnvNames is the variables the servers refer to, for the agent's environment.
func mcpEnvNames(servers []mcpconfig.Server) []string {
	var out []string
	for _, s := range servers {
		out = append(out, s.Names()...)
	}
	return out
}
