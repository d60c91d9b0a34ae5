// P03 chat_chain_pipeline and P04 sop_assembly_line: phases in chain order.

package engine

import (
	"fmt"
	"sort"
)

// P03 — ChatDev: each edge source → target is a phase; the source instructs, the target
// replies, until either reply has a line starting with the conclusion marker (<INFO>), at
// most max_rounds times; the conclusion feeds the next phase.
func chatChain(c *ictx) (string, error) {
	marker := firstNonEmpty(str(c.params["conclusion_marker"]), "<INFO>")
	per := c.maxRounds(2)
	conclusion := c.task()
	longest, concluded := 0, true
	for _, e := range c.phases() {
		src, dst := e[0], e[1]
		got := ""
		n := 0
		for n < per && got == "" {
			n++
			ins, err := c.ask("", src, c.prompt(src, message{Intent: fmt.Sprintf("Phase %s → %s: instruct %s (%s) for the next step of the task", src, dst, dst, c.roles[dst]), Inputs: []string{quote("Task", c.task()), quote("Previous phase's conclusion", conclusion)}, Plan: []string{"Give one instruction"}, Actions: []string{"Your instruction; a line starting with " + marker + " when the phase is concluded"}}))
			if err != nil {
				return "", err
			}
			c.send(src, dst, c.edgeType(src, dst, "instruction"), map[string]any{"bytes": len(ins.Text)}, "")
			rep, err := c.ask(src, dst, c.prompt(dst, message{Intent: fmt.Sprintf("Phase %s → %s: carry out the instruction as %s", src, dst, c.roles[dst]), Inputs: []string{quote("Task", c.task()), quote("Instruction", ins.Text)}, Plan: []string{"Do your part", "State its conclusion"}, Actions: []string{"A line starting with " + marker + " and the phase's conclusion when it is done"}}))
			if err != nil {
				return "", err
			}
			for _, t := range []string{ins.Text, rep.Text} {
				if s, ok := markerLine(t, marker); ok {
					got = s
				}
			}
			if got == "" && n == per {
				got = rep.Text
				concluded = false
				c.note("phase_ended", map[string]any{"phase": src + "→" + dst, "reason": "max_rounds", "rounds": n})
			} else if got != "" {
				c.note("phase_ended", map[string]any{"phase": src + "→" + dst, "reason": "concluded", "rounds": n})
			}
		}
		conclusion = got
		longest = max(longest, n)
	}
	c.st.Metrics["phase_concluded"] = b2f(concluded)
	c.st.Round = longest - 1
	c.endRound()
	return conclusion, nil
}

// phases are the interaction's edges in chain order (the pipeline's phases).
func (c *ictx) phases() [][2]string {
	order := map[string]int{}
	for i, id := range c.chain() {
		order[id] = i
	}
	var out [][2]string
	for _, e := range c.in.Edges {
		if e.Source != e.Target {
			out = append(out, [2]string{e.Source, e.Target})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return order[out[i][0]] < order[out[j][0]] })
	return out
}

// P04 — MetaGPT: a shared message pool; each reply is a message of its role's `publishes`
// type; a message of type T goes to every role that watches T and has an edge from the
// publisher (one FIFO queue: a role handles one message at a time). A reply with METRIC:
// artifact_valid=1 accepts what it received, and then nothing goes back up the line along a
// feedback edge (QA passing the code ends the engineer–QA loop). At most max_rounds deliveries per edge.
func sopAssemblyLine(c *ictx) (string, error) {
	publishes := map[string]string{}
	if m, ok := c.params["publishes"].(map[string]any); ok {
		for k, v := range m {
			publishes[k] = str(v)
		}
	}
	watches := map[string][]string{}
	if m, ok := c.params["watches"].(map[string]any); ok {
		for k, v := range m {
			watches[k] = stringList(v)
		}
	}
	typeOf := func(node string) string {
		return firstNonEmpty(publishes[node], publishes[c.roles[node]], c.roles[node])
	}
	watching := func(node, typ string) bool {
		w, ok := watches[node]
		if !ok {
			w = watches[c.roles[node]]
		}
		for _, t := range w {
			if t == typ {
				return true
			}
		}
		return false
	}
	type msg struct{ typ, from, to, text string }
	per := c.maxRounds(3)
	rounds := map[[2]string]int{}
	stage := map[string]int{}
	for i, id := range c.chain() {
		stage[id] = i
	}
	start := c.chain()[0]
	queue := []msg{{typ: "task", from: "", to: start, text: c.task()}}
	last := ""
	for len(queue) > 0 {
		if err := c.ctx.Err(); err != nil {
			return last, err
		}
		m := queue[0]
		queue = queue[1:]
		out := typeOf(m.to)
		rep, err := c.ask(m.from, m.to, c.prompt(m.to, message{Intent: fmt.Sprintf("As %s, act on the %s you received and publish your %s", c.roles[m.to], m.typ, out), Inputs: []string{quote(m.typ+" from "+firstNonEmpty(m.from, "the user"), m.text)}, Plan: []string{"Check the input against its template", "Write your " + out + " with its template"}, Actions: []string{"Your " + out, "METRIC: artifact_valid=1 when the input you received is valid (for QA: when the code passes its tests), else 0"}}), needMetric("artifact_valid", "METRIC: artifact_valid=<0|1>"))
		if err != nil {
			return "", err
		}
		last = rep.Text
		valid, _ := metric(rep.Text, "artifact_valid")
		c.st.Metrics["artifact_valid"] = valid
		c.r.emit(c.in.ID, "", "artefact", map[string]any{"type": out, "by": m.to, "watched": m.typ, "valid": valid})
		for _, e := range c.in.Edges {
			if e.Source != m.to || !watching(e.Target, out) {
				continue
			}
			if valid >= 1 && stage[e.Target] < stage[m.to] {
				continue // accepted: no feedback goes back up the line (QA passing ends the loop)
			}
			k := [2]string{e.Source, e.Target}
			if rounds[k] >= per {
				c.note("warning", map[string]any{"message": fmt.Sprintf("edge %s → %s reached %d deliveries; %s not delivered", e.Source, e.Target, per, out)})
				continue
			}
			rounds[k]++
			c.send(m.to, e.Target, busType(out), map[string]any{"artifact": out, "bytes": len(rep.Text)}, "")
			queue = append(queue, msg{typ: out, from: m.to, to: e.Target, text: rep.Text})
		}
	}
	most := 0
	for _, n := range rounds {
		most = max(most, n)
	}
	c.st.Round = max(most, 1) - 1
	c.endRound()
	return last, nil
}
