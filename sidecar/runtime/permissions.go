package runtime

import (
	"fmt"
	"strings"
)

// Each CLI's permission setting for a turn: the flow's, else the role default (Spec.Access),
// else nothing (the CLI's own default). Values checked on this machine with the pinned CLIs
// (docs/agents.md): in print mode Claude Code denies every edit unless the mode is
// acceptEdits, auto or bypassPermissions; plan mode also tells the model to write a plan and
// call ExitPlanMode, so read-only roles get dontAsk (denies what is not allowed, never asks);
// Gemini CLI's default approval mode offers a headless run no edit or shell tool at all.

// claudePermissionModes are the values claude --permission-mode takes (2.1.330 lists
// acceptEdits, auto, bypassPermissions, manual, dontAsk and plan, and still takes default).
var claudePermissionModes = []string{"default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto", "manual"}

// codexSandboxModes are codex --sandbox's values.
var codexSandboxModes = []string{"read-only", "workspace-write", "danger-full-access"}

// geminiApprovalModes are gemini --approval-mode's values.
var geminiApprovalModes = []string{"default", "auto_edit", "yolo", "plan"}

func claudeMode(s *Spec) string {
	if s.PermissionMode != "" {
		return s.PermissionMode
	}
	switch s.Access {
	case AccessEdit:
		return "acceptEdits"
	case AccessReadOnly:
		return "dontAsk"
	}
	return ""
}

func codexSandbox(s *Spec) string {
	if s.CodexSandbox != "" {
		return s.CodexSandbox
	}
	if s.Access == AccessReadOnly {
		return "read-only"
	}
	return "workspace-write"
}

func geminiApproval(s *Spec) string {
	if s.GeminiApprovalMode != "" {
		return s.GeminiApprovalMode
	}
	switch s.Access {
	case AccessEdit:
		return "auto_edit"
	case AccessReadOnly:
		return "default"
	}
	return ""
}

// checkMode refuses a value the CLI does not take, naming the flow field.
func checkMode(s *Spec, cli, field, value string, valid []string) error {
	for _, v := range valid {
		if v == value {
			return nil
		}
	}
	return fmt.Errorf("runtime: agent %s: %s: %s %q is not one of %s", s.AgentID, cli, field, value, strings.Join(valid, ", "))
}

// denial is a tool call the CLI refused because of its permission settings.
type denial struct {
	cli     string
	tool    string
	path    string // the file it was for, when known
	command string // the shell command, when it was one
	message string // the CLI's own words
	mode    string // the setting in force ("" when the CLI's default)
	// field is the flow field that would allow the call, fix what to set it to ("" when no
	// setting allows it, e.g. a path outside the working folder).
	field, fix string
	outside    bool // the path is outside the agent's working folder
}

// event is the warning the agent's log shows.
func (d denial) event() Event {
	var b strings.Builder
	fmt.Fprintf(&b, "permission denied: %s refused %s", d.cli, d.tool)
	switch {
	case d.path != "":
		fmt.Fprintf(&b, " on %s", d.path)
	case d.command != "":
		fmt.Fprintf(&b, " (%s)", truncate(d.command, 200))
	}
	if d.mode != "" {
		fmt.Fprintf(&b, " under %s", d.mode)
	}
	if d.message != "" {
		fmt.Fprintf(&b, ": %s", strings.TrimRight(firstLine(d.message), "."))
	}
	switch {
	case d.outside:
		b.WriteString(". The path is outside the agent's working folder, which is all it may edit: give the agent the file in its files list")
		if d.field != "" {
			fmt.Fprintf(&b, " (or set %s: %s, which lifts the limit)", d.field, d.fix)
		}
	case d.field != "":
		fmt.Fprintf(&b, ". To allow it, set %s: %s on this agent", d.field, d.fix)
	}
	field := d.field
	if d.outside {
		field = "files"
	}
	ev := Event{Kind: EventWarning, Tool: d.tool, Path: d.path, Field: field, Reason: b.String()}
	if d.command != "" {
		ev.Input = map[string]any{"command": d.command}
	}
	return ev
}

// toolTarget reads the file and the shell command out of a tool call's input, whatever the
// CLI calls them.
func toolTarget(input map[string]any) (path, command string) {
	for _, k := range []string{"file_path", "absolute_path", "notebook_path", "path", "dir_path"} {
		if v, ok := input[k].(string); ok && v != "" {
			path = v
			break
		}
	}
	for _, k := range []string{"command", "cmd"} {
		if v, ok := input[k].(string); ok && v != "" {
			command = v
			break
		}
	}
	return path, command
}
