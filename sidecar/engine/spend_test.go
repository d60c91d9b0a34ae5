package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// spender is a command agent that reports 1000 tokens and one cent each turn. On the turn
// named by $AC_DIR/hang (its number, counted over every agent) it reports, then keeps
// running, as an agent in the middle of a long turn would.
const spender = `cat >/dev/null
exec 9>>"$AC_DIR/lock"; flock 9
n=$(($(cat "$AC_DIR/turns" 2>/dev/null || echo 0) + 1)); echo $n >"$AC_DIR/turns"
flock -u 9
hang=$( [ -e "$AC_DIR/hang" ] && cat "$AC_DIR/hang")
[ "$hang" = "$n" ] && echo $$ >"$AC_DIR/hung.pid"
echo "Instruction: step $n"
echo 'USAGE: {"inputTokens": 800, "outputTokens": 200, "costUsd": 0.01}'
if [ "$hang" = "$n" ]; then sleep 1000; fi
`

// spendFlow is a CAMEL pair that never finishes on its own (the user never says done):
// only its bound of 50 rounds, or a spend limit, ends it. top is added at the top level,
// termination is the edge's.
func spendFlow(t *testing.T, top, termination string) (string, *flow.Flow) {
	t.Helper()
	agent := script(t, t.TempDir(), "spender.sh", spender)
	src := "version: 0.2\n" + top + `agents:
  - {id: user, role: user, runtime: {backendId: command, command: [bash, ` + agent + `], env: [AC_DIR]}}
  - {id: helper, role: assistant, runtime: {backendId: command, command: [bash, ` + agent + `], env: [AC_DIR]}}
interactions:
  - id: pair
    patternId: role_play_pair
    edges:
      - {source: user, target: helper, data: {termination: ` + termination + `}}
`
	return workspace(t, src)
}

func turns(t *testing.T, dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "turns"))
	n := 0
	json.Unmarshal([]byte(strings.TrimSpace(string(b))), &n)
	return n
}

// The run's policy.budget: an agent that reports usage each turn is stopped when the budget is
// crossed, in the middle of its turn (its process group killed, as for a timeout), and the run
// ends stopped with reason budget; nothing runs after.
func TestBudgetStopsTheRun(t *testing.T) {
	ws, f := spendFlow(t, "policy: {budget: {tokens: 3500}}\n", "{type: max_rounds, rounds: 50}")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hang"), []byte("4"), 0o644)
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Env: map[string]string{"AC_DIR": dir}, StopGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusStopped || out.Reason != "budget" {
		t.Fatalf("run %s (%s), want stopped by budget", out.Status, out.Reason)
	}
	if ic := out.Interactions[0]; ic.Status != StatusStopped || ic.Reason != "budget" {
		t.Errorf("interaction %s (%s), want stopped by budget", ic.Status, ic.Reason)
	}
	if n := turns(t, dir); n != 4 {
		t.Errorf("%d turns ran; the budget (3,500 tokens at 1,000 a turn) is crossed in the fourth", n)
	}
	pid := readPID(t, filepath.Join(dir, "hung.pid"))
	for i := 0; i < 100 && alive(pid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Error("the agent in the middle of its turn is still running after the budget stopped the run")
	}
	evs := events(t, ws, "t")
	reached := eventsNamed(evs, "budget_reached")
	if len(reached) != 1 || fld(reached[0], "limit") != "tokens" {
		t.Errorf("budget_reached events %v", reached)
	}
	term := eventsNamed(evs, "terminated")
	if len(term) != 1 || fld(term[0], "reason") != "budget" {
		t.Errorf("terminated %v", term)
	}
	st, err := ReadState(ws, out.RunID)
	if err != nil || st.Spend.Tokens != 4000 || !st.Spend.CostKnown || st.Spend.CostUSD < 0.039 || st.Spend.CostUSD > 0.041 {
		t.Errorf("state spend %+v (%v), want 4000 tokens, $0.04", st.Spend, err)
	}
	if out.Spend.Tokens != 4000 {
		t.Errorf("the outcome's spend %+v, want 4000 tokens", out.Spend)
	}
	if spends := eventsNamed(evs, "spend"); len(spends) != 4 {
		t.Errorf("%d spend events, want one a turn", len(spends))
	}
}

// An interaction's max_tokens and max_cost_usd end it, completed, with that condition as its
// reason; the run goes on.
func TestInteractionSpendLimits(t *testing.T) {
	for _, c := range []struct {
		term, reason string
		turns        int
	}{
		{"{any: [{type: max_rounds, rounds: 50}, {type: max_tokens, tokens: 2500}]}", "max_tokens", 3},
		{"{any: [{type: max_rounds, rounds: 50}, {type: max_cost_usd, usd: 0.05}]}", "max_cost_usd", 5},
		// params.max_cost_usd is the same limit (docs/flow-format.md, params).
		{"{type: max_rounds, rounds: 50}, params: {max_cost_usd: 0.05}", "max_cost_usd", 5},
	} {
		t.Run(c.reason, func(t *testing.T) {
			ws, f := spendFlow(t, "", c.term)
			dir := t.TempDir()
			out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Env: map[string]string{"AC_DIR": dir}})
			if err != nil {
				t.Fatal(err)
			}
			ic := out.Interactions[0]
			if out.Status != StatusCompleted || ic.Status != StatusCompleted || ic.Reason != c.reason {
				t.Fatalf("run %s, interaction %s (%s %s), want completed by %s", out.Status, ic.Status, ic.Reason, ic.Error, c.reason)
			}
			if n := turns(t, dir); n != c.turns {
				t.Errorf("%d turns ran, want %d", n, c.turns)
			}
			if term := eventsNamed(events(t, ws, "t"), "terminated"); len(term) != 1 || fld(term[0], "reason") != c.reason {
				t.Errorf("terminated %v", term)
			}
		})
	}
}

// An agent that reports no usage is unknown, not free: the run with a budget warns once per
// such agent, its state lists it, and the budget does not stop the run.
func TestUnreportedUsageIsUnknown(t *testing.T) {
	agent := script(t, t.TempDir(), "quiet.sh", "cat >/dev/null; echo 'Instruction: more'\n")
	ws, f := workspace(t, `version: 0.2
policy: {budget: {usd: 0.01}}
agents:
  - {id: user, role: user, runtime: {backendId: command, command: [bash, `+agent+`]}}
  - {id: helper, role: assistant, runtime: {backendId: command, command: [bash, `+agent+`]}}
interactions:
  - id: pair
    patternId: role_play_pair
    edges:
      - {source: user, target: helper, data: {termination: {type: max_rounds, rounds: 2}}}
`)
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted || out.Interactions[0].Reason != "max_rounds" {
		t.Fatalf("outcome %+v", out)
	}
	st, _ := ReadState(ws, out.RunID)
	if st.Spend.Tokens != 0 || len(st.Spend.Unreported) != 2 {
		t.Errorf("spend %+v, want both agents unreported", st.Spend)
	}
	n := 0
	for _, w := range eventsNamed(events(t, ws, "t"), "warning") {
		if strings.Contains(str(fld(w, "message")), "reported no usage") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d unreported-usage warnings, want one per agent", n)
	}
}
