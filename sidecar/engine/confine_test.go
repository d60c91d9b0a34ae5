//go:build linux

package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

// confinedFlow is a worker (coder, in its sandbox) and a reviewer, both command agents.
func confinedFlow(worker, workerExtra, reviewer string) string {
	return `version: 0.2
description: a confined worker
agents:
  - {id: coder, role: worker, runtime: {backendId: command, command: [bash, ` + worker + `]` + workerExtra + `}}
  - {id: rev, role: reviewer, runtime: {backendId: command, command: [bash, ` + reviewer + `]}}
interactions:
  - id: i1
    patternId: role_play_pair
    edges:
      - source: coder
        target: rev
        data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}
`
}

// A run's command worker, confined by default, is refused a write into the workspace root,
// into another agent's sandbox, into $HOME/.ssh and /etc, and the read of a key under HOME;
// none of those files exists afterwards, the log names each refused path, and its write in
// work/ still becomes a proposal.
func TestRunConfinesAWorker(t *testing.T) {
	confinetest.Landlock(t)
	dir := t.TempDir()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_test"), []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	etc := fmt.Sprintf("/etc/agentcanvas-engine-confine-%d", os.Getpid())
	t.Cleanup(func() { os.Remove(etc) })
	worker := script(t, dir, "worker.sh", `cat > /dev/null
ws=$(cd "$AGENTCANVAS_SANDBOX/../../../../.." && pwd)
echo x > "$ws/root.txt"
echo x > "$ws/.agentcanvas/sandboxes/run_old/other/work/planted.txt"
echo x > "$HOME/.ssh/x"
echo x > `+etc+`
cat "$HOME/.ssh/id_test"
echo "$TMPDIR" > result.txt
cat <<EOH
did it

HANDOFF
Context:        confined
Goal:           write result.txt
DoD:            result.txt exists
SandboxWorkDir: .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/coder/work
ProposalJson:   .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/coder/proposal/proposal.json
ChangedFiles:
  - result.txt
Tests:
  - (none)
Next:
  - Orchestrator: review
EOH
`)
	reviewer := script(t, dir, "reviewer.sh", "cat > /dev/null; echo 'ANSWER: fine'\n")
	ws, f := workspace(t, confinedFlow(worker, "", reviewer))
	other := filepath.Join(ws, ".agentcanvas", "sandboxes", "run_old", "other", "work")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	t.Setenv("HOME", home) // the agent's HOME comes from the engine's own environment
	out, err := Run(context.Background(), f, Options{Workspace: ws, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	for _, p := range []string{filepath.Join(ws, "root.txt"), filepath.Join(other, "planted.txt"), filepath.Join(home, ".ssh", "x"), etc} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists: the confined worker wrote it", p)
		}
	}
	var denied []string
	for _, e := range rec.events("access_denied") {
		if fld(e, "agent") != "coder" {
			t.Errorf("access_denied of %v", fld(e, "agent"))
		}
		denied = append(denied, str(fld(e, "path")))
	}
	named := []string{filepath.Join(ws, "root.txt"), filepath.Join(other, "planted.txt"), filepath.Join(home, ".ssh", "x"), etc, filepath.Join(home, ".ssh", "id_test")}
	if strings.HasPrefix(runtime.WorldStatus(), "a world") {
		named = named[:1:1] // in a world, the others are not there (ENOENT) or read-only without a name
		named = append(named, etc)
	}
	for _, p := range named {
		if !slices.Contains(denied, p) {
			t.Errorf("the log names no refused access to %s; it names %q", p, denied)
		}
	}
	for _, e := range rec.events("run_started") {
		if c := str(fld(e, "confinement")); !strings.HasPrefix(c, "Landlock ABI") {
			t.Errorf("run_started confinement %q", c)
		}
	}
	if len(out.Proposals) != 1 {
		t.Fatalf("proposals %v, want the worker's", out.Proposals)
	}
	pr, err := proposal.Load(ws, out.Proposals[0])
	if err != nil {
		t.Fatal(err)
	}
	if cf := pr.Proposal.ChangedFiles; len(cf) != 1 || cf[0].Path != "result.txt" {
		t.Errorf("the proposal changes %+v, want result.txt only", cf)
	}
	// The worker's private TMPDIR, which it named in result.txt, is gone with the run.
	tmp, err := os.ReadFile(filepath.Join(pr.AgentDir, "work", "result.txt"))
	if err != nil || !strings.HasPrefix(string(tmp), os.TempDir()) {
		t.Fatalf("result.txt %q, %v", tmp, err)
	}
	if _, err := os.Stat(strings.TrimSpace(string(tmp))); !os.IsNotExist(err) {
		t.Errorf("the worker's TMPDIR %s outlived the run (%v)", tmp, err)
	}
}

// runtime.network none reaches the agent: its TCP connect to a loopback listener is refused,
// and the listener sees nothing.
func TestRunNetworkNone(t *testing.T) {
	if confinetest.Landlock(t) < 4 {
		t.Skip("this kernel's Landlock cannot restrict TCP")
	}
	port, accepted := confinetest.Listener(t)
	dir := t.TempDir()
	worker := script(t, dir, "worker.sh", "cat > /dev/null; if exec 3<>/dev/tcp/127.0.0.1/"+port+"; then echo 'ANSWER: CONNECTED'; else echo 'ANSWER: REFUSED'; fi\n")
	reviewer := script(t, dir, "reviewer.sh", "cat > /dev/null; echo 'ANSWER: fine'\n")
	ws, f := workspace(t, confinedFlow(worker, ", network: none", reviewer))
	rec := &recorder{}
	if _, err := Run(context.Background(), f, Options{Workspace: ws, Sink: rec.sink}); err != nil {
		t.Fatal(err)
	}
	steps := rec.events("step")
	if len(steps) == 0 || !strings.Contains(str(fld(steps[0], "note")), "REFUSED") {
		t.Errorf("the worker's reply: %v", steps)
	}
	select {
	case <-accepted:
		t.Error("an agent with network none connected")
	default:
	}
}

// On a kernel without Landlock (simulated): required refuses to start the run, before any
// log or checkpoint is written; auto runs it after one warning; a dry run needs no
// confinement, so even required runs it.
func TestRunWithoutLandlock(t *testing.T) {
	t.Setenv(confine.NoLandlockEnv, "1")
	dir := t.TempDir()
	worker := script(t, dir, "worker.sh", "cat > /dev/null; echo 'ANSWER: done'\n")
	ws, f := workspace(t, confinedFlow(worker, "", worker))
	required := func() Limits { return Limits{Confine: confine.ModeRequired, ConfineFrom: "agentcanvas.confinement"} }
	_, err := Run(context.Background(), f, Options{Workspace: ws, Limits: required})
	if !errors.Is(err, ErrConfinementUnavailable) || !strings.Contains(err.Error(), "agentcanvas.confinement is required") || !strings.Contains(err.Error(), confine.NoLandlockEnv) {
		t.Fatalf("required without Landlock: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas")); !os.IsNotExist(err) {
		t.Errorf("a refused run left .agentcanvas behind (%v)", err)
	}
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Workspace: ws, Sink: rec.sink})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("auto: %v %+v", err, out)
	}
	var warned []string
	for _, e := range rec.events("warning") {
		if m := str(fld(e, "message")); strings.Contains(m, "unconfined") {
			warned = append(warned, m)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "agents run unconfined") {
		t.Errorf("auto warnings %q, want one saying agents run unconfined", warned)
	}
	if out, err := Run(context.Background(), f, Options{Workspace: ws, DryRun: true, Limits: required}); err != nil || out.Status != StatusCompleted {
		t.Errorf("a required dry run: %v %+v", err, out)
	}
}

// A flow of dry-run agents run with another backend (run --backend claude, the editor's pick)
// starts agent processes: its confinement is reported, and required is enforced, as for any.
func TestSpawnsProcessesWithABackendOverride(t *testing.T) {
	src := "version: \"0.2\"\nagents:\n  - {id: a, role: worker, runtime: {backendId: dry-run}}\ninteractions: []\n"
	f := flow.Parse("f.yaml", []byte(src))
	for _, c := range []struct {
		o    Options
		want bool
	}{
		{Options{}, false},
		{Options{Backend: "auto"}, false},
		{Options{Backend: "claude"}, true},
		{Options{Backend: "claude", DryRun: true}, false},
		{Options{Backend: runtime.BackendDryRun}, false},
	} {
		if got := spawnsProcesses(f, c.o); got != c.want {
			t.Errorf("backend %q dry-run %v: %v, want %v", c.o.Backend, c.o.DryRun, got, c.want)
		}
	}
}

// disable-model-invocation is a gate, not a hint (spec §7.2): a workspace agent, confined,
// that tries to read a disabled skill's SKILL.md and the files beside it is refused, by
// relative and absolute path and through a link it made; an enabled skill stays readable.
// A person's invocation of the skill is the one run in which it is not hidden.
func TestDisabledSkillIsNotReadable(t *testing.T) {
	confinetest.Landlock(t)
	dir := t.TempDir()
	agent := script(t, dir, "agent.sh", `cat >/dev/null
cat .agentcanvas/skills/release-notes/SKILL.md 2>&1
cat "$PWD/.agentcanvas/skills/release-notes/steps.md" 2>&1
ln -s "$PWD/.agentcanvas/skills/release-notes" "$TMPDIR/via" 2>/dev/null; cat "$TMPDIR/via/SKILL.md" 2>&1
cat .agentcanvas/skills/notes/SKILL.md 2>&1
echo "ANSWER: read"
`)
	ws, f := workspace(t, strings.ReplaceAll(oneAgentFlow, "AGENT", agent))
	writeSkill(t, ws, "release-notes", releaseNotes)
	os.WriteFile(filepath.Join(ws, ".agentcanvas", "skills", "release-notes", "steps.md"), []byte("STEP ONE: tag the release\n"), 0o644)
	writeSkill(t, ws, "notes", "---\nname: notes\ndescription: Take notes\n---\n\nNOTES BODY: keep notes short.\n")
	out, err := Run(context.Background(), f, Options{Workspace: ws, Limits: func() Limits { return Limits{Confine: confine.ModeRequired} }})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted {
		t.Fatalf("run %s: %s", out.Status, out.Reason)
	}
	res := out.Interactions[0].Result
	if strings.Contains(res, "List every change") || strings.Contains(res, "STEP ONE") {
		t.Fatalf("the agent read the disabled skill:\n%s", res)
	}
	if !strings.Contains(res, "NOTES BODY") {
		t.Errorf("the enabled skill was not readable:\n%s", res)
	}
	// Landlock refuses it (EACCES); in a world of the agent's own it is not there at all.
	if !strings.Contains(res, "Permission denied") && !strings.Contains(res, "No such file") {
		t.Errorf("no refusal in:\n%s", res)
	}
	// Invoked by a person, the skill's own run does not hide it.
	inv, err := WriteSkillFlow(ws, NewRunID(time.Now()), SkillInvocation{Name: "release-notes", Backend: "dry-run"})
	if err != nil {
		t.Fatal(err)
	}
	if got := invokedSkill(inv); got != "release-notes" {
		t.Errorf("invoked %q", got)
	}
}
