package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

func setRole(role string, ids ...string) func(sg *pattern.Subgraph) {
	return func(sg *pattern.Subgraph) {
		for i := range sg.Agents {
			for _, id := range ids {
				if sg.Agents[i].ID == id {
					sg.Agents[i].Role = role
				}
			}
		}
	}
}

func setTermination(term pattern.Termination) func(sg *pattern.Subgraph) {
	return func(sg *pattern.Subgraph) {
		for i := range sg.Interaction.Edges {
			sg.Interaction.Edges[i].Data.Termination = term
			delete(sg.Interaction.Edges[i].Data.Params, "timeout_ms")
		}
	}
}

func edits(fs ...func(sg *pattern.Subgraph)) func(sg *pattern.Subgraph) {
	return func(sg *pattern.Subgraph) {
		for _, f := range fs {
			f(sg)
		}
	}
}

// alive reports whether pid is still in the process table as a live process (a zombie
// waiting to be reaped is not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) < 3 || f[2] != "Z"
}

func readPID(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the agent did not record its pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// A runaway agent (it sleeps forever, with a grandchild doing the same) is stopped by
// timeout_ms: the interaction ends with reason timeout_ms and both processes are gone. On a busy
// machine the agent may not have recorded both pids when a short timeout fires; the run is
// then repeated with a doubled timeout until it had (a condition, not a timing).
func TestRunawayStoppedByTimeout(t *testing.T) {
	for ms := int64(500); ; ms *= 2 {
		ws := gitWorkspace(t)
		dir := t.TempDir()
		t.Setenv("AC_DIR", dir)
		f := patternFlow(t, ws, "runaway", flowSpec{pattern: "protocol_bridge", runtime: scripted(t), description: "sleep",
			edit: edits(setRole("sleeper", "local_agent"), setTermination(pattern.Termination{Type: "timeout_ms", Ms: ms}))})
		out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, StopGrace: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ic := out.Interactions[0]
		if ic.Reason != "timeout_ms" {
			t.Fatalf("reason %q (%s), want timeout_ms", ic.Reason, ic.Error)
		}
		term := eventsNamed(events(t, ws, "runaway"), "terminated")
		if len(term) != 1 || fld(term[0], "reason") != "timeout_ms" {
			t.Errorf("terminated events %v", term)
		}
		if _, err := os.Stat(filepath.Join(dir, "child.pid")); err != nil {
			if ms >= 64000 {
				t.Fatalf("the agent never recorded its pids within %d ms", ms)
			}
			t.Logf("timeout_ms %d fired before the agent had recorded its pids; again with %d", ms, 2*ms)
			continue
		}
		for _, name := range []string{"child.pid", "grandchild.pid"} {
			pid := readPID(t, filepath.Join(dir, name))
			// The guardian reaps the tree as Run returns; give the kernel a moment to finish.
			for i := 0; i < 500 && alive(pid); i++ {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("%s %d is still running after the timeout", name, pid)
			}
		}
		return
	}
}

// Two negotiators who only ever counter each other are stopped by max_rounds.
func TestRunawayStoppedByMaxRounds(t *testing.T) {
	ws := gitWorkspace(t)
	t.Setenv("AC_DIR", t.TempDir())
	f := patternFlow(t, ws, "haggle", flowSpec{pattern: "bilateral_negotiation", runtime: scripted(t), description: "haggle",
		edit: edits(setRole("haggler", "proposer", "responder"), setTermination(pattern.Termination{Any: []pattern.Termination{{Type: "max_rounds", Rounds: 3}, {Type: "timeout_ms", Ms: 600000}}}))})
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	ic := out.Interactions[0]
	if ic.Reason != "max_rounds" || ic.Rounds != 3 || ic.Result != "no deal" {
		t.Errorf("reason %q after %d rounds, result %q; want max_rounds after 3, no deal", ic.Reason, ic.Rounds, ic.Result)
	}
	evs := events(t, ws, "haggle")
	if got := steps(evs); len(got) != 6 {
		t.Errorf("%d steps %v, want 6 (two a round)", len(got), got)
	}
	if n := len(messages(evs, "counteroffer")); n != 6 {
		t.Errorf("%d counteroffers, want 6", n)
	}
}

// burstRun runs P14 where peer_1 sends a burst of 15 messages to peer_2 in its first turn, with
// the rate limit's window shortened to window; it returns the workspace, the agents' record
// folder and the outcome.
func burstRun(t *testing.T, nodeParams map[string]map[string]any, window time.Duration) (ws, dir string, out *Outcome) {
	t.Helper()
	ws, dir = gitWorkspace(t), t.TempDir()
	t.Setenv("AC_DIR", dir)
	if err := os.WriteFile(filepath.Join(dir, "burst"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f := patternFlow(t, ws, "burst", flowSpec{pattern: "router_targeted", runtime: scripted(t), description: "burst", nodeParams: nodeParams})
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, rateWindow: window})
	if err != nil {
		t.Fatal(err)
	}
	return ws, dir, out
}

// A burst of 15 targeted messages through a router limited to 10 a window: 10 are delivered
// at once, the rest held and released in order before the next round (the window is short
// here, so the test does not wait minutes); none is dropped, and the sender is told
// delivered only once its target has it.
func TestRateLimitHoldsUnderBurst(t *testing.T) {
	ws, dir, out := burstRun(t, nil, 300*time.Millisecond)
	ic := out.Interactions[0]
	// peer_1's 15 to peer_2, peer_2's one to peer_1 and peer_3: 17 deliveries, none left held.
	if !strings.Contains(ic.Result, "17 message(s) delivered, 0 held by the rate limit") {
		t.Errorf("result %q", ic.Result)
	}
	evs := events(t, ws, "burst")
	held, released := eventsNamed(evs, "message_held"), eventsNamed(evs, "message_released")
	if len(held) != 6 || len(released) != 6 || len(eventsNamed(evs, "message_dropped")) != 0 {
		t.Errorf("held %d, released %d, dropped %d; want 6, 6, 0", len(held), len(released), len(eventsNamed(evs, "message_dropped")))
	}
	for i := range min(len(held), len(released)) {
		if fld(held[i], "id") != fld(released[i], "id") {
			t.Errorf("release %d is %v, held %v: out of order", i, fld(released[i], "id"), fld(held[i], "id"))
		}
	}
	p, err := os.ReadFile(filepath.Join(dir, "peer_2.1.prompt"))
	if err != nil {
		t.Fatal(err)
	}
	last := -1
	for i := 1; i <= 15; i++ {
		at := strings.Index(string(p), fmt.Sprintf("burst %d\n", i))
		if at < 0 {
			at = strings.Index(string(p), fmt.Sprintf("burst %d", i))
		}
		if at <= last {
			t.Fatalf("peer_2 did not get burst %d after burst %d:\n%s", i, i-1, p)
		}
		last = at
	}
	p1, _ := os.ReadFile(filepath.Join(dir, "peer_1.1.prompt"))
	if n := strings.Count(string(p1), "ack: delivered to peer_2"); n != 15 {
		t.Errorf("peer_1 told delivered %d times, want 15:\n%s", n, p1)
	}
}

// A rate limit on the router node covers every edge through it, over the edges' own: at 2
// a window, 14 of peer_1's 15 and peer_2's message are held, all delivered in the end.
func TestRateLimitOnTheRouterNode(t *testing.T) {
	ws, _, out := burstRun(t, map[string]map[string]any{"router": {"rate_limit_per_min": 2}}, 100*time.Millisecond)
	if ic := out.Interactions[0]; !strings.Contains(ic.Result, "17 message(s) delivered, 0 held") {
		t.Errorf("result %q", ic.Result)
	}
	evs := events(t, ws, "burst")
	if h, r := len(eventsNamed(evs, "message_held")), len(eventsNamed(evs, "message_released")); h != 14 || r != 14 {
		t.Errorf("held %d, released %d; want 14, 14", h, r)
	}
}

// A peer sending a type its edge does not allow (task_assignment through the router, whose
// edges carry targeted_message, delivery and ack) is refused by the bus's access control,
// logged, and acknowledged to the sender as refused; the target never gets it.
func TestTypeNotAllowedIsRefusedAndLogged(t *testing.T) {
	ws := gitWorkspace(t)
	dir := t.TempDir()
	t.Setenv("AC_DIR", dir)
	if err := os.WriteFile(filepath.Join(dir, "badtype"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f := patternFlow(t, ws, "acl", flowSpec{pattern: "router_targeted", runtime: scripted(t), description: "acl"})
	if _, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	refused := eventsNamed(events(t, ws, "acl"), "message_refused")
	if len(refused) != 1 || fld(refused[0], "type") != "task_assignment" || fld(refused[0], "from") != "peer_3" ||
		!strings.Contains(str(fld(refused[0], "error")), "peer_3 may not send task_assignment to peer_1") {
		t.Fatalf("refusals %v", refused)
	}
	p3, _ := os.ReadFile(filepath.Join(dir, "peer_3.1.prompt"))
	if !strings.Contains(string(p3), "ack: refused") {
		t.Errorf("peer_3 was not told of the refusal:\n%s", p3)
	}
	p1, _ := os.ReadFile(filepath.Join(dir, "peer_1.1.prompt"))
	if strings.Contains(string(p1), "do my work") {
		t.Error("the refused message reached peer_1")
	}
}
