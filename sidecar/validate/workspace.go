package validate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/mcpconfig"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/skill"
)

// MCPAllowlistFile is where a workspace lists the MCP servers its agents may use (spec §7.3):
// {"servers": ["github", "jira"]}. It is read by mcpconfig, as the run engine reads it.
const MCPAllowlistFile = mcpconfig.AllowlistFile

// MaxMCPServers is spec §7.3's "keep MCP servers to a minimum (0–2 by default)".
const MaxMCPServers = 2

type skillResult struct{ problem string }

type allowlist struct {
	servers []string
	missing bool  // the file does not exist
	err     error // the file exists and cannot be used (mcpconfig's error: file, field, line)
}

// FindRoot returns the nearest folder at or above dir that holds .agentcanvas/ or .git (a
// folder, or a file in a git worktree), and whether there is one.
func FindRoot(dir string) (string, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for d := abs; ; d = filepath.Dir(d) {
		if st, err := os.Stat(filepath.Join(d, ".agentcanvas")); err == nil && st.IsDir() {
			return d, true
		}
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// commandPaths warns about a command agent whose relative paths name nothing in the workspace
// (runtime.ResolveCommand's rule): its run would refuse to start. A warning, not an error,
// since a dry run does not need the scripts and they may not be written yet.
func (c *checker) commandPaths() {
	if c.ws.Root == "" {
		return
	}
	check := func(id, path string, rt *flow.Runtime) {
		if rt == nil || rt.BackendID != "command" {
			return
		}
		_, err := runtime.ResolveCommand(c.ws.Root, rt.Command)
		var pe *runtime.CommandPathError
		if !errors.As(err, &pe) {
			return
		}
		p := fmt.Sprintf("%s/runtime/command/%d", path, pe.Index)
		c.report(p, c.at(p), diag.Warning, CodeCommandPath, fmt.Sprintf("agent %s: %s, and the run will refuse to start", id, pe.Problem()), nil)
	}
	for _, a := range c.f.Agents {
		check(a.ID, a.Path, a.Runtime)
	}
	for _, s := range c.f.SystemNodes {
		check(s.ID, s.Path, s.Runtime)
	}
}

// workspace runs the rules that read the workspace: skills, the MCP allowlist, command paths.
func (c *checker) workspace() {
	c.commandPaths()
	var root *os.Root
	if c.ws.Root != "" {
		r, err := os.OpenRoot(c.ws.Root)
		if err == nil {
			root = r
			defer r.Close()
		}
	}
	for _, a := range c.f.Agents {
		if root != nil {
			for i, name := range a.Skills {
				p := fmt.Sprintf("%s/skills/%d", a.Path, i)
				if msg := c.skill(root, name); msg != "" {
					c.report(p, c.at(p), diag.Error, CodeSkillInvalid, msg, nil)
				}
			}
		}
		if len(a.MCP) > MaxMCPServers {
			p := a.Path + "/mcp"
			c.report(p, c.at(p), diag.Warning, CodeMCPPolicy,
				fmt.Sprintf("agent %q uses %d MCP servers; keep to at most %d (least context) and move the rest to the agents that need them", a.ID, len(a.MCP), MaxMCPServers), nil)
		}
		if len(a.MCP) == 0 {
			continue
		}
		al := c.allowlist(root)
		if al == nil {
			continue
		}
		for i, server := range a.MCP {
			if slices.Contains(al.servers, server) {
				continue
			}
			p := fmt.Sprintf("%s/mcp/%d", a.Path, i)
			var msg string
			switch {
			case al.err != nil:
				msg = fmt.Sprintf("MCP server %q cannot be checked: %v; fix the file ({\"servers\": [\"%s\"]})", server, al.err, server)
			case al.missing:
				msg = fmt.Sprintf("MCP server %q is not allowlisted: the workspace has no %s; create it with {\"servers\": [\"%s\"]} if the server is trusted, or remove it from the agent", server, MCPAllowlistFile, server)
			default:
				msg = fmt.Sprintf("MCP server %q is not in the workspace allowlist (%s); add it there if it is trusted, or remove it from the agent", server, MCPAllowlistFile)
			}
			c.report(p, c.at(p), diag.Warning, CodeMCPPolicy, msg, nil)
		}
	}
}

func (c *checker) allowlist(root *os.Root) *allowlist {
	if c.mcp != nil {
		return c.mcp
	}
	switch {
	case c.ws.MCPAllowlist != nil:
		c.mcp = &allowlist{servers: c.ws.MCPAllowlist}
	case root == nil:
		return nil // no workspace: nothing to check against
	default:
		c.mcp = readAllowlist(root)
	}
	return c.mcp
}

func readAllowlist(root *os.Root) *allowlist {
	servers, found, err := mcpconfig.LoadAllowlist(root)
	return &allowlist{servers: servers, missing: !found, err: err}
}

// skill checks .agentcanvas/skills/<name>/SKILL.md and returns what is wrong with it, or "".
func (c *checker) skill(root *os.Root, name string) string {
	if c.skills == nil {
		c.skills = map[string]skillResult{}
	}
	if r, ok := c.skills[name]; ok {
		return r.problem
	}
	msg := checkSkill(root, name)
	c.skills[name] = skillResult{msg}
	return msg
}

func checkSkill(root *os.Root, name string) string {
	if _, err := skill.Load(root, name); err != nil {
		return err.Error()
	}
	return ""
}
