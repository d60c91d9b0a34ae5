package engine

import (
	"fmt"
	"github.com/agentcanvas/agentcanvas/sidecar/bus"
	"sort"
	"strconv"
	"strings"
)

// executor runs one interaction of a pattern and returns what it yields. It ends rounds
// with c.endRound(), which applies the flow's termination; patterns/P*.md say how each runs.
type executor func(c *ictx) (string, error)

var executors = map[string]executor{
	"manager_worker":         managerWorker,
	"role_play_pair":         rolePlayPair,
	"chat_chain_pipeline":    chatChain,
	"sop_assembly_line":      sopAssemblyLine,
	"debate_judge":           debateJudge,
	"critic_refiner_curator": criticRefinerCurator,
	"majority_vote":          majorityVote,
	"self_consistency":       selfConsistency,
	"contract_net":           contractNet,
	"bilateral_negotiation":  negotiation,
	"blackboard":             blackboard,
	"publish_subscribe":      publishSubscribe,
	"broker_facilitator":     brokerFacilitator,
	"router_targeted":        routerTargeted,
	"hierarchical_tree":      hierarchicalTree,
	"red_team_judge":         redTeamJudge,
	"fact_check_verifier":    factCheck,
	"plan_execute_reflect":   planExecuteReflect,
	"memory_sync":            memorySync,
	"protocol_bridge":        protocolBridge,
}

// task is what the interaction is about.
func (c *ictx) task() string {
	for _, k := range []string{"task", "task_template", "question", "topic_prompt"} {
		if s, ok := c.params[k].(string); ok && s != "" {
			return s
		}
	}
	return firstNonEmpty(c.in.Description, c.r.task())
}

func quote(label, text string) string { return label + ":\n" + indent(truncate(text, 6000)) }

// P01 — manager decomposes, workers (in parallel) do and report, the manager integrates;
// the quality gate tests_passed is measured from the workers' handoffs.
func managerWorker(c *ictx) (string, error) {
	mgr := c.one(c.chain()[0], "manager", "orchestrator", "coordinator")
	workers := c.others(mgr)
	var reports []string
	for {
		plan, err := c.ask("", mgr, c.prompt(mgr, message{
			Intent:  "Decompose the task into one assignment per worker: " + c.task(),
			Inputs:  append([]string{"Workers: " + strings.Join(workers, ", ")}, reports...),
			Plan:    []string{"Split the task", "Write one assignment per worker as ASSIGN <worker id>: <assignment>"},
			Actions: []string{"One ASSIGN line per worker"},
		}))
		if err != nil {
			return "", err
		}
		reps, err := c.askAll(mgr, workers, func(w string) string {
			a, ok := field(plan.Text, "ASSIGN "+w)
			if !ok {
				a = c.task()
			}
			return c.prompt(w, message{Intent: a, Inputs: []string{quote("Manager's plan", plan.Text)}, Plan: []string{"Do the assignment in your sandbox", "Report what changed"}, Actions: []string{"Changed files, then a HANDOFF block if you edited files"}})
		})
		if err != nil {
			return "", err
		}
		reports = reports[:0]
		passed := 1.0
		for _, r := range reps {
			reports = append(reports, quote("Report of "+r.Node, r.Text))
			if r.Handoff == nil && isWorker(c.roles[r.Node]) {
				passed = 0
			}
		}
		c.st.Metrics["tests_passed"] = passed
		sum, err := c.ask("", mgr, c.prompt(mgr, message{Intent: "Integrate the workers' reports and say DONE or what must be redone", Inputs: reports, Plan: []string{"Check each report against its assignment", "Integrate"}, Actions: []string{"A summary; DONE when the task is complete"}}))
		if err != nil {
			return "", err
		}
		if c.endRound() {
			return sum.Text, nil
		}
	}
}

// P15 — a tree of managers: each node with children decomposes for them, leaves work, and
// results are aggregated up to the root.
func hierarchicalTree(c *ictx) (string, error) {
	children := map[string][]string{}
	into := map[string]bool{}
	for _, e := range c.in.Edges {
		children[e.Source] = append(children[e.Source], e.Target)
		into[e.Target] = true
	}
	root := c.nodes[0]
	for _, id := range c.nodes {
		if !into[id] {
			root = id
			break
		}
	}
	var solve func(node, assignment string, depth int) (string, error)
	solve = func(node, assignment string, depth int) (string, error) {
		kids := children[node]
		if len(kids) == 0 || depth > 8 {
			r, err := c.ask("", node, c.prompt(node, message{Intent: assignment, Plan: []string{"Do it", "Report"}, Actions: []string{"Your result"}}))
			if err != nil {
				return "", err
			}
			return r.Text, nil
		}
		plan, err := c.ask("", node, c.prompt(node, message{Intent: "Split this for your sub-team: " + assignment, Inputs: []string{"Sub-team: " + strings.Join(kids, ", ")}, Plan: []string{"One ASSIGN <id>: <part> line per member"}, Actions: []string{"ASSIGN lines"}}))
		if err != nil {
			return "", err
		}
		var results []string
		for _, k := range kids {
			part, ok := field(plan.Text, "ASSIGN "+k)
			if !ok {
				part = assignment
			}
			c.send(node, k, "task_assignment", map[string]any{"assignment": part}, "")
			res, err := solve(k, part, depth+1)
			if err != nil {
				return "", err
			}
			c.send(k, node, "task_completion", map[string]any{"result": truncate(res, 2000)}, "")
			results = append(results, quote("Result of "+k, res))
		}
		agg, err := c.ask("", node, c.prompt(node, message{Intent: "Aggregate your sub-team's results for: " + assignment, Inputs: results, Plan: []string{"Merge", "Report up"}, Actions: []string{"The merged result"}}))
		if err != nil {
			return "", err
		}
		return agg.Text, nil
	}
	for {
		res, err := solve(root, c.task(), 0)
		if err != nil {
			return "", err
		}
		c.st.Done = "completed"
		if c.endRound() || c.term == nil {
			return res, nil
		}
	}
}

// P02 — CAMEL: the user agent instructs, the assistant solves, until the user says
// <CAMEL_TASK_DONE>.
func rolePlayPair(c *ictx) (string, error) {
	user := c.one(c.chain()[0], "user", "client", "instructor")
	assistant := c.others(user)[0]
	var last string
	for {
		ins, err := c.ask(assistant, user, c.prompt(user, message{Intent: "Give the assistant the next single instruction toward the task, or print <CAMEL_TASK_DONE> when it is done: " + c.task(), Inputs: []string{quote("Assistant's last solution", firstNonEmpty(last, "(none yet)"))}, Plan: []string{"One instruction at a time"}, Actions: []string{"Instruction: <one instruction>, or <CAMEL_TASK_DONE>"}}))
		if err != nil {
			return "", err
		}
		if hasMarker(ins.Text, "<CAMEL_TASK_DONE>") {
			c.st.Decided, c.st.Done = true, "camel_task_done"
			c.endRound()
			return firstNonEmpty(last, ins.Text), nil
		}
		sol, err := c.ask(user, assistant, c.prompt(assistant, message{Intent: "Carry out the user's instruction", Inputs: []string{quote("Instruction", ins.Text)}, Plan: []string{"Solve", "Explain"}, Actions: []string{"Solution: <your solution>. Next request"}}))
		if err != nil {
			return "", err
		}
		last = sol.Text
		if c.endRound() {
			return last, nil
		}
	}
}

// P03 — ChatDev: phases in chain order; each phase's conclusion is its <INFO> line, and a
// phase without one gets a second turn.
func chatChain(c *ictx) (string, error) {
	stages := c.chain()
	conclusion := c.task()
	for {
		for i, s := range stages {
			from := ""
			if i > 0 {
				from = stages[i-1]
			}
			var rep *Reply
			var err error
			for turn := 0; turn < 2; turn++ {
				rep, err = c.ask(from, s, c.prompt(s, message{Intent: fmt.Sprintf("Phase %d of %d (%s): carry the work forward", i+1, len(stages), firstNonEmpty(c.roles[s], s)), Inputs: []string{quote("Task", c.task()), quote("Previous phase's conclusion", conclusion)}, Plan: []string{"Do your phase", "State its conclusion"}, Actions: []string{"<INFO> <your phase's conclusion> on a line of its own"}}))
				if err != nil {
					return "", err
				}
				if hasMarker(rep.Text, "<INFO>") {
					break
				}
			}
			conclusion = infoLine(rep.Text)
		}
		c.st.Done = "completed"
		c.st.Metrics["tests_passed"] = 1
		if c.endRound() || c.term == nil {
			return conclusion, nil
		}
	}
}

func infoLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if i := strings.Index(l, "<INFO>"); i >= 0 {
			return strings.TrimSpace(l[i+len("<INFO>"):])
		}
	}
	return strings.TrimSpace(text)
}

// P04 — MetaGPT: roles watch message types in a shared pool; each stage publishes its
// artefact type, the next stage reacts to it and cross-verifies it (VERIFY: ok|issues).
func sopAssemblyLine(c *ictx) (string, error) {
	stages := c.chain()
	pool := map[string]string{} // artefact type → content
	kinds := []string{"requirements", "design", "code", "test_report", "release_notes"}
	for {
		watch := "task"
		pool["task"] = c.task()
		issues := 0
		for i, s := range stages {
			produce := kinds[min(i, len(kinds)-1)]
			rep, err := c.ask("", s, c.prompt(s, message{Intent: fmt.Sprintf("As %s, turn the %s into %s (SOP step %d)", firstNonEmpty(c.roles[s], s), watch, produce, i+1), Inputs: []string{quote(watch, pool[watch])}, Plan: []string{"Check the input (cross-verify)", "Produce your artefact with its template"}, Actions: []string{"VERIFY: ok or VERIFY: issues <what is wrong with the input>", "Your " + produce}}))
			if err != nil {
				return "", err
			}
			if v, _ := field(rep.Text, "VERIFY"); strings.HasPrefix(strings.ToLower(v), "issues") {
				issues++
			}
			c.r.emit(c.in.ID, "", "artefact", map[string]any{"type": produce, "by": s, "watched": watch})
			pool[produce] = rep.Text
			watch = produce
		}
		if issues == 0 {
			c.st.Metrics["tests_passed"] = 1
		} else {
			c.st.Metrics["tests_passed"] = 0
		}
		c.st.Done = "completed"
		if c.endRound() || issues == 0 && c.term == nil {
			return pool[watch], nil
		}
	}
}

// P05 — Du et al. debate: independent answers, then rounds in which each debater sees the
// others' answers, then the judge decides (the majority is the fallback).
func debateJudge(c *ictx) (string, error) {
	judge := c.one("", "judge")
	debaters := c.others(judge)
	return debate(c, judge, debaters, "Answer the question", "updated answer")
}

// P16 — red team attacks, defender answers, judge scores; the gate is on the score.
func redTeamJudge(c *ictx) (string, error) {
	judge := c.one("", "judge")
	red := c.one("", "red", "attacker")
	def := c.others(judge, red)
	var history []string
	for {
		atk, err := c.ask("", red, c.prompt(red, message{Intent: "Find the most serious failure or vulnerability in: " + c.task(), Inputs: history, Plan: []string{"Attack", "Show the evidence"}, Actions: []string{"ATTACK: <the failure>"}}))
		if err != nil {
			return "", err
		}
		defs, err := c.askAll(red, def, func(d string) string {
			return c.prompt(d, message{Intent: "Answer the red team's attack", Inputs: []string{quote("Attack", atk.Text)}, Plan: []string{"Fix or rebut"}, Actions: []string{"DEFENSE: <fix or rebuttal>"}})
		})
		if err != nil {
			return "", err
		}
		in := []string{quote("Attack", atk.Text)}
		for _, d := range defs {
			in = append(in, quote("Defense of "+d.Node, d.Text))
		}
		if judge != "" {
			v, err := c.ask("", judge, c.prompt(judge, message{Intent: "Score how well the defense holds (0 to 1)", Inputs: in, Plan: []string{"Weigh attack and defense"}, Actions: []string{`VERDICT: {"decision":"defended|broken","score":0.0,"reason":"…"}`}}))
			if err != nil {
				return "", err
			}
			if vd, ok := readVerdict(v.Text); ok {
				c.st.Decided, c.st.Decision = true, vd.Decision
				if vd.HasScore {
					c.st.Metrics["score"] = vd.Score
				}
			}
		}
		history = append(history, in...)
		if c.endRound() {
			return firstNonEmpty(c.st.Decision, "no verdict"), nil
		}
	}
}

func debate(c *ictx, judge string, debaters []string, intent, again string) (string, error) {
	last := map[string]string{}
	for {
		round := c.st.Round
		reps, err := c.askAll("", debaters, func(d string) string {
			m := message{Intent: intent + ": " + c.task(), Plan: []string{"Reason step by step", "Give your answer"}, Actions: []string{"ANSWER: <your answer>", "Your argument"}}
			if round > 0 {
				m.Intent = "Using the other debaters' answers as additional advice, give an " + again + ": " + c.task()
				m.Inputs = append(m.Inputs, quote("Your last answer", last[d]))
				for _, o := range debaters {
					if o != d {
						m.Inputs = append(m.Inputs, quote("Answer of "+o, last[o]))
						c.send(o, d, "reply", map[string]any{"answer": truncate(answer(last[o]), 500)}, "")
					}
				}
			}
			return c.prompt(d, m)
		})
		if err != nil {
			return "", err
		}
		var answers []string
		for _, r := range reps {
			last[r.Node] = r.Text
			answers = append(answers, answer(r.Text))
		}
		win, share, _ := majority(answers)
		c.st.Consensus = share
		// The judge is asked when the debate is about to end (its last round, or no bound).
		if judge != "" && (c.st.Round+1 >= c.maxRounds(3) || c.ctx.Err() != nil) {
			in := []string{}
			for _, d := range debaters {
				in = append(in, quote("Final answer of "+d, last[d]))
				c.send(d, judge, "reply", map[string]any{"final_answer": truncate(answer(last[d]), 500)}, "")
			}
			v, err := c.ask("", judge, c.prompt(judge, message{Intent: "Decide the debate: " + c.task(), Inputs: in, Plan: []string{"Compare the final answers", "Decide"}, Actions: []string{`VERDICT: {"decision":"<the answer you accept>","winner":"<debater id>","reason":"…"}`}}))
			if err != nil {
				return "", err
			}
			if vd, ok := readVerdict(v.Text); ok {
				c.st.Decided, c.st.Decision = true, firstNonEmpty(vd.Winner, vd.Decision)
			}
		}
		if c.endRound() {
			if c.st.Decided {
				return c.st.Decision, nil
			}
			c.r.emit(c.in.ID, "", "warning", map[string]any{"message": "no judge decision; the majority answer is reported"})
			return win, nil
		}
	}
}

// P06 — the judge finds errors, the critic explains them, the refiner fixes, the curator
// turns the fix into a reusable note; it converges when the judge accepts.
func criticRefinerCurator(c *ictx) (string, error) {
	judge := c.one("", "judge")
	critic := c.one("", "critic")
	refiner := c.one("", "refiner")
	curator := c.one("", "curator")
	draft := c.task()
	for {
		if judge != "" {
			v, err := c.ask("", judge, c.prompt(judge, message{Intent: "Find the errors in the current draft, or accept it", Inputs: []string{quote("Draft", draft)}, Plan: []string{"Check"}, Actions: []string{`VERDICT: {"decision":"accept|revise","reason":"the errors"}`}}))
			if err != nil {
				return "", err
			}
			if vd, ok := readVerdict(v.Text); ok && strings.EqualFold(vd.Decision, "accept") && c.st.Round > 0 {
				c.st.Decided, c.st.Decision = true, "accept"
				c.endRound()
				return draft, nil
			}
			draft = draft + "\n\nJudge: " + truncate(v.Text, 1500)
		}
		feedback := ""
		if critic != "" {
			f, err := c.ask(judge, critic, c.prompt(critic, message{Intent: "Give concrete feedback on the draft and the judge's findings", Inputs: []string{quote("Draft", draft)}, Plan: []string{"Explain each error", "Say how to fix it"}, Actions: []string{"Feedback list"}}))
			if err != nil {
				return "", err
			}
			feedback = f.Text
		}
		if refiner != "" {
			r, err := c.ask(critic, refiner, c.prompt(refiner, message{Intent: "Revise the draft with the feedback", Inputs: []string{quote("Draft", draft), quote("Feedback", feedback)}, Plan: []string{"Fix every point"}, Actions: []string{"The revised draft"}}))
			if err != nil {
				return "", err
			}
			draft = r.Text
		}
		if curator != "" {
			if _, err := c.ask(refiner, curator, c.prompt(curator, message{Intent: "Turn this round's fix into a short reusable rule", Inputs: []string{quote("Feedback", feedback)}, Plan: []string{"Generalise"}, Actions: []string{"RULE: <one line>"}})); err != nil {
				return "", err
			}
		}
		if c.endRound() {
			return draft, nil
		}
	}
}

// P07 — independent proposals, a vote, and the tie-break judge when no majority clears the
// threshold.
func majorityVote(c *ictx) (string, error) {
	tb := c.one("", "judge", "tiebreak", "tie-break", "aggregator")
	voters := c.others(tb)
	for {
		reps, err := c.askAll("", voters, func(v string) string {
			return c.prompt(v, message{Intent: "Vote independently on: " + c.task(), Plan: []string{"Decide alone"}, Actions: []string{`VOTE: {"vote":"<your choice>","reason":"…"}`}})
		})
		if err != nil {
			return "", err
		}
		var votes []string
		for _, r := range reps {
			votes = append(votes, answer(r.Text))
			if tb != "" {
				c.send(r.Node, tb, "vote", map[string]any{"vote": answer(r.Text)}, "")
			}
		}
		win, share, tie := majority(votes)
		c.st.Consensus = share
		c.r.emit(c.in.ID, "", "vote_counted", map[string]any{"winner": win, "share": share, "tie": tie, "votes": len(votes)})
		if (tie || c.reason() == "") && tb != "" {
			v, err := c.ask("", tb, c.prompt(tb, message{Intent: "Break the tie: " + c.task(), Inputs: []string{"Votes: " + strings.Join(votes, " | ")}, Plan: []string{"Pick one"}, Actions: []string{`VERDICT: {"decision":"<the choice>","reason":"…"}`}}))
			if err != nil {
				return "", err
			}
			if vd, ok := readVerdict(v.Text); ok {
				c.st.Decided, c.st.Decision, win = true, vd.Decision, vd.Decision
			}
		}
		if c.endRound() {
			return win, nil
		}
	}
}

// P08 — N samples (every sampler, or one agent several times), then the majority answer;
// an aggregator, when present, selects among the top answers.
func selfConsistency(c *ictx) (string, error) {
	agg := c.one("", "aggregator", "judge")
	samplers := c.others(agg)
	n := intParam(c.params, "samples", 0)
	if n <= 0 {
		n = max(len(samplers), 5)
	}
	var answers []string
	var texts []string
	for len(answers) < n {
		batch := samplers
		if rest := n - len(answers); rest < len(batch) {
			batch = batch[:rest]
		}
		reps, err := c.askAll("", batch, func(s string) string {
			return c.prompt(s, message{Intent: "Solve independently (sample " + strconv.Itoa(len(answers)+1) + "): " + c.task(), Plan: []string{"Reason step by step"}, Actions: []string{"ANSWER: <final answer>"}})
		})
		if err != nil {
			return "", err
		}
		for _, r := range reps {
			answers = append(answers, answer(r.Text))
			texts = append(texts, r.Text)
		}
	}
	win, share, _ := majority(answers)
	c.st.Consensus = share
	if agg != "" {
		v, err := c.ask("", agg, c.prompt(agg, message{Intent: "Select the best answer: " + c.task(), Inputs: []string{"Answers: " + strings.Join(answers, " | "), fmt.Sprintf("Majority: %s (%.0f%%)", win, share*100)}, Plan: []string{"Rank", "Select"}, Actions: []string{`VERDICT: {"decision":"<selected answer>","reason":"…"}`}}))
		if err != nil {
			return "", err
		}
		if vd, ok := readVerdict(v.Text); ok && vd.Decision != "accept" {
			win = vd.Decision
		}
		c.st.Decided = true
	}
	c.st.Done = "samples_complete"
	c.endRound()
	return win, nil
}

// P09 — Contract Net: call for proposals, propose or refuse, award the best bid (lowest
// cost), accept/reject, then inform-done or failure from the contractor.
func contractNet(c *ictx) (string, error) {
	mgr := c.one(c.chain()[0], "manager", "initiator", "orchestrator")
	bidders := c.others(mgr)
	for {
		for _, b := range bidders {
			c.send(mgr, b, "cfp", map[string]any{"task": truncate(c.task(), 1000)}, "")
		}
		reps, err := c.askAll(mgr, bidders, func(b string) string {
			return c.prompt(b, message{Intent: "Call for proposals: bid on this task or refuse: " + c.task(), Plan: []string{"Estimate your cost"}, Actions: []string{`BID: {"cost": <number>, "plan": "…"} or REFUSE: <reason>`}})
		})
		if err != nil {
			return "", err
		}
		type bid struct {
			node string
			cost float64
		}
		var bids []bid
		for _, r := range reps {
			if _, refused := field(r.Text, "REFUSE"); refused {
				c.send(r.Node, mgr, "refuse", map[string]any{}, "")
				continue
			}
			cost := 1.0 // a bid with no cost line still counts, at a neutral cost
			if m, ok := jsonField(r.Text, "BID"); ok {
				if f, ok := num(m["cost"]); ok {
					cost = f
				} else if f, ok := num(m["value"]); ok {
					cost = f
				}
			}
			bids = append(bids, bid{r.Node, cost})
			c.send(r.Node, mgr, "propose", map[string]any{"cost": cost}, "")
		}
		if len(bids) == 0 {
			c.st.Done = "no_bids"
			if c.endRound() {
				return "", fmt.Errorf("every bidder refused the task")
			}
			continue
		}
		sort.SliceStable(bids, func(i, j int) bool { return bids[i].cost < bids[j].cost })
		winner := bids[0].node
		for _, b := range bids {
			typ := "reject"
			if b.node == winner {
				typ = "accept"
			}
			c.send(mgr, b.node, typ, map[string]any{"cost": b.cost}, "")
		}
		c.r.emit(c.in.ID, "", "awarded", map[string]any{"winner": winner, "cost": bids[0].cost, "bids": len(bids)})
		done, err := c.ask(mgr, winner, c.prompt(winner, message{Intent: "You won the contract; carry out the task: " + c.task(), Plan: []string{"Execute", "Report"}, Actions: []string{"INFORM_DONE: <result> or FAILURE: <reason>", "A HANDOFF block if you edited files"}}))
		if err != nil {
			return "", err
		}
		if f, failed := field(done.Text, "FAILURE"); failed {
			c.send(winner, mgr, "failure", map[string]any{"reason": f}, "")
			if c.endRound() {
				return "", fmt.Errorf("contractor %s failed: %s", winner, f)
			}
			continue
		}
		c.send(winner, mgr, "inform_done", map[string]any{}, "")
		c.st.Decided, c.st.Done = true, "awarded"
		c.st.Metrics["tests_passed"] = 1
		c.endRound()
		return fmt.Sprintf("awarded to %s: %s", winner, firstNonEmpty(fieldOr(done.Text, "INFORM_DONE"), firstLine(done.Text))), nil
	}
}

func fieldOr(text, key string) string { v, _ := field(text, key); return v }

// P10 — offer and counteroffer until one side accepts (or rejects).
func negotiation(c *ictx) (string, error) {
	ids := c.chain()
	proposer := c.one(ids[0], "proposer", "buyer")
	responder := c.others(proposer)[0]
	offer := ""
	turn := proposer
	for {
		other := responder
		if turn == responder {
			other = proposer
		}
		intent := "Make an opening offer: " + c.task()
		if offer != "" {
			intent = "Respond to the offer: accept it, reject it, or make a counteroffer"
		}
		rep, err := c.ask(other, turn, c.prompt(turn, message{Intent: intent, Inputs: []string{quote("Current offer", firstNonEmpty(offer, "(none)"))}, Plan: []string{"Weigh the offer against your goal"}, Actions: []string{"ACCEPT, or REJECT: <reason>, or OFFER: <terms>"}}))
		if err != nil {
			return "", err
		}
		if _, ok := field(rep.Text, "REJECT"); ok {
			c.send(turn, other, "reject", map[string]any{}, "")
			c.st.Decided, c.st.Decision, c.st.Done = true, "rejected", "rejected"
			c.endRound()
			return "rejected: " + fieldOr(rep.Text, "REJECT"), nil
		}
		if strings.Contains(strings.ToUpper(rep.Text), "ACCEPT") && offer != "" && !strings.Contains(strings.ToUpper(fieldOr(rep.Text, "OFFER")), "ACCEPT") && fieldOr(rep.Text, "OFFER") == "" {
			c.send(turn, other, "accept", map[string]any{}, "")
			c.st.Decided, c.st.Decision, c.st.Done = true, "accepted", "accepted"
			c.endRound()
			return "accepted: " + offer, nil
		}
		offer = firstNonEmpty(fieldOr(rep.Text, "OFFER"), firstLine(rep.Text))
		typ := "offer"
		if turn == responder {
			typ = "counteroffer"
		}
		c.send(turn, other, typ, map[string]any{"terms": truncate(offer, 500)}, "")
		if turn == responder && c.endRound() {
			return "no agreement; last offer: " + offer, nil
		}
		turn = other
	}
}

// P11 — the control step picks a knowledge source that can fire (one whose trigger matches
// the newest entry, else the one idle longest); it posts to the blackboard.
func blackboard(c *ictx) (string, error) {
	hub := c.one("", "blackboard")
	sources := c.others(hub)
	triggers, _ := c.params["triggers"].(map[string]any)
	lastFired := map[string]int{}
	c.board.Post("engine", "problem", c.task())
	for {
		entries := c.board.Entries()
		newest := entries[len(entries)-1]
		pick := ""
		for _, s := range sources {
			if t, ok := triggers[s].(string); ok && t == newest.Kind && newest.Author != s {
				pick = s
				break
			}
		}
		if pick == "" {
			sort.SliceStable(sources, func(i, j int) bool { return lastFired[sources[i]] < lastFired[sources[j]] })
			pick = sources[0]
		}
		lastFired[pick] = c.st.Round + 1
		var in []string
		for _, e := range entries {
			in = append(in, fmt.Sprintf("#%d %s by %s: %s", e.Seq, e.Kind, e.Author, truncate(e.Text, 800)))
		}
		rep, err := c.ask(hub, pick, c.prompt(pick, message{Intent: "Contribute to the shared blackboard: " + c.task(), Inputs: in, Plan: []string{"Read the board", "Add what you know"}, Actions: []string{"POST <kind>: <your contribution> (kind: hypothesis, partial_result or solution)"}}))
		if err != nil {
			return "", err
		}
		kind, text := "partial_result", firstLine(rep.Text)
		for _, k := range []string{"solution", "hypothesis", "partial_result"} {
			if v, ok := field(rep.Text, "POST "+k); ok {
				kind, text = k, v
			}
		}
		c.send(pick, hub, "post", map[string]any{"kind": kind}, "")
		c.board.Post(pick, kind, text)
		c.r.emit(c.in.ID, "", "blackboard_posted", map[string]any{"by": pick, "kind": kind, "kept": len(c.board.Entries()), "trimmed": c.board.Trimmed()})
		if kind == "solution" {
			c.st.Decided, c.st.Done = true, "solution_posted"
		}
		if c.endRound() || c.st.Decided {
			return text, nil
		}
	}
}

// P12 — subscribers subscribe to a topic; the publisher publishes updates each round and
// subscribers acknowledge them, until the timeout or the round bound.
func publishSubscribe(c *ictx) (string, error) {
	pub := c.one(c.chain()[0], "publisher")
	subs := c.others(pub, c.one("", "broker"))
	topic, _ := c.params["topic"].(string)
	if topic == "" {
		topic = "updates"
	}
	for _, s := range subs {
		c.bus.Subscribe(s, topic)
	}
	var last string
	for {
		up, err := c.ask("", pub, c.prompt(pub, message{Intent: "Publish the next update on topic " + topic + ": " + c.task(), Plan: []string{"One update"}, Actions: []string{"PUBLISH: <update>"}}))
		if err != nil {
			return "", err
		}
		last = firstNonEmpty(fieldOr(up.Text, "PUBLISH"), firstLine(up.Text))
		if _, err := c.bus.Send(&bus.Envelope{From: pub, To: bus.Recipients{"topic:" + topic}, Type: "publish", Payload: map[string]any{"update": truncate(last, 500)}}); err != nil {
			c.r.emit(c.in.ID, "", "message_refused", map[string]any{"from": pub, "error": err.Error()})
		}
		c.r.emit(c.in.ID, "", "message", map[string]any{"from": pub, "to": "topic:" + topic, "type": "publish"})
		if _, err := c.askAll(pub, subs, func(s string) string {
			c.bus.Receive(s)
			return c.prompt(s, message{Intent: "React to the update on " + topic, Inputs: []string{quote("Update", last)}, Plan: []string{"Act on it"}, Actions: []string{"ACK: <what you did>"}})
		}); err != nil {
			return "", err
		}
		if c.endRound() {
			return last, nil
		}
	}
}

// P13 — the requester's query goes to the broker, which routes it to the provider whose
// role best matches and forwards the answer back.
func brokerFacilitator(c *ictx) (string, error) {
	broker := c.one("", "broker", "facilitator")
	requester := c.one(c.chain()[0], "requester", "client")
	providers := c.others(broker, requester)
	for {
		q, err := c.ask("", requester, c.prompt(requester, message{Intent: "Ask the broker for what you need: " + c.task(), Plan: []string{"State the need and a capability tag"}, Actions: []string{"QUERY: <question>", "CAPABILITY: <tag>"}}))
		if err != nil {
			return "", err
		}
		capTag := strings.ToLower(fieldOr(q.Text, "CAPABILITY"))
		c.send(requester, broker, "query", map[string]any{"capability": capTag}, "")
		prov := providers[c.st.Round%len(providers)]
		for _, p := range providers {
			if capTag != "" && (strings.Contains(c.roles[p], capTag) || strings.Contains(capTag, c.roles[p])) {
				prov = p
				break
			}
		}
		c.r.emit(c.in.ID, "", "routed", map[string]any{"broker": broker, "provider": prov, "capability": capTag})
		c.send(broker, prov, "query", map[string]any{}, "")
		ans, err := c.ask(broker, prov, c.prompt(prov, message{Intent: "Answer a query forwarded by the broker", Inputs: []string{quote("Query", firstNonEmpty(fieldOr(q.Text, "QUERY"), q.Text))}, Plan: []string{"Answer"}, Actions: []string{"ANSWER: <answer>"}}))
		if err != nil {
			return "", err
		}
		c.send(prov, broker, "reply", map[string]any{}, "")
		c.send(broker, requester, "reply", map[string]any{}, "")
		c.st.Done = "answered"
		if c.endRound() || c.term == nil {
			return answer(ans.Text), nil
		}
	}
}

// P14 — agents emit messages with target tags; the router delivers them (rate-limited) and
// the targets acknowledge.
func routerTargeted(c *ictx) (string, error) {
	router := c.one("", "router")
	agents := c.others(router)
	var delivered int
	for {
		reps, err := c.askAll(router, agents, func(a string) string {
			var roles []string
			for _, o := range agents {
				if o != a {
					roles = append(roles, o+" ("+c.roles[o]+")")
				}
			}
			return c.prompt(a, message{Intent: "Send what you have to the agents who need it: " + c.task(), Inputs: []string{"Others: " + strings.Join(roles, ", ")}, Plan: []string{"Pick targets by role or id"}, Actions: []string{"TARGET: <role or id>[, …]", "MESSAGE: <content>"}})
		})
		if err != nil {
			return "", err
		}
		for _, r := range reps {
			var to []string
			for _, t := range strings.Split(fieldOr(r.Text, "TARGET"), ",") {
				if t = strings.TrimSpace(strings.ToLower(t)); t != "" {
					to = append(to, "tag:"+t)
				}
			}
			if len(to) == 0 {
				continue
			}
			e := &bus.Envelope{From: r.Node, To: bus.Recipients(to), Type: "information", Payload: map[string]any{"message": truncate(fieldOr(r.Text, "MESSAGE"), 500)}}
			got, err := c.bus.Send(e)
			if err != nil {
				c.r.emit(c.in.ID, "", "message_refused", map[string]any{"from": r.Node, "error": err.Error()})
				continue
			}
			delivered += len(got)
			c.r.emit(c.in.ID, "", "message", map[string]any{"from": r.Node, "to": got, "type": "information", "via": router})
		}
		c.st.Done = "delivered"
		if c.endRound() || c.term == nil {
			return fmt.Sprintf("%d message(s) delivered, %d held by the rate limit", delivered, c.bus.Pending()), nil
		}
	}
}

// P17 — producer answers, the verifier checks with tools (citations, TOOL_CHECK), the judge
// accepts or sends it back for revision.
func factCheck(c *ictx) (string, error) {
	prod := c.one(c.chain()[0], "producer", "writer")
	verifier := c.one("", "verifier", "checker")
	judge := c.one("", "judge")
	feedback := ""
	for {
		a, err := c.ask("", prod, c.prompt(prod, message{Intent: "Answer with sources: " + c.task(), Inputs: []string{quote("Feedback", firstNonEmpty(feedback, "(none)"))}, Plan: []string{"Answer", "Cite"}, Actions: []string{"ANSWER: <answer>", "Citations as URLs or [n] references"}}))
		if err != nil {
			return "", err
		}
		c.st.Metrics["citations_count"] = float64(citations(a.Text))
		if verifier != "" && verifier != judge {
			v, err := c.ask(prod, verifier, c.prompt(verifier, message{Intent: "Check every claim and citation with your tools", Inputs: []string{quote("Answer", a.Text)}, Plan: []string{"Check", "Report"}, Actions: []string{"TOOL_CHECK: pass|fail", "Problems found"}}))
			if err != nil {
				return "", err
			}
			pass := strings.HasPrefix(strings.ToLower(fieldOr(v.Text, "TOOL_CHECK")), "pass")
			c.st.Metrics["tool_check_pass"] = b2f(pass)
			feedback = v.Text
		}
		if judge != "" {
			j, err := c.ask(verifier, judge, c.prompt(judge, message{Intent: "Accept the answer or send it back for revision", Inputs: []string{quote("Answer", a.Text), quote("Verification", feedback)}, Plan: []string{"Decide"}, Actions: []string{`VERDICT: {"decision":"accept|revise","reason":"…"}`}}))
			if err != nil {
				return "", err
			}
			if vd, ok := readVerdict(j.Text); ok && strings.EqualFold(vd.Decision, "accept") {
				c.st.Decided, c.st.Decision = true, "accept"
			}
		}
		if c.endRound() {
			return answer(a.Text), nil
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// P18 — plan, act, observe, reflect; the reflection's rules go to the memory notes.
func planExecuteReflect(c *ictx) (string, error) {
	ids := c.chain()
	pick := func(i int, words ...string) string { return c.one(ids[min(i, len(ids)-1)], words...) }
	planner, executorN, observer, reflector := pick(0, "planner"), pick(1, "executor"), pick(2, "observer"), pick(3, "reflector")
	lessons := ""
	for {
		plan, err := c.ask("", planner, c.prompt(planner, message{Intent: "Plan the next steps: " + c.task(), Inputs: []string{quote("Lessons so far", firstNonEmpty(lessons, "(none)"))}, Plan: []string{"3 to 7 steps"}, Actions: []string{"The plan"}}))
		if err != nil {
			return "", err
		}
		act, err := c.ask(planner, executorN, c.prompt(executorN, message{Intent: "Carry out the plan with your tools", Inputs: []string{quote("Plan", plan.Text)}, Plan: []string{"Act"}, Actions: []string{"What you did and its output; a HANDOFF block if you edited files"}}))
		if err != nil {
			return "", err
		}
		obs, err := c.ask(executorN, observer, c.prompt(observer, message{Intent: "Observe the results against the plan", Inputs: []string{quote("Plan", plan.Text), quote("Actions", act.Text)}, Plan: []string{"Compare"}, Actions: []string{"Observations"}}))
		if err != nil {
			return "", err
		}
		ref, err := c.ask(observer, reflector, c.prompt(reflector, message{Intent: "Reflect: what should change next time?", Inputs: []string{quote("Observations", obs.Text)}, Plan: []string{"Summarise", "Derive rules"}, Actions: []string{"RULE: <one lesson> (one line each)", "DONE when the task is complete"}}))
		if err != nil {
			return "", err
		}
		lessons += "\n" + fieldOr(ref.Text, "RULE")
		c.st.Done = "loop_complete"
		if c.endRound() || c.term == nil {
			return ref.Text, nil
		}
	}
}

// P19 — every agent writes its private log summary; the curator merges them into the
// shared memory (the blackboard and MEMORY.md).
func memorySync(c *ictx) (string, error) {
	curator := c.one("", "curator")
	agents := c.others(curator)
	logs, err := c.askAll("", agents, func(a string) string {
		return c.prompt(a, message{Intent: "Summarise what you learned and decided this session", Plan: []string{"Only durable facts"}, Actions: []string{"Up to 5 bullet points"}})
	})
	if err != nil {
		return "", err
	}
	var in []string
	for _, l := range logs {
		in = append(in, quote("Log of "+l.Node, l.Text))
		if c.board != nil {
			c.board.Post(l.Node, "private_log", truncate(l.Text, 2000))
		}
		if curator != "" {
			c.send(l.Node, curator, "information", map[string]any{"kind": "private_log"}, "")
		}
	}
	summary := strings.Join(in, "\n")
	if curator != "" {
		s, err := c.ask("", curator, c.prompt(curator, message{Intent: "Merge the agents' logs into the shared memory", Inputs: in, Plan: []string{"Deduplicate", "Keep durable decisions"}, Actions: []string{"MEMORY: <one durable line> (one per line)", "A short daily summary"}}))
		if err != nil {
			return "", err
		}
		summary = s.Text
		var lines []string
		for _, l := range strings.Split(s.Text, "\n") {
			if v, ok := field(l, "MEMORY"); ok && v != "" {
				lines = append(lines, "- "+v)
			}
		}
		if err := appendMemory(c.r.o.Workspace, lines); err != nil {
			return "", err
		}
		c.r.emit(c.in.ID, "", "memory_updated", map[string]any{"by": curator, "lines": len(lines)})
	}
	c.st.Done = "synced"
	c.endRound()
	return summary, nil
}

// P20 — the bridge serialises the interaction for an outside protocol: inside a run it
// calls the local agent with the task as an MCP-style tool call and returns its answer.
// (`agentcanvas mcp FLOW` exposes a whole flow to outside clients.)
func protocolBridge(c *ictx) (string, error) {
	bridge := c.one("", "bridge")
	local := c.others(bridge)
	if len(local) == 0 {
		return "", fmt.Errorf("the bridge has no local agent")
	}
	call := fmt.Sprintf(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":%q,"arguments":{"task":%q}}}`, c.r.f.Name, truncate(c.task(), 2000))
	c.r.emit(c.in.ID, "", "bridged", map[string]any{"protocol": firstNonEmpty(str(c.params["protocol"]), "mcp"), "bridge": bridge})
	rep, err := c.ask(bridge, local[0], c.prompt(local[0], message{Intent: "Answer an outside client's tool call", Inputs: []string{quote("Call", call)}, Plan: []string{"Do the task"}, Actions: []string{"ANSWER: <the result>"}}))
	if err != nil {
		return "", err
	}
	c.st.Done = "bridged"
	c.endRound()
	return answer(rep.Text), nil
}
