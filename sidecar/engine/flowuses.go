package engine

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// What a flow runs from the workspace: its agents' command scripts and setup, the scripts its
// test and verify commands name, and the rule files its agents are given. A worker that
// rewrote one would change what another agent does — a reviewer that then accepts
// everything, an agent granted the network or a Unix socket — with that agent's rights, on
// the next run. Each proposal's origin lists them (proposal.Origin.FlowUses), and a proposal
// that changes one is held like the flow itself (docs/proposals.md, Control files).

// flowUses are the workspace files the run's flow uses, and those of the workspace's other
// flows (flows/*.yaml, .agentcanvas/flows/*.yaml): a proposal of this run may be aimed at
// the next run of any of them.
func (r *run) flowUses() []proposal.FlowUse {
	r.usesOnce.Do(func() {
		seen := map[string]bool{}
		add := func(f *flow.Flow) {
			for _, u := range usesOf(r.o.Workspace, f) {
				if !seen[u.Path] {
					seen[u.Path] = true
					r.uses = append(r.uses, u)
				}
			}
		}
		add(r.f)
		for _, dir := range []string{"flows", filepath.Join(".agentcanvas", "flows")} {
			files, _ := filepath.Glob(filepath.Join(r.o.Workspace, dir, "*.yaml"))
			for _, file := range files {
				if src, err := os.ReadFile(file); err == nil && len(src) < 4<<20 {
					add(flow.Parse(file, src))
				}
			}
		}
	})
	return r.uses
}

// usesOf are the workspace files one flow uses.
func usesOf(workspace string, f *flow.Flow) []proposal.FlowUse {
	var out []proposal.FlowUse
	for _, a := range f.Agents {
		if a.Runtime == nil {
			continue
		}
		for _, p := range runtime.CommandFiles(a.Runtime.Command) {
			out = append(out, proposal.FlowUse{Path: p, Use: "agent " + a.ID + "'s runtime.command"})
		}
		for _, p := range runtime.CommandFiles(a.Runtime.Setup) {
			out = append(out, proposal.FlowUse{Path: p, Use: "agent " + a.ID + "'s runtime.setup"})
		}
	}
	for _, in := range f.Interactions {
		for _, e := range in.Edges {
			for _, k := range []string{"test_command", "verify_command"} {
				for _, p := range checkFiles(workspace, commandParam(e.Data.Params[k])) {
					out = append(out, proposal.FlowUse{Path: p, Use: "interaction " + in.ID + "'s " + k})
				}
			}
		}
	}
	for _, ref := range f.CommonRules.RuleChainRefs {
		_, p, ok := strings.Cut(ref, ":")
		if !ok {
			p = ref
		}
		if q, err := safepath.Clean(p, safepath.Lexical); err == nil && !strings.HasPrefix(p, "~") {
			out = append(out, proposal.FlowUse{Path: q, Use: "commonRules.ruleChainRefs, the rules every agent is given"})
		}
	}
	return out
}

// checkFiles are the workspace files a test or verify command names: it runs in a sandbox
// that mirrors the workspace, so any argument that is a file there (run_tests.sh,
// scripts/check.py) is one it runs. Folders are left out (pytest tests/ reads the tests,
// which are the worker's to change).
func checkFiles(workspace string, argv []string) []string {
	var out []string
	for i, arg := range argv {
		if i == 0 && !strings.Contains(arg, "/") {
			continue // a program on PATH
		}
		q, err := safepath.Clean(arg, safepath.Lexical)
		if err != nil || strings.HasPrefix(arg, "-") {
			continue
		}
		if st, err := os.Stat(filepath.Join(workspace, filepath.FromSlash(q))); err == nil && st.Mode().IsRegular() {
			out = append(out, q)
		}
	}
	return out
}
