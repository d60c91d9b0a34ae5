//go:build unix

package engine

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
	"github.com/agentcanvas/agentcanvas/sidecar/snapshot"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

// teamScript is a deterministic team: the lead plans and reviews; each worker's k-th turn
// appends a line to notes.txt, leaves one file named for k (removing the last), toggles
// notes.txt's executable bit and counts its turns in .count. So what a worker's sandbox holds
// after k turns is known without looking (teamFiles), and every agent reports its usage.
const teamScript = `prompt=$(cat)
echo 'USAGE: {"inputTokens": 100, "outputTokens": 10, "costUsd": 0.001}'
case "$AGENTCANVAS_AGENT_ID" in
lead)
  if printf '%s' "$prompt" | grep -q "Review your team"; then echo "Reviewed."; echo "ACCEPT all"
  else echo "Planned."; echo "ASSIGN coder1: write notes"; echo "ASSIGN coder2: write notes"; fi ;;
*)
  k=$(( $(cat .count 2>/dev/null || echo 0) + 1 ))
  echo $k > .count
  echo "$AGENTCANVAS_AGENT_ID turn $k" >> notes.txt
  rm -f "$AGENTCANVAS_AGENT_ID"-*.txt
  echo "made at turn $k" > "$AGENTCANVAS_AGENT_ID-$k.txt"
  if [ $((k % 2)) = 0 ]; then chmod +x notes.txt; else chmod -x notes.txt; fi
  echo "Turn $k of $AGENTCANVAS_AGENT_ID done."
  ;;
esac
`

const teamFlow = `version: 0.2
description: Keep notes
agents:
  - {id: lead, role: manager, runtime: {backendId: command, command: [bash, agents/team.sh]}}
  - {id: coder1, role: worker, files: [notes.txt], runtime: {backendId: command, command: [bash, agents/team.sh]}}
  - {id: coder2, role: worker, files: [notes.txt], runtime: {backendId: command, command: [bash, agents/team.sh]}}
interactions:
  - id: build
    patternId: manager_worker
    edges:
      - {source: lead, target: coder1, data: {topology: manager_worker, termination: {type: max_rounds, rounds: 2}}}
      - {source: lead, target: coder2, data: {topology: manager_worker, termination: {type: max_rounds, rounds: 2}}}
  - id: review
    patternId: role_play_pair
    dependsOn: [build]
    edges:
      - {source: lead, target: coder2, data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}}
`

// teamWorkspace is a git workspace with the team's flow, script and notes.txt.
func teamWorkspace(t *testing.T) (string, *flow.Flow) {
	t.Helper()
	ws := gitWorkspace(t)
	for name, content := range map[string]string{"notes.txt": "notes\n", "agents/team.sh": teamScript, ".agentcanvas/flows/team.yaml": teamFlow} {
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(ws, ".agentcanvas", "flows", "team.yaml")
	return ws, flow.Parse(file, []byte(teamFlow))
}

// teamFiles is what a worker's work/ holds after k turns (path → content, "*" marking an
// executable), from the script alone.
func teamFiles(agent string, k int) map[string]string {
	notes := "notes\n"
	for i := 1; i <= k; i++ {
		notes += fmt.Sprintf("%s turn %d\n", agent, i)
	}
	name := "notes.txt"
	if k%2 == 0 {
		name += "*"
	}
	return map[string]string{name: notes, ".count": fmt.Sprintf("%d\n", k), fmt.Sprintf("%s-%d.txt", agent, k): fmt.Sprintf("made at turn %d\n", k)}
}

// dirFiles reads a folder as teamFiles writes it.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatalf("reading %s: %v", dir, err)
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		b, _ := os.ReadFile(p)
		if fi, _ := d.Info(); fi.Mode()&0o111 != 0 {
			rel += "*"
		}
		out[rel] = string(b)
		return nil
	})
	return out
}

func workDir(t *testing.T, ws, run, agent string) string {
	t.Helper()
	p, err := sandbox.PathsFor(ws, run, agent)
	if err != nil {
		t.Fatal(err)
	}
	return p.WorkDir
}

// outcomeOf is what two runs of the same deterministic team must agree on.
func outcomeOf(out *Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", out.Status, out.Reason)
	for _, in := range out.Interactions {
		fmt.Fprintf(&b, "%s %s %s rounds=%d result=%q\n", in.ID, in.Status, in.Reason, in.Rounds, in.Result)
	}
	fmt.Fprintf(&b, "messages=%v tokens=%d cost=%.4f proposals=%d\n", out.Metrics.MessagesByType, out.Spend.Tokens, out.Spend.CostUSD, len(out.Proposals))
	return b.String()
}

// repliesOf are a run's turns as agent: reply, in order.
func repliesOf(t *testing.T, ws, run string) []string {
	t.Helper()
	turns, err := transcript.Read(ws, run)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tn := range turns {
		out = append(out, tn.Agent+": "+tn.Reply)
	}
	sort.Strings(out) // the two workers' turns of a round end in either order
	return out
}

// A three-agent run forked at each of its turns: right after the fork is made, every worker's
// sandbox holds what the script had written by that turn, the fork's transcript and spend are
// the parent's up to it, and the interactions completed by then are kept; run on, each fork
// ends exactly as the parent did, with the same files, replies, messages and spend.
func TestForkAtEveryTurnOfACommandTeam(t *testing.T) {
	ws, f := teamWorkspace(t)
	ctx := context.Background()
	parent, err := Run(ctx, f, Options{Workspace: ws})
	if err != nil || parent.Status != StatusCompleted {
		t.Fatalf("parent run: %v %+v", err, parent)
	}
	turns, err := transcript.Read(ws, parent.RunID)
	if err != nil || len(turns) != 10 {
		t.Fatalf("parent's turns: %d %v", len(turns), err)
	}
	points, err := readForkPoints(ws, parent.RunID)
	if err != nil || len(points) != len(turns) {
		t.Fatalf("fork points: %d %v", len(points), err)
	}
	for n := 1; n <= len(turns); n++ {
		t.Run(fmt.Sprintf("turn%d", n), func(t *testing.T) {
			plan, r := forkMade(t, ws, parent.RunID, n)
			checkForkedState(t, ws, parent.RunID, plan.RunID, turns[:n], points[n])
			out := r.execute(ctx)
			if got, want := outcomeOf(out), outcomeOf(parent); got != want {
				t.Errorf("the fork ended otherwise than its parent:\n got %s\nwant %s", got, want)
			}
			for _, agent := range []string{"coder1", "coder2"} {
				if got, want := dirFiles(t, workDir(t, ws, plan.RunID, agent)), dirFiles(t, workDir(t, ws, parent.RunID, agent)); !reflect.DeepEqual(got, want) {
					t.Errorf("%s's files at the end: %v, the parent's %v", agent, got, want)
				}
			}
			if got, want := repliesOf(t, ws, plan.RunID), repliesOf(t, ws, parent.RunID); !reflect.DeepEqual(got, want) {
				t.Errorf("replies:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// checkForkedState checks a fork made from the end of the parent's last turn in turns.
func checkForkedState(t *testing.T, ws, parent, fork string, turns []transcript.Turn, at *forkPoint) {
	t.Helper()
	k := map[string]int{}
	for _, tn := range turns {
		k[tn.Agent]++
	}
	for _, agent := range []string{"coder1", "coder2"} {
		dir := workDir(t, ws, fork, agent)
		if k[agent] == 0 {
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s had not run, yet has a sandbox (%v)", agent, err)
			}
			continue
		}
		if got, want := dirFiles(t, dir), teamFiles(agent, k[agent]); !reflect.DeepEqual(got, want) {
			t.Errorf("%s after %d turns: %v, want %v", agent, k[agent], got, want)
		}
		in, _ := sandbox.PathsFor(ws, fork, agent)
		if got := dirFiles(t, in.InputDir); !reflect.DeepEqual(got, map[string]string{"notes.txt": "notes\n"}) {
			t.Errorf("%s's input/: %v", agent, got)
		}
	}
	got, err := transcript.Read(ws, fork)
	if err != nil || !reflect.DeepEqual(got, turns) {
		t.Errorf("the fork's transcript is not the parent's first %d turns (%v)", len(turns), err)
	}
	st, err := ReadState(ws, fork)
	if err != nil {
		t.Fatal(err)
	}
	if st.ForkOf == nil || st.ForkOf.RunID != parent || st.ForkOf.Turn != len(turns) {
		t.Errorf("forkOf: %+v", st.ForkOf)
	}
	if !reflect.DeepEqual(st.Spend, at.Spend) || !reflect.DeepEqual(st.Agents, at.AgentSpend) {
		t.Errorf("spend at the fork: %+v %+v, the parent's at the turn %+v %+v", st.Spend, st.Agents, at.Spend, at.AgentSpend)
	}
	var kept []string
	for _, oc := range st.Interactions {
		kept = append(kept, oc.ID+" "+oc.Status)
	}
	want := []string(nil)
	for _, oc := range at.Ended {
		want = append(want, oc.ID+" "+oc.Status)
	}
	if !reflect.DeepEqual(kept, want) {
		t.Errorf("kept interactions %v, ended at the turn %v", kept, want)
	}
}

// teamParent is a finished run of the team, in its workspace.
func teamParent(t *testing.T) (string, *Outcome) {
	t.Helper()
	ws, f := teamWorkspace(t)
	parent, err := Run(context.Background(), f, Options{Workspace: ws})
	if err != nil || parent.Status != StatusCompleted {
		t.Fatalf("parent: %v %+v", err, parent)
	}
	return ws, parent
}

// forkMade makes a fork of run at turn n on disk (not run), with the changes given.
func forkMade(t *testing.T, ws, run string, n int, set ...string) (*ForkPlan, *run) {
	t.Helper()
	plan, err := PlanFork(ws, ForkRequest{RunID: run, At: n, Set: set})
	if err != nil {
		t.Fatal(err)
	}
	r, err := plan.newRun(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.materialize(plan); err != nil {
		t.Fatal(err)
	}
	return plan, r
}

// Two forks of one run at the same turn share no file with each other, with their parent or
// with the snapshot store: every file is its own inode, so the workers' writes in place (the
// script appends to notes.txt) in one fork leave the other's and the parent's as they were.
func TestTwoForksDoNotShareWrites(t *testing.T) {
	ws, parent := teamParent(t)
	parentFiles := map[string]map[string]string{}
	for _, a := range []string{"coder1", "coder2"} {
		parentFiles[a] = dirFiles(t, workDir(t, ws, parent.RunID, a))
	}
	planA, ra := forkMade(t, ws, parent.RunID, 4)
	planB, rb := forkMade(t, ws, parent.RunID, 4)
	inodes := map[uint64]string{}
	for _, run := range []string{parent.RunID, planA.RunID, planB.RunID} {
		for _, a := range []string{"coder1", "coder2"} {
			filepath.WalkDir(workDir(t, ws, run, a), func(p string, d fs.DirEntry, err error) error {
				var st syscall.Stat_t
				if err != nil || d.IsDir() || syscall.Lstat(p, &st) != nil {
					return err
				}
				if other, ok := inodes[st.Ino]; ok || st.Nlink != 1 {
					t.Errorf("%s shares its inode with %s (%d links)", p, other, st.Nlink)
				}
				inodes[st.Ino] = p
				return nil
			})
		}
	}
	if out := ra.execute(context.Background()); out.Status != StatusCompleted {
		t.Fatalf("fork A: %+v", out)
	}
	for _, a := range []string{"coder1", "coder2"} {
		if got := dirFiles(t, workDir(t, ws, planB.RunID, a)); !reflect.DeepEqual(got, teamFiles(a, 1)) {
			t.Errorf("fork B's %s changed while fork A ran: %v", a, got)
		}
		if got := dirFiles(t, workDir(t, ws, parent.RunID, a)); !reflect.DeepEqual(got, parentFiles[a]) {
			t.Errorf("the parent's %s changed while fork A ran: %v", a, got)
		}
	}
	// The store still gives back what it kept at turn 4.
	s, err := snapshot.Open(ws, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pt := planB.restore["coder1"]
	again := filepath.Join(t.TempDir(), "again")
	if err := snapshot.Checkout(s, pt.Sandbox.Work, again, false, nil); err != nil || !reflect.DeepEqual(dirFiles(t, again), teamFiles("coder1", 1)) {
		t.Errorf("the store's copy of turn %d changed: %v", pt.Seq, err)
	}
	if out := rb.execute(context.Background()); out.Status != StatusCompleted || outcomeOf(out) != outcomeOf(parent) {
		t.Fatalf("fork B: %s", outcomeOf(out))
	}
}

// A fork with another backend for one worker: its sandbox comes back as it was, the plan says
// its session is not resumed, and its next turns run on the new backend.
func TestForkWithAChangedBackend(t *testing.T) {
	ws, parent := teamParent(t)
	rec := &recorder{}
	plan, err := PlanFork(ws, ForkRequest{RunID: parent.RunID, At: 4, Set: []string{"agent.coder1.backend=dry-run"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Changes) != 1 || plan.Changes[0] != "coder1: backend command → dry-run" {
		t.Errorf("changes: %q", plan.Changes)
	}
	out, err := Fork(context.Background(), plan, Options{Sink: rec.sink})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("fork: %v %+v", err, out)
	}
	backends := map[string]string{}
	for _, e := range rec.events("agent_started") {
		backends[str(fld(e, "agent"))] += str(fld(e, "backend")) + " "
	}
	// Turns 1 to 4 are replayed (their events show the backend the fork's flow gives now);
	// coder1's second turn (the parent's turn 6 or 7) is its first on the new backend.
	if !strings.HasSuffix(backends["coder1"], "dry-run ") || strings.Contains(backends["coder2"], "dry-run") {
		t.Errorf("backends per turn: %v", backends)
	}
	work := dirFiles(t, workDir(t, ws, out.RunID, "coder1"))
	for p, c := range teamFiles("coder1", 1) {
		if work[p] != c {
			t.Errorf("coder1's %s after the fork: %q, want it as turn 1 left it (%q)", p, work[p], c)
		}
	}
	if len(work) <= 3 {
		t.Errorf("the dry-run backend changed nothing in coder1's sandbox: %v", work)
	}
	flowText, err := os.ReadFile(filepath.Join(ws, RunsDir, out.RunID, "team.yaml"))
	if err != nil || !strings.Contains(string(flowText), "backendId: dry-run") {
		t.Errorf("the fork's flow: %v\n%s", err, flowText)
	}
}

// Faults and bad input: a turn that does not exist, an unknown agent or key, a damaged snapshot,
// a fork of a run still going. Each refusal names what is wrong and writes nothing.
func TestForkRefusals(t *testing.T) {
	ws, parent := teamParent(t)
	before := runFolders(t, ws)
	for _, c := range []struct {
		req  ForkRequest
		want string
	}{
		{ForkRequest{RunID: parent.RunID, At: 11}, "has turns 1 to 10; there is no turn 11"},
		{ForkRequest{RunID: parent.RunID, At: 0}, "there is no turn 0"},
		{ForkRequest{RunID: "run_nope", At: 1}, "there is no run run_nope"},
		{ForkRequest{RunID: "../etc", At: 1}, "run id"},
		{ForkRequest{RunID: parent.RunID, At: 2, Set: []string{"agent.judge.model=x"}}, `the flow has no agent "judge" (its agents: lead, coder1, coder2)`},
		{ForkRequest{RunID: parent.RunID, At: 2, Set: []string{"agent.coder1.colour=red"}}, `no setting "colour"`},
		{ForkRequest{RunID: parent.RunID, At: 2, Set: []string{"agent.coder1.backend=gpt"}}, `"gpt" is not a backend`},
		{ForkRequest{RunID: parent.RunID, At: 2, Set: []string{"agent.coder1.backend=command", "agent.coder1.command=bash"}}, ""},
		{ForkRequest{RunID: parent.RunID, At: 2, Set: []string{"nonsense"}}, "write KEY=VALUE"},
	} {
		_, err := PlanFork(ws, c.req)
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.req, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want it to say %q", c.req, err, c.want)
		}
	}
	if after := runFolders(t, ws); !reflect.DeepEqual(before, after) {
		t.Errorf("a refused fork wrote something: %v → %v", before, after)
	}

	// A damaged object: the fork is refused naming the agent, the turn and the object, and
	// leaves nothing behind.
	packs := filepath.Join(ws, filepath.FromSlash(snapshot.Dir), "packs", parent.RunID+".pack")
	b, err := os.ReadFile(packs)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), "coder1 turn 1")
	b[i] ^= 0x20
	os.WriteFile(packs, b, 0o600)
	plan, err := PlanFork(ws, ForkRequest{RunID: parent.RunID, At: 4})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Fork(context.Background(), plan, Options{})
	if err == nil || !strings.Contains(err.Error(), "coder1's sandbox as turn") || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("fork from a damaged snapshot: %v", err)
	}
	if after := runFolders(t, ws); !reflect.DeepEqual(before, after) {
		t.Errorf("the refused fork left %v", after)
	}
}

// runFolders lists the runs' and sandboxes' folders of a workspace.
func runFolders(t *testing.T, ws string) []string {
	t.Helper()
	var out []string
	for _, d := range []string{RunsDir, sandbox.Dir} {
		es, _ := os.ReadDir(filepath.Join(ws, filepath.FromSlash(d)))
		for _, e := range es {
			out = append(out, d+"/"+e.Name())
		}
	}
	return out
}

// A fork of a run still going: the plan says so, the fork runs from the turn as it was kept,
// and the parent, blocked in a later turn meanwhile, goes on to its end untouched.
func TestForkOfARunningRun(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	agent := script(t, dir, "agent.sh", `cat > /dev/null
n=$(( $(cat "`+dir+`/count.$AGENTCANVAS_AGENT_ID" 2>/dev/null || echo 0) + 1 ))
echo $n > "`+dir+`/count.$AGENTCANVAS_AGENT_ID"
if [ "$AGENTCANVAS_AGENT_ID" = b ] && [ $n = 2 ]; then read x < "`+gate+`"; fi
echo "reply $n of $AGENTCANVAS_AGENT_ID"
`)
	rt := "runtime: {backendId: command, command: [bash, " + agent + "]}"
	ws, f := workspace(t, pairFlow("", rt, rt, 2))
	m := &Manager{Workspace: ws, Limits: recording}
	info, err := m.Start(f, StartParams{})
	if err != nil {
		t.Fatal(err)
	}
	for { // the parent's b is in its second turn, blocked on the gate, once turn 3 is kept
		if pts, _ := readForkPoints(ws, info.RunID); len(pts) >= 3 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	plan, err := PlanFork(ws, ForkRequest{RunID: info.RunID, At: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan.Limits, "\n"), "is still running") {
		t.Errorf("the plan does not say the parent is running: %q", plan.Limits)
	}
	out, err := Fork(context.Background(), plan, Options{Limits: recording})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("fork: %v %+v", err, out)
	}
	os.WriteFile(gate, []byte("go\n"), 0o600)
	if res, _ := m.Wait(info.RunID); res.Status != StatusCompleted {
		t.Fatalf("the parent after the fork: %+v", res)
	}
	if turns, _ := transcript.Read(ws, info.RunID); len(turns) != 4 {
		t.Errorf("the parent has %d turns, want 4", len(turns))
	}
}

// A run's fork points go when its transcript is pruned: they hold the same replies.
func TestForkPointsArePrunedWithTheTranscript(t *testing.T) {
	ws, parent := teamParent(t)
	old := filepath.Join(ws, RunsDir, "run_20200101-000000_aaaaaa")
	os.MkdirAll(old, 0o755)
	os.WriteFile(filepath.Join(old, ForkPointsFile), []byte("{}\n"), 0o600)
	f := flow.Parse(filepath.Join(ws, ".agentcanvas", "flows", "team.yaml"), []byte(teamFlow))
	if _, err := Run(context.Background(), f, Options{Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(old, ForkPointsFile)); !os.IsNotExist(err) {
		t.Errorf("the fork points of a run without its transcript were kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, RunsDir, parent.RunID, ForkPointsFile)); err != nil {
		t.Errorf("a run with its transcript lost its fork points: %v", err)
	}
}

// A flow changed since the parent ran: a turn the fork would replay whose agent the
// interaction no longer has is named among what cannot be restored.
func TestForkSaysWhatTheChangedFlowCannotReplay(t *testing.T) {
	ws, parent := teamParent(t)
	file := filepath.Join(ws, ".agentcanvas", "flows", "team.yaml")
	changed := strings.Replace(teamFlow, "      - {source: lead, target: coder2, data: {topology: manager_worker, termination: {type: max_rounds, rounds: 2}}}\n", "", 1)
	if changed == teamFlow {
		t.Fatal("the flow did not change")
	}
	os.WriteFile(file, []byte(changed), 0o644)
	plan, err := PlanFork(ws, ForkRequest{RunID: parent.RunID, At: 4})
	if err != nil {
		t.Fatal(err)
	}
	limits := strings.Join(plan.Limits, "\n")
	if !strings.Contains(limits, "(coder2 in build) cannot be replayed: the flow no longer has coder2 there") {
		t.Errorf("limits:\n%s", limits)
	}
}

// A fork of a resumed run, from a turn after the resume: the resume ran the unfinished
// interaction again from its start, so the fork replays that second run of it, never the turns
// the stop cut short. Here b's first turn was stopped, and the resume's a and b turns ran anew;
// forked after the resume's first turn of a, the fork runs b's turn live (it was not finished
// by then), and the fork ends as the resumed run did.
func TestForkOfAResumedRunReplaysTheResumesTurns(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	agent := script(t, dir, "agent.sh", `cat > /dev/null
n=$(( $(cat "`+dir+`/count.$AGENTCANVAS_AGENT_ID" 2>/dev/null || echo 0) + 1 ))
echo $n > "`+dir+`/count.$AGENTCANVAS_AGENT_ID"
if [ "$AGENTCANVAS_AGENT_ID" = b ]; then while [ ! -e "`+gate+`" ]; do sleep 0.05; done; fi
echo "reply of $AGENTCANVAS_AGENT_ID"
`)
	rt := "runtime: {backendId: command, command: [bash, " + agent + "]}"
	ws, f := workspace(t, pairFlow("", rt, rt, 2))
	m := &Manager{Workspace: ws, Limits: recording}
	defer m.Close()
	info, err := m.Start(f, StartParams{})
	if err != nil {
		t.Fatal(err)
	}
	for { // a's first turn is kept and b's first is under way, blocked on the gate
		if pts, _ := readForkPoints(ws, info.RunID); len(pts) >= 1 {
			if b, _ := os.ReadFile(filepath.Join(dir, "count.b")); len(b) > 0 {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	m.Stop(info.RunID)
	if out, _ := m.Wait(info.RunID); out.Status != StatusStopped {
		t.Fatalf("the stopped run: %+v", out)
	}
	stopped, _ := transcript.Read(ws, info.RunID)
	os.WriteFile(gate, nil, 0o600)
	if _, err := m.Start(f, StartParams{ResumeRunID: info.RunID}); err != nil {
		t.Fatal(err)
	}
	resumed, _ := m.Wait(info.RunID)
	if resumed.Status != StatusCompleted {
		t.Fatalf("the resumed run: %+v", resumed)
	}
	turns, _ := transcript.Read(ws, info.RunID)
	at := len(stopped) + 1 // the resume's first turn, a's
	if len(turns) < at+1 || turns[at-1].Agent != "a" || turns[at].Agent != "b" {
		t.Fatalf("the resumed run's turns: %+v (the stopped run had %d)", turns, len(stopped))
	}
	bCalls := func() string { b, _ := os.ReadFile(filepath.Join(dir, "count.b")); return strings.TrimSpace(string(b)) }
	before := bCalls()
	plan, err := PlanFork(ws, ForkRequest{RunID: info.RunID, At: at})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Fork(context.Background(), plan, Options{Limits: recording})
	if err != nil || outcomeOf(out) != outcomeOf(resumed) {
		t.Fatalf("the fork: %v\n%s\nthe resumed run:\n%s", err, outcomeOf(out), outcomeOf(resumed))
	}
	if bCalls() == before {
		t.Errorf("b's turn after the fork's was replayed, not run (b ran %s times before and after)", before)
	}
	// The fork forked after its own first turn (b's, live): it goes on with the same run of the
	// interaction, so a's turn and b's are both replayed and a runs once more, for its second.
	calls := func(agent string) int {
		b, _ := os.ReadFile(filepath.Join(dir, "count."+agent))
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
	aBefore, bBefore := calls("a"), calls("b")
	plan2, err := PlanFork(ws, ForkRequest{RunID: out.RunID, At: at + 1})
	if err != nil {
		t.Fatal(err)
	}
	out2, err := Fork(context.Background(), plan2, Options{Limits: recording})
	if err != nil || outcomeOf(out2) != outcomeOf(resumed) {
		t.Fatalf("the fork of the fork: %v\n%s", err, outcomeOf(out2))
	}
	if a, b := calls("a")-aBefore, calls("b")-bBefore; a != 1 || b != 1 {
		t.Errorf("the fork of the fork ran a %d and b %d times, want once each (their second turns)", a, b)
	}
}

// A fork point line torn by a power cut (the next append gives it a newline of its own, as the
// transcript's) is skipped, not the whole file: the turns around it can still be forked from.
func TestTornForkPointIsSkipped(t *testing.T) {
	ws := t.TempDir()
	data := `{"seq":1,"interactionId":"i1","agent":"a","nth":1}` + "\n" + `{"seq":2,"interac` + "\n" + `{"seq":3,"interactionId":"i1","agent":"a","nth":2}` + "\n"
	if err := transcript.AppendRunFile(ws, "run_1", ForkPointsFile, []byte(data)); err != nil {
		t.Fatal(err)
	}
	pts, err := readForkPoints(ws, "run_1")
	if err != nil || len(pts) != 2 || pts[1] == nil || pts[3] == nil {
		t.Fatalf("fork points %v, %v; want turns 1 and 3", pts, err)
	}
}
