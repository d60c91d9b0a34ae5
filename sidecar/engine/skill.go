package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/skill"
)

// SkillInvocation is a person invoking a skill of .agentcanvas/skills/ (spec §7.2): one
// agent follows the skill's SKILL.md with the person's arguments, in a sandbox holding Files,
// and what it changes comes back as a proposal. A person may invoke a skill marked
// disable-model-invocation (that flag only keeps models from choosing it themselves), and
// user-invocable only decides whether the editor's menu offers it.
type SkillInvocation struct {
	// Name is the skill's folder under .agentcanvas/skills/.
	Name string `json:"name"`
	// Arguments are what the person asked for, given to the agent with the instructions.
	Arguments string `json:"arguments,omitempty"`
	// Files are the workspace-relative files the agent's sandbox receives.
	Files []string `json:"files,omitempty"`
	// Backend runs the agent (auto, claude, codex, gemini, command, dry-run; default auto).
	Backend string `json:"backend,omitempty"`
	// Command is the argv of a command agent (Backend command).
	Command []string `json:"command,omitempty"`
}

// ReadSkill reads and checks .agentcanvas/skills/<name>/SKILL.md inside the workspace, as the
// validator does, and that it has instructions to follow. Errors name the file.
func ReadSkill(workspace, name string) (*skill.Skill, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	s, err := skill.Load(root, name)
	if err != nil {
		return nil, err
	}
	if s.Instructions == "" {
		return nil, fmt.Errorf("skill %q: %s has no instructions after its frontmatter; write what the skill does there", name, skill.File(name))
	}
	return s, nil
}

// skillTimeoutMS bounds a skill run (the engine enforces it like any timeout_ms).
const skillTimeoutMS = 30 * 60 * 1000

// SkillFlowFile is where the flow of a skill run is written: in the run's own folder, so the
// run can be resumed like any other and the flow it ran can be read afterwards.
func SkillFlowFile(workspace, runID, skill string) string {
	return filepath.Join(workspace, RunsDir, runID, "skill-"+skill+".yaml")
}

// WriteSkillFlow writes the flow that carries out inv as run runID and returns it loaded. The
// flow is P20 with the person as the bridge's outside caller: a bridge node ("you") hands the
// request to one worker whose instructions are the skill's. Files are checked like any
// agent's files before anything is written.
func WriteSkillFlow(workspace, runID string, inv SkillInvocation) (*flow.Flow, error) {
	if err := checkRunID(runID); err != nil {
		return nil, err
	}
	sk, err := ReadSkill(workspace, inv.Name)
	if err != nil {
		return nil, err
	}
	files := make([]string, 0, len(inv.Files))
	for _, f := range inv.Files {
		clean, err := safepath.Clean(f, safepath.Rules{})
		if err != nil {
			return nil, fmt.Errorf("skill %s: file %w", inv.Name, err)
		}
		files = append(files, clean)
	}
	backend := inv.Backend
	if backend == "" {
		backend = "auto"
	}
	task := strings.TrimSpace(inv.Arguments)
	if task == "" {
		task = "Carry out the skill " + sk.Name + " as its instructions say."
	}
	runtime := map[string]any{"kind": "cli", "backendId": backend, "cwdMode": "agentHome"}
	if len(inv.Command) > 0 {
		runtime["command"] = inv.Command
	}
	agent := map[string]any{
		"id":           "skill",
		"name":         sk.Name,
		"role":         "worker",
		"instructions": sk.Instructions,
		"files":        files,
		"runtime":      runtime,
	}
	if sk.Description != "" {
		agent["description"] = sk.Description
	}
	doc := map[string]any{
		"version":     "0.2",
		"name":        "Skill " + sk.Name,
		"description": task,
		"agents":      []any{agent},
		"systemNodes": []any{map[string]any{"id": "you", "type": "bridge", "name": "You"}},
		"interactions": []any{map[string]any{
			"id":        "invoke",
			"patternId": "protocol_bridge",
			"edges": []any{map[string]any{
				"source": "you",
				"target": "skill",
				"data": map[string]any{
					"termination": map[string]any{"type": "timeout_ms", "ms": skillTimeoutMS},
					"params":      map[string]any{"protocol": protocolPerson, "skill": sk.Name, "timeout_ms": skillTimeoutMS, "rate_limit_per_min": 10},
				},
			}},
		}},
	}
	body, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	src := append([]byte("# Written by AgentCanvas for one invocation of the skill "+sk.Name+" (.agentcanvas/skills/"+sk.Name+"/SKILL.md).\n"), body...)
	name := "skill-" + sk.Name + ".yaml"
	if err := writeRunFile(workspace, runID, name, src, true); err != nil {
		return nil, err
	}
	return flow.Parse(SkillFlowFile(workspace, runID, sk.Name), src), nil
}

// hiddenSkills are the folders of the workspace's skills marked disable-model-invocation,
// absolute: no agent of the run may read them (its confinement leaves them out, as other
// agents' sandboxes), so a model cannot follow such a skill on its own; only the skill a
// person invoked in this run (params.skill of its flow) stays readable. Read once a run.
func (r *run) hiddenSkills() []string {
	r.hiddenOnce.Do(func() {
		root, err := os.OpenRoot(r.o.Workspace)
		if err != nil {
			return
		}
		defer root.Close()
		ents, err := fs.ReadDir(root.FS(), SkillsDir)
		if err != nil {
			return
		}
		invoked := invokedSkill(r.f)
		for _, e := range ents {
			if !e.IsDir() || e.Name() == invoked {
				continue
			}
			if s, err := skill.Load(root, e.Name()); err == nil && s.DisableModelInvocation {
				r.hidden = append(r.hidden, filepath.Join(r.o.Workspace, filepath.FromSlash(SkillsDir), e.Name()))
			}
		}
		if len(r.hidden) > 0 && (r.limits().confineMode() == confine.ModeOff || !r.confined.Available()) && spawnsProcesses(r.f, r.o) {
			r.emit("", "", "warning", map[string]any{"message": fmt.Sprintf("%d skill(s) marked disable-model-invocation are in the workspace, and agents run unconfined: nothing keeps an agent that works in the workspace from reading them (%s)", len(r.hidden), SkillsDir)})
		}
	})
	return r.hidden
}

// SkillsDir is where a workspace keeps its skills.
const SkillsDir = ".agentcanvas/skills"

// invokedSkill is the skill a person invoked, for a skill run's flow (WriteSkillFlow); "".
func invokedSkill(f *flow.Flow) string {
	for _, in := range f.Interactions {
		if _, params := in.Settings(); str(params["protocol"]) == protocolPerson {
			return str(params["skill"])
		}
	}
	return ""
}
