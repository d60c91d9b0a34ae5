package engine

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// executor runs one interaction of a pattern and returns what it yields. It ends rounds
// with c.endRound(), which applies the flow's termination; patterns/P*.md ("How AgentCanvas
// runs it") say how each runs, and the two must agree.
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

func fieldOr(text, key string) string { v, _ := field(text, key); return v }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// note logs an engine observation about the interaction (a skipped worker, a dropped reply).
func (c *ictx) note(event string, fields map[string]any) { c.r.emit(c.in.ID, "", event, fields) }

// --- P01, P15: managers and workers ----------------------------------------------------------

// P01 — the manager writes one ASSIGN line per worker, the workers work in parallel in their
// sandboxes and hand off, the manager reviews; tests_passed comes from params.test_command
// run in every worker's sandbox, else from the manager's METRIC: tests_passed=N.
func managerWorker(c *ictx) (string, error) {
	mgr := c.one(c.chain()[0], "manager", "orchestrator", "coordinator")
	for {
		review, err := c.manage(mgr, c.others(mgr), c.task(), 0)
		if err != nil {
			return "", err
		}
		if c.endRound() {
			return review, nil
		}
	}
}

// manage is one P01 round under mgr: assignments, the members' work (recursively, for
// sub-managers with members of their own, P15), the review. It sets tests_passed from the
// review (or the test command) when mgr is the top of the tree (depth 0).
func (c *ictx) manage(mgr string, members []string, task string, depth int) (string, error) {
	plan, err := c.ask("", mgr, c.prompt(mgr, message{
		Intent:  "Decompose the task into one assignment per member of your team: " + task,
		Inputs:  []string{"Team: " + strings.Join(members, ", ")},
		Plan:    []string{"Split the task", "Write one assignment per member"},
		Actions: []string{"One line per member: ASSIGN <member id>: <assignment>"},
	}))
	if err != nil {
		return "", err
	}
	assigned := map[string]string{}
	for _, k := range keyedLines(plan.Text, "ASSIGN") {
		assigned[k.Key] = k.Value
	}
	var todo []string
	for _, m := range members {
		if _, ok := assigned[m]; ok {
			todo = append(todo, m)
			typ := "task_assignment"
			if len(c.children(m)) > 0 {
				typ = "subtask" // to a sub-manager (P15)
			}
			c.send(mgr, m, typ, map[string]any{"assignment": truncate(assigned[m], 1000)}, "")
		} else {
			c.note("warning", map[string]any{"message": "no ASSIGN line for " + m + "; it is skipped this round", "agent": m})
		}
	}
	reports := make([]string, len(todo))
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	for i, m := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if kids := c.children(m); len(kids) > 0 && depth+1 < intParam(c.params, "max_depth", 2) {
				rep, err := c.manage(m, kids, assigned[m], depth+1)
				reports[i], errs[i] = quote("Subtree report of "+m, rep), err
				c.send(m, mgr, "subtree_report", map[string]any{"bytes": len(rep)}, "")
				return
			}
			r, err := c.ask(mgr, m, c.prompt(m, message{Intent: assigned[m], Inputs: []string{quote("Task", task)}, Plan: []string{"Do the assignment in your sandbox", "Report what changed"}, Actions: []string{"What you did, then a HANDOFF block (spec §3) naming the files you changed"}}))
			if err != nil {
				errs[i] = err
				return
			}
			report := quote("Handoff of "+m, r.Text)
			if r.Handoff == nil {
				report = quote("Reply of "+m+" (no HANDOFF block: a failed step)", r.Text)
				c.note("warning", map[string]any{"message": m + " replied without a HANDOFF block", "agent": m})
			} else {
				c.send(m, mgr, "handoff", map[string]any{"changedFiles": r.Handoff["ChangedFiles"]}, "")
			}
			reports[i] = report
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return "", e
		}
	}
	review, err := c.ask("", mgr, c.prompt(mgr, message{Intent: "Review your team's work; accept or reject each member's handoff", Inputs: append([]string{quote("Task", task)}, reports...), Plan: []string{"Check each handoff against its assignment", "Accept or reject it"}, Actions: []string{"ACCEPT <member id> or REJECT <member id>: <why>, one line each", "METRIC: tests_passed=1 when the accepted work passes its tests, else 0"}}))
	if err != nil {
		return "", err
	}
	c.recordVerdicts(mgr, review.Text)
	if depth == 0 {
		passed, ok := c.testCommand(todo)
		if !ok {
			passed, _ = metric(review.Text, "tests_passed")
		}
		c.st.Metrics["tests_passed"] = passed
	}
	return review.Text, nil
}

// recordVerdicts keeps a reviewer's latest ACCEPT / REJECT line for each member ("REJECT
// coder: why"): auto-apply never applies the proposal of a member whose handoff was rejected.
func (c *ictx) recordVerdicts(reviewer, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rejected == nil {
		c.rejected = map[string]string{}
	}
	for _, k := range keyedLines(text, "ACCEPT") {
		delete(c.rejected, k.Key)
	}
	for _, k := range keyedLines(text, "REJECT") {
		c.rejected[k.Key] = reviewer + ": " + k.Value
	}
}

// children are the nodes a node has edges to (its team in a tree).
func (c *ictx) children(node string) []string {
	var out []string
	for _, e := range c.in.Edges {
		if e.Source == node && e.Target != node {
			out = append(out, e.Target)
		}
	}
	return out
}

// testCommand runs params.test_command (argv) in every worker's sandbox work folder; ok is
// false when there is no command. passed is 1 when it exits 0 everywhere. Each output is kept
// as the sandbox's proposal/test.log.
func (c *ictx) testCommand(workers []string) (passed float64, ok bool) {
	argv := stringList(c.params["test_command"])
	if len(argv) == 0 || len(workers) == 0 {
		return 0, false
	}
	root, err := os.OpenRoot(c.r.o.Workspace)
	if err != nil {
		return 0, true
	}
	defer root.Close()
	passed = 1
	for _, w := range workers {
		paths, err := sandbox.PathsFor(c.r.o.Workspace, c.r.id, w)
		if err != nil {
			return 0, true
		}
		rel, err := sandbox.RelDir(c.r.id, w)
		if err != nil {
			return 0, true
		}
		if st, err := os.Stat(paths.WorkDir); err != nil || !st.IsDir() {
			continue // a member that worked in the workspace has nothing of its own to test
		}
		c.r.flushLog()
		cmd := exec.CommandContext(c.ctx, argv[0], argv[1:]...)
		cmd.Dir = paths.WorkDir
		out, err := cmd.CombinedOutput()
		if root.MkdirAll(filepath.Join(rel, "proposal"), 0o755) == nil {
			_ = root.WriteFile(filepath.Join(rel, "proposal", "test.log"), out, 0o644)
		}
		c.note("tests_run", map[string]any{"agent": w, "command": argv, "passed": err == nil})
		if err != nil {
			passed = 0
		}
	}
	return passed, true
}

func stringList(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// P15 — a tree of managers: the root assigns to sub-managers, each runs a P01 round with its
// workers (subtrees in parallel) and reports up; the root's review carries the gate.
func hierarchicalTree(c *ictx) (string, error) {
	into := map[string]bool{}
	for _, e := range c.in.Edges {
		into[e.Target] = true
	}
	root := c.nodes[0]
	for _, id := range c.nodes {
		if !into[id] {
			root = id
			break
		}
	}
	for {
		review, err := c.manage(root, c.children(root), c.task(), 0)
		if err != nil {
			return "", err
		}
		if c.endRound() {
			return review, nil
		}
	}
}

// --- P02, P03, P04: role play and pipelines --------------------------------------------------

// P02 — CAMEL: inception prompts fix the roles; the user gives one instruction a turn, the
// assistant solves it, until the user's reply holds the done token (task_done = 1; that turn
// is not sent to the assistant).
func rolePlayPair(c *ictx) (string, error) {
	user := c.one(c.chain()[0], "user", "client", "instructor")
	assistant := c.others(user)[0]
	token := firstNonEmpty(str(c.params["done_token"]), "<CAMEL_TASK_DONE>")
	inception := func(self, partner string) string {
		return fmt.Sprintf("You are %s (%s); your partner is %s (%s). Never flip roles. Task: %s", self, c.roles[self], partner, c.roles[partner], c.task())
	}
	var transcript []string
	last := ""
	for {
		ins, err := c.ask(assistant, user, c.prompt(user, message{Intent: inception(user, assistant) + ". Instruct the assistant one step at a time; reply " + token + " when the task is done.", Inputs: append([]string{quote("Assistant's last solution", firstNonEmpty(last, "(none yet)"))}, transcript...), Plan: []string{"One instruction at a time"}, Actions: []string{"Instruction: <one instruction>, or " + token}}))
		if err != nil {
			return "", err
		}
		if strings.Contains(ins.Text, token) {
			c.st.Metrics["task_done"] = 1 // this turn is not sent to the assistant nor counted as a round
			c.r.checkpoint()
			return firstNonEmpty(last, ins.Text), nil
		}
		transcript = append(transcript, quote("Instruction", truncate(ins.Text, 1500)))
		c.send(user, assistant, "instruction", map[string]any{"bytes": len(ins.Text)}, "")
		sol, err := c.ask(user, assistant, c.prompt(assistant, message{Intent: inception(assistant, user) + ". Carry out the user's instruction.", Inputs: append([]string{quote("Instruction", ins.Text)}, transcript...), Plan: []string{"Solve", "Explain"}, Actions: []string{"Solution: <your solution>. Next request."}}))
		if err != nil {
			return "", err
		}
		last = sol.Text
		transcript = append(transcript, quote("Solution", truncate(sol.Text, 1500)))
		c.send(assistant, user, "solution", map[string]any{"bytes": len(sol.Text)}, "")
		if c.endRound() {
			return last, nil
		}
	}
}

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

// markerLine is the text after the marker on the first line that starts with it.
func markerLine(text, marker string) (string, bool) {
	for _, l := range strings.Split(text, "\n") {
		if l = cleanLine(l); strings.HasPrefix(l, marker) {
			return strings.TrimSpace(l[len(marker):]), true
		}
	}
	return "", false
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
		rep, err := c.ask(m.from, m.to, c.prompt(m.to, message{Intent: fmt.Sprintf("As %s, act on the %s you received and publish your %s", c.roles[m.to], m.typ, out), Inputs: []string{quote(m.typ+" from "+firstNonEmpty(m.from, "the user"), m.text)}, Plan: []string{"Check the input against its template", "Write your " + out + " with its template"}, Actions: []string{"Your " + out, "METRIC: artifact_valid=1 when the input you received is valid (for QA: when the code passes its tests), else 0"}}))
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

// --- P05, P06, P07, P08, P16, P17: judging and voting ----------------------------------------

// P05 — Du et al. debate: round 1 independent answers (in parallel); in later rounds the
// debaters answer one after another, each seeing every other debater's latest answer; after
// the last round the judge decides (DECISION: <answer or debater id>); without a decision
// the majority of the final answers is reported.
func debateJudge(c *ictx) (string, error) {
	judge := c.one("", "judge")
	debaters := c.others(judge)
	sort.Strings(debaters)
	last := map[string]string{}
	var mu sync.Mutex
	prompt := func(d string, round int) string {
		m := message{Intent: "Answer the question: " + c.task(), Plan: []string{"Reason step by step", "Give your answer"}, Actions: []string{"ANSWER: <your answer>", "Your argument"}}
		if round > 0 {
			mu.Lock()
			defer mu.Unlock()
			m.Intent = "Using these answers from the other debaters as additional advice, give an updated answer and your argument: " + c.task()
			m.Inputs = append(m.Inputs, quote("Your last answer", last[d]))
			for _, o := range debaters {
				if o != d {
					m.Inputs = append(m.Inputs, quote("Answer of "+o, last[o]))
				}
			}
		}
		return c.prompt(d, m)
	}
	bound := c.maxRounds(3)
	for {
		round := c.st.Round
		if round == 0 {
			reps, err := c.askAll("", debaters, func(d string) string { return prompt(d, 0) })
			if err != nil {
				return "", err
			}
			for _, r := range reps {
				last[r.Node] = r.Text
			}
		} else {
			for _, d := range debaters {
				r, err := c.ask("", d, prompt(d, round))
				if err != nil {
					return "", err
				}
				mu.Lock()
				last[d] = r.Text
				mu.Unlock()
				for _, o := range debaters {
					if o != d {
						c.send(d, o, "answer", map[string]any{"answer": truncate(answer(r.Text), 500)}, "")
					}
				}
			}
		}
		var answers []string
		for _, d := range debaters {
			answers = append(answers, answer(last[d]))
		}
		win, share, _ := majority(answers)
		c.st.Consensus = share
		if judge != "" && c.st.Round+1 >= bound {
			var in []string
			for _, d := range debaters {
				in = append(in, quote("Final answer of "+d, last[d]))
				c.send(d, judge, "final_answer", map[string]any{"answer": truncate(answer(last[d]), 500)}, "")
			}
			v, err := c.ask("", judge, c.prompt(judge, message{Intent: "Decide the debate: " + c.task(), Inputs: in, Plan: []string{"Compare the final answers", "Decide"}, Actions: []string{"DECISION: <the answer you accept, or the winning debater's id>", "REASON: <why>"}}))
			if err != nil {
				c.note("warning", map[string]any{"message": "the judge failed (" + err.Error() + "); the majority answer is reported"})
			} else if vd, ok := readVerdict(v.Text); ok {
				c.st.Decided, c.st.Decision = true, firstNonEmpty(vd.Winner, vd.Decision)
			}
		}
		if c.endRound() {
			if c.st.Decided {
				if a, ok := last[c.st.Decision]; ok { // the judge named a debater
					return c.st.Decision + ": " + answer(a), nil
				}
				return c.st.Decision, nil
			}
			c.note("warning", map[string]any{"message": "no judge decision; the majority answer is reported"})
			return win, nil
		}
	}
}

// P16 — red team (ATTACK <n>: lines), defender (answers by number, in its sandbox), judge
// (METRIC: score=<0…10>, STANDING: <numbers or none>); standing attacks start the next round.
func redTeamJudge(c *ictx) (string, error) {
	judge := c.one("", "judge")
	red := c.one("", "red", "attacker")
	def := c.one("", "defender", "blue")
	standing := ""
	for {
		atk, err := c.ask("", red, c.prompt(red, message{Intent: "Find the most serious failures or vulnerabilities in: " + c.task(), Inputs: []string{quote("Attacks still standing", firstNonEmpty(standing, "(none: first round)"))}, Plan: []string{"Attack", "Give a reproduction for each"}, Actions: []string{"ATTACK <n>: <claim> — <reproduction>, one line each"}}))
		if err != nil {
			return "", err
		}
		attacks := keyedLines(atk.Text, "ATTACK")
		c.send(red, def, "attack", map[string]any{"attacks": len(attacks)}, "")
		d, err := c.ask(red, def, c.prompt(def, message{Intent: "Answer every attack by its number; fix what you can in your sandbox", Inputs: []string{quote("Attacks", atk.Text)}, Plan: []string{"Fix or rebut each"}, Actions: []string{"ATTACK <n>: <fix or rebuttal>, one line each; a HANDOFF block if you edited files"}}))
		if err != nil {
			return "", err
		}
		c.send(def, red, "defense", map[string]any{}, "")
		c.send(red, judge, "attack", map[string]any{}, "")
		c.send(def, judge, "defense", map[string]any{}, "")
		v, err := c.ask("", judge, c.prompt(judge, message{Intent: "Score how well the defence holds", Inputs: []string{quote("Attacks", atk.Text), quote("Defence", d.Text)}, Plan: []string{"Weigh each attack against its answer"}, Actions: []string{fmt.Sprintf("METRIC: score=<0…%d>", intParam(c.params, "score_scale", 10)), "STANDING: <numbers of the attacks still standing, or none>"}}))
		if err != nil {
			return "", err
		}
		if s, ok := metric(v.Text, "score"); ok {
			c.st.Metrics["score"] = s
		}
		standing = fieldOr(v.Text, "STANDING")
		if strings.EqualFold(standing, "none") {
			standing = ""
		}
		if c.endRound() {
			return fmt.Sprintf("score %g; standing: %s", c.st.Metrics["score"], firstNonEmpty(standing, "none")), nil
		}
	}
}

// P06 — the judge reports errors (METRIC: open_errors=N), the critic explains them, the
// refiner fixes in its sandbox; open_errors=0 ends the round before the critic. The curator,
// when present, turns the loop into a note in today's memory file.
func criticRefinerCurator(c *ictx) (string, error) {
	judge := c.one("", "judge")
	critic := c.one("", "critic")
	refiner := c.one("", "refiner")
	curator := c.one("", "curator")
	draft := c.task()
	var history []string
	loop := func() error {
		for {
			v, err := c.ask("", judge, c.prompt(judge, message{Intent: "Find the errors in the current solution", Inputs: []string{quote("Solution", draft)}, Plan: []string{"Check every step"}, Actions: []string{"METRIC: open_errors=<N> (0 when it is correct)", "The first wrong step, when N > 0"}}))
			if err != nil {
				return err
			}
			n, ok := metric(v.Text, "open_errors")
			if !ok {
				n = 1 // no count: the errors are not shown to be gone
			}
			c.st.Metrics["open_errors"] = n
			history = append(history, quote(fmt.Sprintf("Error report %d", c.st.Round+1), v.Text))
			if n > 0 {
				c.send(judge, critic, "error_report", map[string]any{"open_errors": n}, "")
				f, err := c.ask(judge, critic, c.prompt(critic, message{Intent: "Explain the reported errors and how to fix them", Inputs: []string{quote("Solution", draft), quote("Error report", v.Text)}, Plan: []string{"Explain each error", "Say how to fix it"}, Actions: []string{"A critique, one point per error"}}))
				if err != nil {
					return err
				}
				history = append(history, quote("Critique", f.Text))
				c.send(critic, refiner, "critique", map[string]any{}, "")
				r, err := c.ask(critic, refiner, c.prompt(refiner, message{Intent: "Revise the solution with the critique", Inputs: []string{quote("Solution", draft), quote("Critique", f.Text)}, Plan: []string{"Fix every point"}, Actions: []string{"The revised solution; a HANDOFF block if you edited files"}}))
				if err != nil {
					return err
				}
				draft = r.Text
				c.send(refiner, judge, "revised_solution", map[string]any{}, "")
			}
			if c.endRound() {
				return nil
			}
		}
	}
	err := loop()
	if curator != "" && c.ctx.Err() == nil {
		c.send(refiner, curator, "accepted_fix", map[string]any{}, "")
		note, cerr := c.ask(refiner, curator, c.prompt(curator, message{Intent: "Turn this loop into a short reusable note", Inputs: append(history, quote("Accepted fix", draft)), Plan: []string{"Generalise"}, Actions: []string{"A few lines for the memory notes"}}))
		if cerr != nil {
			return "", cerr
		}
		if werr := appendNotes(c.r, "Curator "+curator+" ("+c.in.ID+")", note.Text); werr != nil {
			return "", werr
		}
		c.note("memory_updated", map[string]any{"by": curator, "file": "notes"})
	}
	return draft, err
}

// appendNotes adds a titled block to today's memory notes (memory/<date>.md).
func appendNotes(r *run, title, text string) error {
	root, err := os.OpenRoot(r.o.Workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(MemoryDir, 0o755); err != nil {
		return err
	}
	f, err := root.OpenFile(filepath.Join(MemoryDir, r.now().UTC().Format("2006-01-02")+".md"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "\n## %s\n\n%s\n", title, strings.TrimSpace(truncate(text, 4000)))
	return err
}

// P07 — an optional proposal step (PROPOSAL: lines, when the task lists no OPTIONS:), then
// ballots in parallel (VOTE: <option>; no vote is an abstention); share ≥ threshold wins,
// else the tie-break decides (DECISION: <option>); else the plurality, "no consensus".
func majorityVote(c *ictx) (string, error) {
	tb := c.one("", "tiebreak", "tie-break", "judge")
	voters := c.others(tb, c.one("", "aggregator"))
	if len(voters) == 0 {
		return "", fmt.Errorf("no voters")
	}
	options := fieldOr(c.task(), "OPTIONS")
	if options == "" {
		reps, err := c.askAll("", voters, func(v string) string {
			return c.prompt(v, message{Intent: "Propose an answer to: " + c.task(), Plan: []string{"Decide alone"}, Actions: []string{"PROPOSAL: <your answer>"}})
		})
		if err != nil {
			return "", err
		}
		seen := map[string]bool{}
		var opts []string
		for _, r := range reps {
			if p, ok := field(r.Text, "PROPOSAL"); ok && p != "" && !seen[normalise(p)] {
				seen[normalise(p)] = true
				opts = append(opts, fmt.Sprintf("%d. %s", len(opts)+1, p))
			}
		}
		options = strings.Join(opts, "; ")
		c.note("proposals", map[string]any{"options": opts})
	}
	format := firstNonEmpty(str(c.params["ballot_format"]), "VOTE: <option>")
	threshold := 0.0
	c.term.Walk(func(t *flow.Termination) {
		if t.Type == "consensus_threshold" && t.Threshold != nil {
			threshold = *t.Threshold
		}
	})
	for {
		reps, err := c.askAll("", voters, func(v string) string {
			return c.prompt(v, message{Intent: "Vote independently on: " + c.task(), Inputs: []string{"Options: " + firstNonEmpty(options, "(free answer)")}, Plan: []string{"Decide alone"}, Actions: []string{format}})
		})
		if err != nil {
			return "", err
		}
		var votes, ballots []string
		for _, r := range reps {
			v := ""
			if m, ok := jsonField(r.Text, "VOTE"); ok {
				v = strings.TrimSpace(str(m["vote"], m["value"]))
			}
			ballots = append(ballots, r.Node+": "+firstNonEmpty(v, "(abstained)"))
			if v != "" {
				votes = append(votes, v)
			}
			if agg := c.one("", "aggregator"); agg != "" {
				c.send(r.Node, agg, "ballot", map[string]any{"vote": v}, "")
			}
		}
		win, _, tie := majority(votes)
		share := 0.0
		if win != "" {
			n := 0
			for _, v := range votes {
				if normalise(v) == normalise(win) {
					n++
				}
			}
			share = float64(n) / float64(len(reps)) // abstentions count in the denominator
		}
		c.st.Consensus = share
		c.note("vote_counted", map[string]any{"winner": win, "share": share, "tie": tie, "ballots": ballots})
		if (threshold == 0 || share < threshold || tie) && tb != "" {
			v, err := c.ask("", tb, c.prompt(tb, message{Intent: "No option reached the threshold; decide: " + c.task(), Inputs: []string{"Options: " + firstNonEmpty(options, "(free answer)"), "Ballots: " + strings.Join(ballots, " | ")}, Plan: []string{"Pick one option"}, Actions: []string{"DECISION: <option>"}}))
			if err != nil {
				return "", err
			}
			if vd, ok := readVerdict(v.Text); ok {
				c.st.Decided, c.st.Decision, win = true, vd.Decision, vd.Decision
			}
		}
		if c.endRound() {
			if c.reason() == "max_rounds" {
				c.note("warning", map[string]any{"message": "no consensus; the plurality option is reported"})
				return win + " (no consensus)", nil
			}
			return win, nil
		}
	}
}

// P08 — self-consistency: N samples (sampler nodes run again until N replies exist, each a
// fresh process); the last ANSWER: line of each, normalised, is counted; the most frequent
// wins (ties: the one seen first). The aggregator is the engine.
func selfConsistency(c *ictx) (string, error) {
	samplers := c.others(c.one("", "aggregator"))
	n := intParam(c.params, "samples", 0)
	if n <= 0 {
		n = len(samplers)
	}
	format := firstNonEmpty(str(c.params["answer_format"]), "ANSWER: <final answer>")
	var answers []string
	replies := 0
	for replies < n {
		batch := samplers
		if rest := n - replies; rest < len(batch) {
			batch = batch[:rest]
		}
		reps, err := c.askAll("", batch, func(s string) string {
			return c.prompt(s, message{Intent: "Solve independently: " + c.task(), Plan: []string{"Reason step by step"}, Actions: []string{format}})
		})
		if err != nil {
			return "", err
		}
		for _, r := range reps {
			replies++
			if a, ok := lastAnswer(r.Text); ok {
				answers = append(answers, a)
				if agg := c.one("", "aggregator"); agg != "" {
					c.send(r.Node, agg, "sample", map[string]any{"answer": truncate(a, 200)}, "")
				}
			} else {
				c.note("warning", map[string]any{"message": "a sample from " + r.Node + " has no ANSWER: line; it is dropped", "agent": r.Node})
			}
		}
	}
	win, share, _ := majority(answers)
	tally := map[string]int{}
	for _, a := range answers {
		tally[normalise(a)]++
	}
	c.st.Consensus = share
	c.note("tally", map[string]any{"answers": tally, "samples": replies, "winner": win})
	c.endRound()
	return win, nil
}

// --- P09, P10: contracting and negotiating ---------------------------------------------------

// P09 — Contract Net (FIPA): the manager writes the cfp; every bidder answers PERFORMATIVE:
// propose or refuse (late bids are refused); the manager awards (DECISION: <bidder id>);
// accept-proposal to the winner, reject-proposal to the others; the contractor reports
// inform-done (with its HANDOFF) or failure.
func contractNet(c *ictx) (string, error) {
	mgr := c.one(c.chain()[0], "manager", "initiator", "orchestrator")
	bidders := c.others(mgr)
	deadline := intParam(c.params, "bid_deadline_ms", 0)
	for {
		cfp, err := c.ask("", mgr, c.prompt(mgr, message{Intent: "Write the call for proposals for: " + c.task(), Inputs: []string{"Bidders: " + strings.Join(bidders, ", ")}, Plan: []string{"State the task and what a bid must contain"}, Actions: []string{"PERFORMATIVE: cfp", "The call"}}))
		if err != nil {
			return "", err
		}
		for _, b := range bidders {
			c.send(mgr, b, "cfp", map[string]any{"bytes": len(cfp.Text)}, "")
		}
		started := c.r.now()
		arrived := make([]int64, len(bidders))
		idx := map[string]int{}
		for i, b := range bidders {
			idx[b] = i
		}
		reps, err := c.askAll(mgr, bidders, func(b string) string {
			return c.prompt(b, message{Intent: "Answer the call for proposals: bid or refuse", Inputs: []string{quote("Call for proposals", cfp.Text)}, Plan: []string{"Estimate your cost"}, Actions: []string{"PERFORMATIVE: propose (then COST: <number> and your plan) or PERFORMATIVE: refuse (then why)"}})
		})
		if err != nil {
			return "", err
		}
		for _, r := range reps {
			arrived[idx[r.Node]] = c.r.now().Sub(started).Milliseconds()
		}
		var proposers []string
		var bids []string
		for _, r := range reps {
			perf := strings.ToLower(fieldOr(r.Text, "PERFORMATIVE"))
			late := deadline > 0 && arrived[idx[r.Node]] > int64(deadline)
			if perf != "propose" || late {
				c.send(r.Node, mgr, "refuse", map[string]any{"late": late}, "")
				if late {
					c.note("warning", map[string]any{"message": r.Node + "'s bid arrived after bid_deadline_ms; it is refused", "agent": r.Node})
				}
				continue
			}
			proposers = append(proposers, r.Node)
			bids = append(bids, quote("Proposal of "+r.Node, r.Text))
			c.send(r.Node, mgr, "propose", map[string]any{"cost": fieldOr(r.Text, "COST")}, "")
		}
		if len(proposers) == 0 {
			c.note("warning", map[string]any{"message": "no bids: every bidder refused"})
			c.st.Round = c.maxRounds(1) - 1
			c.endRound()
			return "no bids", nil
		}
		award, err := c.ask("", mgr, c.prompt(mgr, message{Intent: "Award the contract to the best bid (" + firstNonEmpty(str(c.params["award_rule"]), "best_bid") + ")", Inputs: bids, Plan: []string{"Rank the proposals", "Pick one"}, Actions: []string{"DECISION: <bidder id>"}}))
		if err != nil {
			return "", err
		}
		winner := ""
		if vd, ok := readVerdict(award.Text); ok {
			for _, p := range proposers {
				if strings.EqualFold(strings.TrimSpace(vd.Decision), p) {
					winner = p
				}
			}
		}
		if winner == "" {
			winner = proposers[0]
			c.note("warning", map[string]any{"message": "the manager named no proposer; the first proposal, " + winner + ", is accepted"})
		}
		for _, p := range proposers {
			typ := "reject-proposal"
			if p == winner {
				typ = "accept-proposal"
			}
			c.send(mgr, p, typ, map[string]any{}, "")
		}
		c.st.Decided, c.st.Decision = true, winner
		c.note("awarded", map[string]any{"winner": winner, "proposals": len(proposers)})
		done, err := c.ask(mgr, winner, c.prompt(winner, message{Intent: "PERFORMATIVE: accept-proposal — you won the contract; carry out the task: " + c.task(), Inputs: []string{quote("Call for proposals", cfp.Text)}, Plan: []string{"Execute", "Report"}, Actions: []string{"PERFORMATIVE: inform-done with a HANDOFF block, or PERFORMATIVE: failure and why"}}))
		if err != nil {
			return "", err
		}
		result := ""
		if strings.EqualFold(fieldOr(done.Text, "PERFORMATIVE"), "inform-done") {
			c.send(winner, mgr, "inform-done", map[string]any{}, "")
			c.st.Done = "inform-done"
			result = "inform-done by " + winner
		} else {
			c.send(winner, mgr, "failure", map[string]any{}, "")
			c.st.Done = "failure"
			result = "failure by " + winner
		}
		if done.Handoff == nil && c.st.Done == "inform-done" {
			c.note("warning", map[string]any{"message": winner + " reported inform-done without a HANDOFF block", "agent": winner})
		}
		if c.endRound() {
			return result, nil
		}
	}
}

// P10 — alternating offers: each reply ends with {"act": offer|counteroffer|accept|reject,
// "terms": {…}}; a reply without one counts as reject; accept or reject closes the deal.
func negotiation(c *ictx) (string, error) {
	proposer := c.one(c.chain()[0], "proposer", "buyer")
	responder := c.others(proposer)[0]
	bound := c.maxRounds(5)
	var history []string
	var terms any
	for {
		for _, side := range []string{proposer, responder} {
			other := responder
			if side == responder {
				other = proposer
			}
			intent := "Make an opening offer: " + c.task()
			if len(history) > 0 {
				intent = "Respond to the last offer: accept it, reject it, or make a counteroffer: " + c.task()
			}
			rep, err := c.ask(other, side, c.prompt(side, message{Intent: intent, Inputs: append([]string{fmt.Sprintf("Rounds left after this one: %d", bound-c.st.Round-1)}, history...), Plan: []string{"Weigh the offer against your constraints and the deadline"}, Actions: []string{`End with one JSON line: {"act": "offer"|"counteroffer"|"accept"|"reject", "terms": {…}}`}}))
			if err != nil {
				return "", err
			}
			act, t := "", any(nil)
			for _, m := range jsonLines(rep.Text) {
				if a := str(m["act"]); a != "" {
					act, t = a, m["terms"]
				}
			}
			switch act {
			case "offer", "counteroffer":
				if t == nil {
					act = ""
				}
			case "accept", "reject":
			default:
				act = ""
			}
			if act == "" {
				c.note("warning", map[string]any{"message": side + "'s reply has no valid act line; it counts as reject", "agent": side})
				act = "reject"
			}
			c.send(side, other, act, map[string]any{"terms": t}, "")
			if act == "accept" || act == "reject" {
				c.st.Metrics["deal_closed"] = 1
				c.st.Decision = act
				c.endRound()
				if act == "accept" && terms != nil {
					return "deal: " + compactJSON(terms), nil
				}
				return "no deal", nil
			}
			terms = t
			history = append(history, fmt.Sprintf("%s (%s): %s %s", side, c.roles[side], act, compactJSON(t)))
		}
		if c.endRound() {
			return "no deal", nil
		}
	}
}

// --- P11, P12, P13, P14: shared spaces, brokers and routers ----------------------------------

// P11 — blackboard: knowledge sources post entries (POST <kind>: <text>); the control step
// picks, among the sources with an unconsumed entry they trigger on (params.triggers, else
// any entry they did not post), the one whose oldest such entry is oldest (ties: flow order);
// it gets those entries, which are then consumed for it. A solution entry ends it.
func blackboard(c *ictx) (string, error) {
	hub := c.one("", "blackboard")
	sources := c.others(hub)
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
		rep, err := c.ask(hub, pick, c.prompt(pick, message{Intent: "Contribute to the blackboard: " + c.task(), Inputs: in, Plan: []string{"Read the entries", "Add what you know"}, Actions: []string{"POST <kind>: <text>, one line per entry (kind: a word such as hypothesis or partial_result; solution when the problem is solved)"}}))
		if err != nil {
			return "", err
		}
		solution := ""
		for _, p := range keyedLines(rep.Text, "POST") {
			kind := strings.ToLower(firstNonEmpty(p.Key, "note"))
			c.board.Post(pick, kind, p.Value)
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
			return firstNonEmpty(solution, "no solution"), nil
		}
	}
}

// P12 — publish/subscribe: subscribers start on params.topics; the publisher prints
// PUBLISH <topic>: <text>; the broker delivers each event to each subscriber of the topic as
// one prompt (rate-limited, TTL-checked); SUBSCRIBE/UNSUBSCRIBE lines change subscriptions;
// REPLY: <text> lines go back to the publisher, which runs again with them.
func publishSubscribe(c *ictx) (string, error) {
	broker := c.one("", "broker")
	pub := c.one(c.chain()[0], "publisher")
	subs := c.others(pub, broker)
	topics := stringList(c.params["topics"])
	if t := str(c.params["topic"]); t != "" {
		topics = append(topics, t)
	}
	subscribed := map[string]map[string]bool{}
	for _, s := range subs {
		subscribed[s] = map[string]bool{}
		for _, t := range topics {
			subscribed[s][t] = true
			c.bus.Subscribe(s, t)
		}
	}
	ttl := intParam(c.params, "ttl_s", 0)
	replies := []string{}
	delivered := 0
	for {
		up, err := c.ask("", pub, c.prompt(pub, message{Intent: "Publish events for your subscribers: " + c.task(), Inputs: append([]string{"Topics: " + strings.Join(topics, ", ")}, replies...), Plan: []string{"One event a line"}, Actions: []string{"PUBLISH <topic>: <text>, one line per event"}}))
		if err != nil {
			return "", err
		}
		replies = replies[:0]
		for _, p := range keyedLines(up.Text, "PUBLISH") {
			c.send(pub, broker, "publish", map[string]any{"topic": p.Key}, "")
			e := &bus.Envelope{From: broker, To: bus.Recipients{"topic:" + p.Key}, Type: "notification", Payload: map[string]any{"eventType": p.Key, "text": truncate(p.Value, 2000)}, Context: bus.Context{InteractionID: c.in.ID}}
			if ttl > 0 {
				e.Options = &bus.Options{TTL: ttl}
			}
			to, err := c.bus.Send(e)
			if err != nil {
				c.note("message_refused", map[string]any{"from": broker, "type": "notification", "topic": p.Key, "error": err.Error()})
				continue
			}
			c.note("message", map[string]any{"id": e.ID, "from": broker, "to": to, "type": "notification", "topic": p.Key, "publisher": pub})
		}
		// The broker delivers what the rate limit lets through, one prompt per event.
		for _, s := range subs {
			msgs, rejected := c.bus.Receive(s)
			for _, r := range rejected {
				c.note("message_refused", map[string]any{"to": s, "error": r.Error()})
			}
			for _, m := range msgs {
				p, _ := m.Payload.(map[string]any)
				topic, text := str(p["eventType"]), str(p["text"])
				if !subscribed[s][topic] {
					continue // unsubscribed since it was sent
				}
				delivered++
				rep, err := c.ask("", s, c.prompt(s, message{Intent: "An event on " + topic + " arrived; act on it", Inputs: []string{quote("Event", text)}, Plan: []string{"Act on it"}, Actions: []string{"Optional lines: SUBSCRIBE <topic>, UNSUBSCRIBE <topic>, REPLY: <text for the publisher>"}}))
				if err != nil {
					return "", err
				}
				for _, t := range words(rep.Text, "SUBSCRIBE") {
					subscribed[s][t] = true
					c.bus.Subscribe(s, t)
					c.note("subscribed", map[string]any{"agent": s, "topic": t})
				}
				for _, t := range words(rep.Text, "UNSUBSCRIBE") {
					delete(subscribed[s], t)
					c.bus.Unsubscribe(s, t)
					c.note("unsubscribed", map[string]any{"agent": s, "topic": t})
				}
				if r := fieldOr(rep.Text, "REPLY"); r != "" {
					replies = append(replies, quote("Reply of "+s, r))
					c.send(s, broker, "reply", map[string]any{"bytes": len(r), "for": pub}, "")
				}
			}
		}
		any := false
		for _, s := range subs {
			any = any || len(subscribed[s]) > 0
		}
		held := c.bus.Pending()
		switch {
		case !any && held == 0:
			c.st.Done = "all_unsubscribed"
		case len(replies) == 0:
			c.st.Done = "quiescent" // nothing for the publisher to react to
		}
		if c.endRound() || c.st.Done != "" {
			return fmt.Sprintf("%d event(s) delivered, %d held by the rate limit", delivered, held), nil
		}
	}
}

// P13 — broker: providers' capabilities are their skills and role (registered at the start);
// the requester prints REQUEST <capability>: <text>; the broker forwards it to the matching
// provider with the fewest forwards so far and relays the answer back.
func brokerFacilitator(c *ictx) (string, error) {
	broker := c.one("", "broker", "facilitator")
	requester := c.one(c.chain()[0], "requester", "client")
	providers := c.others(broker, requester)
	caps := map[string][]string{}
	for _, p := range providers {
		caps[p] = append(caps[p], c.roles[p])
		if n, ok := c.r.f.NodeByID(p); ok && n.Agent != nil {
			caps[p] = append(caps[p], n.Agent.Skills...)
		}
		c.note("register", map[string]any{"provider": p, "capabilities": caps[p]})
	}
	forwards := map[string]int{}
	var answers []string
	for {
		q, err := c.ask("", requester, c.prompt(requester, message{Intent: "Ask the broker for what you need: " + c.task(), Inputs: answers, Plan: []string{"Name a capability and the request"}, Actions: []string{"REQUEST <capability>: <request>; no REQUEST line when you need nothing more"}}))
		if err != nil {
			return "", err
		}
		reqs := keyedLines(q.Text, "REQUEST")
		if len(reqs) == 0 {
			c.st.Done = "completed"
			return firstNonEmpty(strings.Join(answers, "\n"), "no request"), nil
		}
		rq := reqs[len(reqs)-1]
		c.send(requester, broker, "request", map[string]any{"capability": rq.Key}, "")
		prov := ""
		for _, p := range providers {
			match := false
			for _, cp := range caps[p] {
				if strings.Contains(strings.ToLower(cp), strings.ToLower(rq.Key)) {
					match = true
				}
			}
			if match && (prov == "" || forwards[p] < forwards[prov]) {
				prov = p
			}
		}
		if prov == "" {
			c.send(broker, requester, "response", map[string]any{"failure": "no provider"}, "")
			answers = append(answers, "failure: no provider for "+rq.Key)
		} else {
			forwards[prov]++
			c.send(broker, prov, "forward", map[string]any{"capability": rq.Key}, "")
			ans, err := c.ask("", prov, c.prompt(prov, message{Intent: "Answer a request forwarded by the broker", Inputs: []string{quote("Request", rq.Value)}, Plan: []string{"Answer"}, Actions: []string{"Your answer"}}))
			if err != nil {
				return "", err
			}
			c.send(prov, broker, "response", map[string]any{}, "")
			c.send(broker, requester, "response", map[string]any{"provider": prov}, "")
			answers = append(answers, quote("Answer of "+prov+" to "+rq.Key, ans.Text))
		}
		if c.endRound() {
			return strings.Join(answers, "\n"), nil
		}
	}
}

// P14 — router: peers end their replies with JSON lines {"to": [tags], "text": …} (an optional
// "type", targeted_message by default, must be one the edge allows, or it is refused); the router
// delivers each to every other peer carrying a tag (its id, its role, params.tags), under the
// rate limit; the next round's prompts carry what was delivered and the acks.
func routerTargeted(c *ictx) (string, error) {
	router := c.one("", "router")
	peers := c.others(router)
	tags := map[string][]string{}
	extra, _ := c.params["tags"].(map[string]any)
	for _, p := range peers {
		tags[p] = append([]string{p, c.roles[p]}, stringList(extra[p])...)
	}
	inbox := map[string][]string{}
	acks := map[string][]string{}
	delivered := 0
	for {
		var mu sync.Mutex
		reps, err := c.askAll("", peers, func(p string) string {
			mu.Lock()
			defer mu.Unlock()
			var others []string
			for _, o := range peers {
				if o != p {
					others = append(others, o+" (tags "+strings.Join(tags[o], ", ")+")")
				}
			}
			in := append([]string{"Peers: " + strings.Join(others, "; ")}, inbox[p]...)
			in = append(in, acks[p]...)
			inbox[p], acks[p] = nil, nil
			return c.prompt(p, message{Intent: "Work on the task and send what others need: " + c.task(), Inputs: in, Plan: []string{"Pick targets by tag"}, Actions: []string{`End with one JSON line per message: {"to": ["<tag>", …], "text": "…"}`}})
		})
		if err != nil {
			return "", err
		}
		sent := 0
		for _, r := range reps {
			for _, m := range jsonLines(r.Text) {
				want := stringList(m["to"])
				text := str(m["text"])
				typ := firstNonEmpty(str(m["type"]), "targeted_message")
				if len(want) == 0 {
					continue
				}
				sent++
				var to []string
				for _, o := range peers {
					if o == r.Node {
						continue
					}
					for _, w := range want {
						if containsFold(tags[o], w) && !containsFold(to, o) {
							to = append(to, o)
						}
					}
				}
				if len(to) == 0 {
					acks[r.Node] = append(acks[r.Node], "ack: undeliverable (no peer carries "+strings.Join(want, ", ")+")")
					c.note("undeliverable", map[string]any{"from": r.Node, "to": want})
					continue
				}
				e := &bus.Envelope{From: r.Node, To: bus.Recipients(to), Type: typ, Payload: map[string]any{"text": truncate(text, 2000)}, Context: bus.Context{InteractionID: c.in.ID}}
				if _, err := c.bus.Send(e); err != nil {
					c.note("message_refused", map[string]any{"from": r.Node, "to": to, "type": typ, "error": err.Error()})
					acks[r.Node] = append(acks[r.Node], "ack: refused ("+err.Error()+")")
					continue
				}
				c.note("message", map[string]any{"id": e.ID, "from": r.Node, "to": to, "type": typ, "via": router})
				if truthy(c.params["ack_required"]) {
					acks[r.Node] = append(acks[r.Node], "ack: delivered to "+strings.Join(to, ", "))
				}
			}
		}
		for _, p := range peers {
			msgs, _ := c.bus.Receive(p)
			for _, m := range msgs {
				pl, _ := m.Payload.(map[string]any)
				inbox[p] = append(inbox[p], quote("Message from "+m.From, str(pl["text"])))
				delivered++
			}
		}
		if sent == 0 {
			c.st.Done = "quiescent"
			c.note("quiescent", map[string]any{"message": "no peer sent anything this round"})
		}
		if c.endRound() || sent == 0 {
			return fmt.Sprintf("%d message(s) delivered, %d held by the rate limit", delivered, c.bus.Pending()), nil
		}
	}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func truthy(v any) bool { b, _ := v.(bool); return b }

// --- P17, P18, P19, P20 ----------------------------------------------------------------------

// P17 — producer (CLAIM: <claim> [source] lines), verifier (sees the claims only; CHECK <n>:
// pass|fail — evidence), judge (DECISION: accept | revise <numbers>). tool_check_pass = every
// claim passed; citations_count = passed claims with a source. Revise sends the failed claims
// back; accept ends the loop.
func factCheck(c *ictx) (string, error) {
	prod := c.one(c.chain()[0], "producer", "writer")
	verifier := c.one("", "verifier", "checker")
	judge := c.one("", "judge")
	feedback := ""
	for {
		a, err := c.ask(judge, prod, c.prompt(prod, message{Intent: "Answer with sources: " + c.task(), Inputs: []string{quote("Claims to revise", firstNonEmpty(feedback, "(none: first answer)"))}, Plan: []string{"Answer", "Cite"}, Actions: []string{firstNonEmpty(str(c.params["claim_format"]), "CLAIM: <claim> [source]") + ", one line per claim"}}))
		if err != nil {
			return "", err
		}
		claims := keyedLines(a.Text, "CLAIM")
		var list []string
		for i, cl := range claims {
			list = append(list, fmt.Sprintf("%d. %s", i+1, cl.Value))
		}
		c.send(prod, verifier, "answer", map[string]any{"claims": len(claims)}, "")
		v, err := c.ask(prod, verifier, c.prompt(verifier, message{Intent: "Check every claim and its source with your tools", Inputs: []string{quote("Claims", strings.Join(list, "\n"))}, Plan: []string{"Check each claim"}, Actions: []string{"CHECK <n>: pass|fail — <evidence>, one line per claim"}}))
		if err != nil {
			return "", err
		}
		pass := map[int]bool{}
		var failed []string
		for _, k := range keyedLines(v.Text, "CHECK") {
			n, err := strconv.Atoi(k.Key)
			if err != nil || n < 1 || n > len(claims) {
				continue
			}
			if strings.HasPrefix(strings.ToLower(k.Value), "pass") {
				pass[n] = true
			} else {
				failed = append(failed, fmt.Sprintf("%d. %s — %s", n, claims[n-1].Value, k.Value))
			}
		}
		cited := 0
		for n := range pass {
			if citations(claims[n-1].Value) > 0 {
				cited++
			}
		}
		c.st.Metrics["tool_check_pass"] = b2f(len(claims) > 0 && len(pass) == len(claims))
		c.st.Metrics["citations_count"] = float64(cited)
		c.send(verifier, judge, "check_report", map[string]any{"passed": len(pass), "claims": len(claims)}, "")
		j, err := c.ask(verifier, judge, c.prompt(judge, message{Intent: "Accept the answer or send claims back for revision", Inputs: []string{quote("Claims", strings.Join(list, "\n")), quote("Check report", v.Text)}, Plan: []string{"Decide"}, Actions: []string{"DECISION: accept, or DECISION: revise <claim numbers>"}}))
		if err != nil {
			return "", err
		}
		vd, _ := readVerdict(j.Text)
		accepted := strings.HasPrefix(strings.ToLower(vd.Decision), "accept")
		if accepted {
			c.send(judge, prod, "accept", map[string]any{}, "")
			c.st.Decided, c.st.Decision, c.st.Done = true, "accept", "accepted"
		} else {
			c.send(judge, prod, "revise", map[string]any{"claims": vd.Decision}, "")
			feedback = strings.Join(failed, "\n") + "\n" + vd.Decision
		}
		if c.endRound() || accepted {
			return strings.Join(list, "\n"), nil
		}
	}
}

// P18 — plan, execute (in the sandbox), observe, reflect; reflections feed the next plan and
// go to today's memory notes.
func planExecuteReflect(c *ictx) (string, error) {
	ids := c.chain()
	pick := func(i int, words ...string) string { return c.one(ids[min(i, len(ids)-1)], words...) }
	planner, executorN, observer, reflector := pick(0, "planner"), pick(1, "executor"), pick(2, "observer"), pick(3, "reflector")
	var reflections []string
	for {
		plan, err := c.ask(reflector, planner, c.prompt(planner, message{Intent: "Plan the next steps: " + c.task(), Inputs: reflections, Plan: []string{"3 to 7 steps"}, Actions: []string{"The plan"}}))
		if err != nil {
			return "", err
		}
		act, err := c.ask(planner, executorN, c.prompt(executorN, message{Intent: "Carry out the plan with your tools", Inputs: []string{quote("Plan", plan.Text)}, Plan: []string{"Act"}, Actions: []string{"What you did and its output; a HANDOFF block if you edited files"}}))
		if err != nil {
			return "", err
		}
		changed := "(no edits)"
		if act.Handoff != nil {
			changed = fmt.Sprint(act.Handoff["ChangedFiles"])
		}
		obs, err := c.ask(executorN, observer, c.prompt(observer, message{Intent: "Observe the results against the plan", Inputs: []string{quote("Plan", plan.Text), quote("Trace", act.Text), "Changed files: " + changed}, Plan: []string{"Compare"}, Actions: []string{"Your observation"}}))
		if err != nil {
			return "", err
		}
		ref, err := c.ask(observer, reflector, c.prompt(reflector, message{Intent: "Reflect: what should change in the next loop?", Inputs: []string{quote("Observation", obs.Text)}, Plan: []string{"Summarise", "Derive lessons"}, Actions: []string{"Your reflection"}}))
		if err != nil {
			return "", err
		}
		reflections = append(reflections, quote(fmt.Sprintf("Reflection %d", c.st.Round+1), ref.Text))
		if err := appendNotes(c.r, fmt.Sprintf("Reflection of %s (%s, loop %d)", reflector, c.in.ID, c.st.Round+1), ref.Text); err != nil {
			return "", err
		}
		if c.endRound() {
			return ref.Text, nil
		}
	}
}

// P19 — the curator merges the members' logs into the shared memory: each member's notes
// from this run's step events (a member with none is asked for its log), plus MEMORY.md.
// The reply's ## MEMORY section replaces MEMORY.md, its ## NOTES go to today's notes, and
// dated notes older than keep_last_days are deleted.
func memorySync(c *ictx) (string, error) {
	curator := c.one("", "curator")
	// Members are who reports to the curator; the memory store is the engine's.
	var members []string
	store := ""
	for _, e := range c.in.Edges {
		if e.Target == curator && e.Source != curator && !slices.Contains(members, e.Source) {
			members = append(members, e.Source)
		}
		if e.Source == curator {
			store = e.Target
		}
	}
	if curator == "" {
		return "", fmt.Errorf("memory_sync needs a curator")
	}
	notes := c.stepNotes()
	var silent []string
	for _, m := range members {
		if len(notes[m]) == 0 {
			silent = append(silent, m)
		}
	}
	if len(silent) > 0 {
		logs, err := c.askAll("", silent, func(a string) string {
			return c.prompt(a, message{Intent: "Summarise what you learned and decided this session", Plan: []string{"Only durable facts"}, Actions: []string{"Up to 5 bullet points"}})
		})
		if err != nil {
			return "", err
		}
		for _, l := range logs {
			notes[l.Node] = append(notes[l.Node], truncate(l.Text, 2000))
		}
	}
	var in []string
	for _, m := range members {
		in = append(in, quote("Log of "+m, strings.Join(notes[m], "\n")))
		c.send(m, curator, "private_log", map[string]any{"notes": len(notes[m])}, "")
		if c.board != nil {
			c.board.Post(m, "private_log", truncate(strings.Join(notes[m], "\n"), 2000))
		}
	}
	in = append(in, quote("Current MEMORY.md", firstNonEmpty(c.r.files.memory(), "(empty)")))
	s, err := c.ask("", curator, c.prompt(curator, message{Intent: "Merge the members' logs into the shared memory", Inputs: in, Plan: []string{"Deduplicate", "Keep durable decisions"}, Actions: []string{"## MEMORY (the new full MEMORY.md)", "## NOTES (today's notes)"}}))
	if err != nil {
		return "", err
	}
	mem, dayNotes := mdSection(s.Text, "MEMORY"), mdSection(s.Text, "NOTES")
	if mem == "" && dayNotes == "" {
		dayNotes = s.Text
	}
	removed, err := writeCurated(c.r, mem, dayNotes, retentionDays(c.params))
	if err != nil {
		return "", err
	}
	if store != "" {
		c.send(curator, store, "memory_update", map[string]any{}, "")
	}
	c.note("memory_updated", map[string]any{"by": curator, "memory": mem != "", "notes": dayNotes != "", "deleted": removed})
	c.endRound()
	return firstNonEmpty(dayNotes, mem), nil
}

func retentionDays(params map[string]any) int {
	if r := retention(params); r != nil {
		return r.KeepLastDays
	}
	return 0
}

// stepNotes collects the note of every step each node took in this run, from the log.
func (c *ictx) stepNotes() map[string][]string {
	out := map[string][]string{}
	c.r.flushLog()
	evs, err := eventlog.ReadAll(c.r.o.Workspace, c.r.f.Name)
	if err != nil {
		return out
	}
	for _, e := range evs {
		if e.RunID != c.r.id || e.Event != "step" || e.InteractionID == c.in.ID {
			continue
		}
		to, _ := e.Fields["to"].(string)
		if n, _ := e.Fields["note"].(string); to != "" && n != "" && len(out[to]) < 20 {
			out[to] = append(out[to], "- "+n)
		}
	}
	return out
}

// mdSection is the body under a "## title" heading, up to the next "## " heading.
func mdSection(text, title string) string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "## ") {
			in = strings.EqualFold(strings.TrimSpace(t[3:]), title)
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// writeCurated replaces MEMORY.md (atomically: temp file and rename, inside the workspace
// root), appends today's notes, and deletes dated notes older than keepDays.
func writeCurated(r *run, mem, notes string, keepDays int) ([]string, error) {
	root, err := os.OpenRoot(r.o.Workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if err := root.MkdirAll(MemoryDir, 0o755); err != nil {
		return nil, err
	}
	if mem != "" {
		tmp := filepath.Join(MemoryDir, ".MEMORY.md.tmp")
		if err := root.WriteFile(tmp, []byte(mem+"\n"), 0o644); err != nil {
			return nil, err
		}
		if err := root.Rename(tmp, filepath.Join(MemoryDir, "MEMORY.md")); err != nil {
			return nil, err
		}
	}
	if notes != "" {
		if err := appendNotes(r, "Curated notes ("+r.id+")", notes); err != nil {
			return nil, err
		}
	}
	var removed []string
	if keepDays > 0 {
		cut := r.now().UTC().AddDate(0, 0, -keepDays).Format("2006-01-02")
		ents, _ := fs.ReadDir(root.FS(), MemoryDir)
		for _, ent := range ents {
			name := ent.Name()
			day := strings.TrimSuffix(name, ".md")
			if len(day) == 10 && day != name && day < cut && datePattern(day) {
				if root.Remove(filepath.Join(MemoryDir, name)) == nil {
					removed = append(removed, name)
				}
			}
		}
	}
	return removed, nil
}

func datePattern(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// protocolPerson is P20's protocol when the outside caller is a person (SkillInvocation).
const protocolPerson = "person"

// P20 — inside a run, the bridge makes one MCP-style tools/call to the local agent with the
// run's task and returns its reply (`agentcanvas mcp FLOW` serves whole flows to outside
// clients).
func protocolBridge(c *ictx) (string, error) {
	bridge := c.one("", "bridge")
	local := c.others(bridge)
	if len(local) == 0 {
		return "", fmt.Errorf("the bridge has no local agent")
	}
	protocol := firstNonEmpty(str(c.params["protocol"]), "mcp")
	call := fmt.Sprintf(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":%q,"arguments":{"prompt":%q}}}`, local[0], truncate(c.task(), 2000))
	m := message{Intent: "Answer an outside client's tool call", Inputs: []string{quote("Call", call)}, Plan: []string{"Do the task"}, Actions: []string{"Your answer (the tool result text)"}}
	if protocol == protocolPerson {
		// A person at the editor or the terminal (a skill invocation): their words as they are.
		call = c.task()
		m = message{Intent: "Do what the person who invoked you asks, following your instructions", Inputs: []string{quote("Request", call)}, Plan: []string{"Follow your instructions", "Do the task"}, Actions: []string{"What you did, and your answer"}}
	}
	c.note("bridged", map[string]any{"protocol": protocol, "bridge": bridge})
	c.send(bridge, local[0], "request", map[string]any{"bytes": len(call)}, "")
	rep, err := c.ask("", local[0], c.prompt(local[0], m))
	if err != nil {
		return "", err
	}
	c.send(local[0], bridge, "response", map[string]any{"bytes": len(rep.Text)}, "")
	c.st.Done = "bridged"
	c.endRound()
	return rep.Text, nil
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// busType is t when the bus knows it, else information (a role's custom artefact type
// travels in the payload).
func busType(t string) string {
	if slices.Contains(bus.Types, t) {
		return t
	}
	return "information"
}

// edgeType is want when the edge src → dst may carry it (its `messages`), else the edge's
// first message type (the coder → tester phase carries code, not instruction).
func (c *ictx) edgeType(src, dst, want string) string {
	for _, e := range c.in.Edges {
		if e.Source == src && e.Target == dst {
			if msgs := stringList(e.Data.Params["messages"]); len(msgs) > 0 && !slices.Contains(msgs, want) {
				return msgs[0]
			}
		}
	}
	return want
}
