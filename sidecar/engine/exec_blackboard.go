package engine

import (
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
)

// P11 — blackboard: knowledge sources post entries (POST <kind>: <text>); the control step
// picks, among the sources with an unconsumed entry they trigger on (params.triggers, else
// any entry they did not post), the one whose oldest such entry is oldest (ties: flow order);
// it gets those entries, which are then consumed for it. A solution entry ends it.
func blackboard(c *ictx) (string, error) {
	hub, sources := c.cast.one("blackboard"), c.cast.all("knowledge_source")
	if c.board == nil {
		c.board = bus.NewBlackboard(bus.Retention{}, c.r.now)
	}
	triggers, _ := c.params["triggers"].(map[string]any)
	consumed := map[string]map[int]bool{}
	fires := func(s string, e bus.Entry) bool {
		if consumed[s][e.Seq] || e.Author == s {
			return false
		}
		kinds, ok := triggers[s]
		if !ok {
			return true
		}
		for _, k := range append(stringList(kinds), str(kinds)) {
			if k == e.Kind {
				return true
			}
		}
		return false
	}
	c.board.Post("engine", "problem", c.task())
	posts := 0
	var silent []string
	// nothing: the board never got an entry from any source, which is no blackboard run.
	nothing := func() error {
		return &NoWorkError{Msg: "no knowledge source posted anything: " + strings.Join(silent, ", ") + " wrote no `POST <kind>: <text>` line, even when asked again"}
	}
	for {
		entries := c.board.Entries()
		pick, oldest := "", 0
		var matching []bus.Entry
		for _, s := range sources {
			for _, e := range entries {
				if fires(s, e) {
					if pick == "" || e.Seq < oldest {
						pick, oldest = s, e.Seq
					}
					break
				}
			}
		}
		if pick == "" {
			if posts == 0 {
				return "", nothing()
			}
			c.st.Done = "quiescent"
			c.note("quiescent", map[string]any{"message": "no knowledge source can fire"})
			return "no solution", nil
		}
		if consumed[pick] == nil {
			consumed[pick] = map[int]bool{}
		}
		var in []string
		for _, e := range entries {
			if fires(pick, e) {
				matching = append(matching, e)
				in = append(in, fmt.Sprintf("#%d %s by %s: %s", e.Seq, e.Kind, e.Author, truncate(e.Text, 800)))
			}
		}
		for _, e := range matching {
			consumed[pick][e.Seq] = true
		}
		c.send(hub, pick, "read", map[string]any{"entries": len(matching)}, "")
		rep, err := c.ask(hub, pick, c.prompt(pick, message{Intent: "Contribute to the blackboard: " + c.task(), Inputs: in, Plan: []string{"Read the entries", "Add what you know"}, Actions: []string{"POST <kind>: <text>, one line per entry (kind: a word such as hypothesis or partial_result; solution when the problem is solved)"}}), needKeyed("POST", "POST <kind>: <text>"))
		if err = hard(err); err != nil {
			return "", err
		}
		if len(rep.Missing) > 0 {
			c.lacking(rep, "it adds nothing to the board")
			silent = append(silent, pick)
		}
		solution := ""
		for _, p := range keyedLines(rep.Text, "POST") {
			kind := strings.ToLower(firstNonEmpty(p.Key, "note"))
			c.board.Post(pick, kind, p.Value)
			posts++
			c.send(pick, hub, "post", map[string]any{"kind": kind}, "")
			c.note("blackboard_posted", map[string]any{"by": pick, "kind": kind, "kept": len(c.board.Entries()), "trimmed": c.board.Trimmed()})
			if kind == "solution" {
				solution = p.Value
			}
		}
		if solution != "" {
			c.st.Metrics["solution_posted"] = 1
		}
		if c.endRound() {
			if posts == 0 {
				return "", nothing()
			}
			return firstNonEmpty(solution, "no solution"), nil
		}
	}
}
