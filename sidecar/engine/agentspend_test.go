package engine

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// Each agent's spend is kept with the run's state: after the run ends, state.json and a fresh
// Manager's List (a window reload) carry every agent's total, equal to what its spend events
// told, adding up to the run's spend; resuming the run goes on from those totals.
func TestAgentSpendPersistsWithTheRun(t *testing.T) {
	ws, f := spendFlow(t, "policy: {budget: {tokens: 3500}}\n", "{type: max_rounds, rounds: 50}")
	dir := t.TempDir()
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Env: map[string]string{"AC_DIR": dir}, StopGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ReadState(ws, out.RunID)
	if err != nil {
		t.Fatal(err)
	}
	// what the spend events told of each agent: its turns' reports, and the last total sent
	told := map[string]int64{}
	last := map[string]AgentSpend{}
	for _, ev := range eventsNamed(events(t, ws, f.Name), "spend") {
		var a string
		var tok int64
		var total AgentSpend
		if eventField(ev.Fields, "agent", &a) != nil || eventField(ev.Fields, "tokens", &tok) != nil || eventField(ev.Fields, "agentTotal", &total) != nil {
			t.Fatalf("spend event %+v", ev)
		}
		told[a] += tok
		last[a] = total
	}
	if len(st.Agents) != 2 || len(told) != 2 {
		t.Fatalf("state's agents %+v, spend events' agents %v: want user and helper", st.Agents, told)
	}
	var sum int64
	for id, a := range st.Agents {
		if a.Tokens != told[id] || math.Abs(a.CostUSD-float64(a.Tokens)/100000) > 1e-9 || !a.CostKnown || a.Metered || a.Interaction != "pair" {
			t.Errorf("%s in state.json: %+v; its spend events told %d tokens (1,000 and $0.01 a turn)", id, a, told[id])
		}
		if last[id] != a {
			t.Errorf("%s: the last spend event's agentTotal %v, state.json %+v", id, last[id], a)
		}
		sum += a.Tokens
	}
	if sum != st.Spend.Tokens || sum != int64(turns(t, dir))*1000 {
		t.Errorf("agents' tokens add up to %d; the run spent %d over %d turns", sum, st.Spend.Tokens, turns(t, dir))
	}
	m := &Manager{Workspace: ws}
	runs, err := m.List()
	if err != nil || len(runs) != 1 || len(runs[0].AgentSpend) != 2 || runs[0].AgentSpend["helper"] != st.Agents["helper"] {
		t.Fatalf("a fresh manager lists %+v (%v), want the agents' totals of state.json %+v", runs, err, st.Agents)
	}
	// A resumed run adds to each agent's total, never starting it again from zero.
	st.Status = StatusInterrupted
	r, err := newRun(f, Options{Limits: recording, Workspace: ws, RunID: st.RunID, Resume: st})
	if err != nil {
		t.Fatal(err)
	}
	defer r.log.Close()
	before := st.Agents["user"]
	if got := r.charge("user", "pair", false, charge{tokens: 5, usd: 0.001}); got.Tokens != before.Tokens+5 || got.Reports != before.Reports+1 {
		t.Errorf("resumed: user's total %+v after 5 more tokens on %+v", got, before)
	}
}

// eventField decodes an event's field k into v.
func eventField(fields map[string]any, k string, v any) error {
	raw, _ := fields[k].(json.RawMessage)
	return json.Unmarshal(raw, v)
}
