package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

func TestParseAutoApply(t *testing.T) {
	for _, v := range []string{"off", "whenClean", "flow"} {
		if a, err := ParseAutoApply(v); err != nil || string(a) != v {
			t.Errorf("%s: %v %v", v, a, err)
		}
	}
	if _, err := ParseAutoApply("always"); err == nil || !strings.Contains(err.Error(), `"always" is not one of [off whenClean flow]`) {
		t.Errorf("always: %v", err)
	}
}

// Each reason the person's limit or the check holds back a proposal the flow would apply.
func TestAutoApplyHeld(t *testing.T) {
	clean := &proposal.Result{}
	moved := &proposal.Result{Warnings: []string{"the workspace HEAD (b) differs from the proposal's base.gitHead (a)"}}
	refused := &proposal.Result{Problems: []proposal.Problem{{Path: "x", Reason: "outside the allowed folders [src]"}}}
	for _, c := range []struct {
		limits Limits
		gate   bool
		res    *proposal.Result
		err    error
		want   string
	}{
		{Limits{}, true, clean, nil, ""},
		{Limits{}, true, moved, nil, ""},
		{Limits{AutoApply: AutoApplyFlow}, true, moved, nil, ""},
		{Limits{AutoApply: AutoApplyWhenClean}, true, clean, nil, ""},
		{Limits{AutoApply: AutoApplyWhenClean, AutoApplyFrom: "agentcanvas.autoApply"}, true, moved, nil,
			"agentcanvas.autoApply is whenClean and the check warned: the workspace HEAD (b) differs from the proposal's base.gitHead (a)"},
		{Limits{AutoApply: AutoApplyOff, AutoApplyFrom: "--auto-apply"}, true, clean, nil, "--auto-apply is off"},
		{Limits{AutoApply: AutoApplyOff}, true, clean, nil, "auto-apply is off"},
		{Limits{}, false, clean, nil, "the quality gate did not pass"},
		{Limits{}, true, refused, errors.New("refused"), "the proposal does not apply cleanly"},
	} {
		if got := c.limits.autoApplyHeld(c.gate, c.res, c.err); got != c.want {
			t.Errorf("%+v gate=%v: %q, want %q", c.limits, c.gate, got, c.want)
		}
	}
}

// A manager_worker run whose flow asks for auto-apply: the person's limit decides whether the
// workers' proposals reach the workspace, and the folder rules are checked on the way.
func TestRunHonoursLimits(t *testing.T) {
	for _, c := range []struct {
		name    string
		limits  *Limits
		applied bool
		held    string
		problem string
		edit    func(sg *pattern.Subgraph)
	}{
		{name: "no limits: as the flow says", limits: nil, applied: true},
		{name: "flow", limits: &Limits{AutoApply: AutoApplyFlow}, applied: true},
		{name: "whenClean on the same HEAD", limits: &Limits{AutoApply: AutoApplyWhenClean}, applied: true},
		{name: "off", limits: &Limits{AutoApply: AutoApplyOff, AutoApplyFrom: "agentcanvas.autoApply"}, held: "agentcanvas.autoApply is off"},
		{name: "the gate fails", edit: setParam("test_command", []any{"false"}), held: "the quality gate did not pass"},
		{name: "outside the allowed folders", limits: &Limits{Rules: safepath.Rules{Allowed: []string{"src"}, AllowedFrom: "agentcanvas.allowedFolders"}},
			held: "the proposal does not apply cleanly", problem: "outside the allowed folders [src] (agentcanvas.allowedFolders)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := gitWorkspace(t)
			t.Setenv("AC_DIR", t.TempDir())
			f := patternFlow(t, ws, "limits", flowSpec{pattern: "manager_worker", runtime: scripted(t), description: "the task", autoApply: true, edit: c.edit})
			rec := &recorder{}
			o := Options{Limits: recording, Workspace: ws, Sink: rec.sink}
			if c.limits != nil {
				o.Limits = func() Limits { return *c.limits }
			}
			out, err := Run(context.Background(), f, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Proposals) != 2 || out.Interactions[0].Status != StatusCompleted {
				t.Fatalf("proposals %v", out.Proposals)
			}
			_, statErr := os.Stat(filepath.Join(ws, "work-worker_1.txt"))
			if applied := statErr == nil; applied != c.applied {
				t.Errorf("applied = %v, want %v", applied, c.applied)
			}
			// Reviewed at the handoff, with the rules; decided at the interaction's end.
			reviewed := rec.events("proposal_reviewed")
			if len(reviewed) != 2 {
				t.Fatalf("reviewed: %+v", reviewed)
			}
			for _, e := range reviewed {
				if e.Fields["applicable"] != (c.problem == "") || c.problem != "" && !strings.Contains(fmtAny(e.Fields["problems"]), c.problem) {
					t.Errorf("proposal_reviewed %v: want the problem %q", e.Fields, c.problem)
				}
			}
			held := rec.events("proposal_held")
			if c.held == "" && len(held) != 0 || c.held != "" && len(held) != 2 {
				t.Fatalf("proposal_held: %+v", held)
			}
			for _, e := range held {
				if e.Fields["reason"] != c.held {
					t.Errorf("held because %q, want %q", e.Fields["reason"], c.held)
				}
			}
			if n := len(rec.events("proposal_applied")); (n == 2) != c.applied || (n == 0) == c.applied {
				t.Errorf("%d proposal_applied events reached the sink", n)
			}
		})
	}
}

func fmtAny(v any) string {
	b := &strings.Builder{}
	if ps, ok := v.([]proposal.Problem); ok {
		for _, p := range ps {
			b.WriteString(p.Path + ": " + p.Reason + "\n")
		}
	}
	return b.String()
}

// An agent's files outside the allowed folders refuse the run before anything is created,
// with a diagnostic on the files entry naming the setting.
func TestRunRefusesFilesOutsideTheAllowedFolders(t *testing.T) {
	ws := gitWorkspace(t)
	t.Setenv("AC_DIR", t.TempDir())
	f := patternFlow(t, ws, "outside", flowSpec{pattern: "manager_worker", runtime: scripted(t), description: "the task", files: []string{"README.md"}})
	lim := Limits{Rules: safepath.Rules{Allowed: []string{"src"}, AllowedFrom: "agentcanvas.allowedFolders"}}
	_, err := Run(context.Background(), f, Options{Workspace: ws, Limits: func() Limits { return lim }})
	var inv *InvalidFlowError
	if !errors.As(err, &inv) {
		t.Fatalf("want an invalid flow, got %v", err)
	}
	found := false
	for _, d := range inv.Diagnostics {
		if d.Severity == diag.Error && strings.HasSuffix(d.Path, "/files/0") && strings.Contains(d.Message, `agent file "README.md" is refused: outside the allowed folders [src] (agentcanvas.allowedFolders)`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no diagnostic naming the file and the setting: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas", "sandboxes")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sandboxes were created: %v", err)
	}
}

// The manager's review rejects one worker's handoff: that proposal is held, saying who
// rejected it and why, and the accepted one is applied.
func TestAutoApplyHoldsARejectedHandoff(t *testing.T) {
	ws := gitWorkspace(t)
	dir := t.TempDir()
	t.Setenv("AC_DIR", dir)
	if err := os.WriteFile(filepath.Join(dir, "reject"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f := patternFlow(t, ws, "reject", flowSpec{pattern: "manager_worker", runtime: scripted(t), description: "the task", autoApply: true})
	rec := &recorder{}
	if _, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Sink: rec.sink}); err != nil {
		t.Fatal(err)
	}
	held := rec.events("proposal_held")
	if len(held) != 1 || held[0].Fields["agent"] != "worker_2" || held[0].Fields["reason"] != "rejected in review by manager: the edit is wrong" {
		t.Fatalf("proposal_held: %+v", held)
	}
	if _, err := os.Stat(filepath.Join(ws, "work-worker_2.txt")); !os.IsNotExist(err) {
		t.Errorf("the rejected worker's edit reached the workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "work-worker_1.txt")); err != nil {
		t.Errorf("the accepted worker's edit was not applied: %v", err)
	}
}
