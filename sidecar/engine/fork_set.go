package engine

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/validate"
)

// Changes at a fork: `--set KEY=VALUE`, each checked before anything is written and applied
// to the flow's text as the editor's edits are (package flow), so the fork runs a flow file of
// its own, .agentcanvas/runs/<fork>/<flow>.yaml, that the validator has passed. Keys:
//
//	agent.<id>.backend   its runtime.backendId (claude, codex, gemini, command, dry-run, auto)
//	agent.<id>.model     its runtime.model ("" for the CLI's default)
//	agent.<id>.prompt    its instructions, which every prompt it is sent carries
//	agent.<id>.command   its runtime.command, words split at spaces (a command agent)
//	task                 the run's task
//
// <id> is an agent's id, or a system node's with a runtime (a judge), which has no prompt.

// setting is one --set.
type setting struct {
	raw          string
	agent, field string // field: backend, model, prompt, command; agent "" for task
	value        string
}

// setFields are the agent fields --set may change, and their place in the flow.
var setFields = map[string]string{"backend": "runtime/backendId", "model": "runtime/model", "prompt": "instructions", "command": "runtime/command"}

const setUsage = "agent.<id>.backend=…, agent.<id>.model=…, agent.<id>.prompt=…, agent.<id>.command=… or task=…"

// parseSets reads the --set flags: each KEY=VALUE, a known key, no key twice.
func parseSets(raw []string) ([]setting, error) {
	var out []setting
	seen := map[string]bool{}
	for _, r := range raw {
		key, value, ok := strings.Cut(r, "=")
		if !ok {
			return nil, forkErr("--set %q: write KEY=VALUE (%s)", r, setUsage)
		}
		key = strings.TrimSpace(key)
		s := setting{raw: r, value: value}
		if key != "task" {
			rest, ok := strings.CutPrefix(key, "agent.")
			i := strings.LastIndexByte(rest, '.')
			if !ok || i <= 0 {
				return nil, forkErr("--set %s: unknown key %q (%s)", r, key, setUsage)
			}
			s.agent, s.field = rest[:i], rest[i+1:]
			if _, known := setFields[s.field]; !known {
				return nil, forkErr("--set %s: an agent has no setting %q here (backend, model, prompt, command)", r, s.field)
			}
		}
		if strings.TrimSpace(value) == "" && (key == "task" || s.field == "backend" || s.field == "command") {
			return nil, forkErr("--set %s: %s needs a value", r, key)
		}
		if seen[key] {
			return nil, forkErr("--set %s: %s is set twice", r, key)
		}
		seen[key] = true
		out = append(out, s)
	}
	return out, nil
}

// applySets makes the fork's flow: the parent's flow file as it is now with the changes,
// validated; a problem names the --set that caused it.
func (p *ForkPlan) applySets(file string, src []byte, sets []setting) error {
	f := flow.Parse(file, src)
	if f.Doc == nil {
		return &InvalidFlowError{Diagnostics: f.Problems}
	}
	var ops []flow.Op
	paths := map[string]string{} // model path → the --set that changes it
	backendSet := false
	for _, s := range sets {
		if s.agent == "" {
			p.task = s.value
			p.Changes = append(p.Changes, "task: "+oneLine(s.value))
			continue
		}
		op, old, err := p.setOp(f, s)
		if err != nil {
			return err
		}
		ops = append(ops, op)
		paths[op.Path] = s.raw
		backendSet = backendSet || s.field == "backend"
		p.Changes = append(p.Changes, fmt.Sprintf("%s: %s %s → %s", s.agent, s.field, orNone(old), orNone(oneLine(s.value))))
	}
	if backendSet && p.parent.Backend != "" && p.parent.Backend != "auto" {
		// The parent ran with every agent's backend overridden: the fork keeps that for the
		// agents not changed here, in its flow, so the changed ones are not overridden too.
		ops = append(ops, p.keepOverride(f, paths)...)
		p.clearBackend = true
	}
	text, err := flow.EditText(src, file, ops)
	if err != nil {
		return forkErr("--set: %v", err)
	}
	p.flowText = text
	p.flow = flow.Parse(filepath.Join(p.workspace, RunsDir, p.RunID, filepath.Base(file)), text)
	return p.checkChanged(paths)
}

// setOp is the flow edit of one agent setting, and the value it replaces.
func (p *ForkPlan) setOp(f *flow.Flow, s setting) (flow.Op, string, error) {
	n, ok := f.NodeByID(s.agent)
	if !ok {
		return flow.Op{}, "", forkErr("--set %s: the flow has no agent %q (its agents: %s)", s.raw, s.agent, strings.Join(agentIDs(f), ", "))
	}
	var base string
	var rt *flow.Runtime
	var instructions string
	if n.Agent != nil {
		base, rt, instructions = n.Agent.Path, n.Agent.Runtime, n.Agent.Instructions
	} else {
		base, rt = n.System.Path, n.System.Runtime
		if s.field == "prompt" || rt == nil {
			return flow.Op{}, "", forkErr("--set %s: %s is a %s node, which has no %s", s.raw, s.agent, n.System.Type, map[bool]string{true: "prompt", false: "runtime"}[s.field == "prompt"])
		}
	}
	if rt == nil {
		rt = &flow.Runtime{}
	}
	var value any = s.value
	old := ""
	switch s.field {
	case "backend":
		if !slices.Contains(validate.BackendIDs, s.value) {
			return flow.Op{}, "", forkErr("--set %s: %q is not a backend (%s)", s.raw, s.value, strings.Join(validate.BackendIDs, ", "))
		}
		if p.parent.DryRun {
			return flow.Op{}, "", forkErr("--set %s: run %s is a dry run, and so are its forks: every agent uses the dry-run backend", s.raw, p.parent.RunID)
		}
		old = rt.BackendID
	case "model":
		old = rt.Model
	case "prompt":
		old = oneLine(instructions)
	case "command":
		value, old = strings.Fields(s.value), strings.Join(rt.Command, " ")
	}
	b, err := json.Marshal(value)
	if err != nil {
		return flow.Op{}, "", err
	}
	return flow.Op{Op: "set", Path: base + "/" + setFields[s.field], Value: b}, old, nil
}

// keepOverride writes the parent's run-wide backend into every agent the changes leave alone.
func (p *ForkPlan) keepOverride(f *flow.Flow, changed map[string]string) []flow.Op {
	var ops []flow.Op
	b, _ := json.Marshal(p.parent.Backend)
	add := func(path string) {
		if _, ok := changed[path+"/runtime/backendId"]; !ok {
			ops = append(ops, flow.Op{Op: "set", Path: path + "/runtime/backendId", Value: b})
		}
	}
	for _, a := range f.Agents {
		add(a.Path)
	}
	for _, s := range f.SystemNodes {
		if s.Runtime != nil {
			add(s.Path)
		}
	}
	return ops
}

// checkChanged validates the fork's flow; its errors name the --set that caused them where
// one did, else the flow file's line.
func (p *ForkPlan) checkChanged(paths map[string]string) error {
	ds := validate.Flow(p.flow, validate.Workspace{Root: p.workspace})
	var msgs []string
	for _, d := range ds {
		if d.Severity != diag.Error {
			continue
		}
		raw := ""
		for path, r := range paths {
			if d.Path == path || strings.HasPrefix(d.Path, path+"/") || strings.HasPrefix(path, d.Path+"/") && d.Path != "" {
				raw = r
			}
		}
		if raw != "" {
			msgs = append(msgs, fmt.Sprintf("--set %s: %s", raw, d.Message))
		} else {
			msgs = append(msgs, fmt.Sprintf("%s line %d (with the --set changes): %s", p.FlowFile, d.Range.Start.Line, d.Message))
		}
	}
	if len(msgs) > 0 {
		return forkErr("the changed flow does not validate:\n  %s", strings.Join(msgs, "\n  "))
	}
	return nil
}

func agentIDs(f *flow.Flow) []string {
	var ids []string
	for _, a := range f.Agents {
		ids = append(ids, a.ID)
	}
	for _, s := range f.SystemNodes {
		if s.Runtime != nil {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return truncate(s, 60)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
