// P05 debate_judge and P16 red_team_judge: parties argue, a judge decides.

package engine

import (
	"fmt"
	"sort"
	"sync"
)

// P05 — Du et al. debate: round 1 independent answers (in parallel); in later rounds the
// debaters answer one after another, each seeing every other debater's latest answer; after
// the last round the judge decides (DECISION: <answer or debater id>); without a decision
// the majority of the final answers is reported.
func debateJudge(c *ictx) (string, error) {
	judge := c.cast.one("judge")
	debaters := c.cast.all("debater")
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
			reps, err := c.askAll("", debaters, func(d string) string { return prompt(d, 0) }, needAnswer)
			if err != nil {
				return "", err
			}
			for _, r := range reps {
				last[r.Node] = r.Text
			}
		} else {
			for _, d := range debaters {
				r, err := c.ask("", d, prompt(d, round), needAnswer)
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
			v, err := c.ask("", judge, c.prompt(judge, message{Intent: "Decide the debate: " + c.task(), Inputs: in, Plan: []string{"Compare the final answers", "Decide"}, Actions: []string{"DECISION: <the answer you accept, or the winning debater's id>", "REASON: <why>"}}), needVerdict("DECISION: <the answer you accept, or the winning debater's id>"))
			if err != nil {
				c.note("warning", map[string]any{"agent": judge, "message": "the judge failed (" + err.Error() + "); the majority answer is reported"})
			} else if vd, ok := readVerdict(v.Text); ok {
				c.st.Decided, c.st.Decision = true, firstNonEmpty(vd.Winner, vd.Decision)
				if id := pickID(c.st.Decision, debaters, c.names(debaters)); id != "" {
					c.st.Decision = id // "**debater_1** (the sounder argument)"
				}
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
	judge, red, def := c.cast.one("judge"), c.cast.one("red_team"), c.cast.one("defender")
	standing := ""
	for {
		atk, err := c.ask("", red, c.prompt(red, message{Intent: "Find the most serious failures or vulnerabilities in: " + c.task(), Inputs: []string{quote("Attacks still standing", firstNonEmpty(standing, "(none: first round)"))}, Plan: []string{"Attack", "Give a reproduction for each"}, Actions: []string{"ATTACK <n>: <claim> — <reproduction>, one line each"}}), needKeyed("ATTACK", "ATTACK <n>: <claim> — <reproduction>"))
		if err != nil {
			return "", err
		}
		attacks := keyedLines(atk.Text, "ATTACK")
		c.send(red, def, "attack", map[string]any{"attacks": len(attacks)}, "")
		d, err := c.ask(red, def, c.prompt(def, message{Intent: "Answer every attack by its number; fix what you can in your sandbox", Inputs: []string{quote("Attacks", atk.Text)}, Plan: []string{"Fix or rebut each"}, Actions: []string{"ATTACK <n>: <fix or rebuttal>, one line each; a HANDOFF block if you edited files"}}), needKeyed("ATTACK", "ATTACK <n>: <fix or rebuttal>"))
		if err != nil {
			return "", err
		}
		c.send(def, red, "defense", map[string]any{}, "")
		c.send(red, judge, "attack", map[string]any{}, "")
		c.send(def, judge, "defense", map[string]any{}, "")
		scoreLine := fmt.Sprintf("METRIC: score=<0…%d>", intParam(c.params, "score_scale", 10))
		v, err := c.ask("", judge, c.prompt(judge, message{Intent: "Score how well the defence holds", Inputs: []string{quote("Attacks", atk.Text), quote("Defence", d.Text)}, Plan: []string{"Weigh each attack against its answer"}, Actions: []string{scoreLine, "STANDING: <numbers of the attacks still standing, or none>"}}), needMetric("score", scoreLine))
		if err != nil {
			return "", err
		}
		if s, ok := metric(v.Text, "score"); ok {
			c.st.Metrics["score"] = s
		}
		standing = fieldOr(v.Text, "STANDING")
		if leadsWith(standing, "none") {
			standing = ""
		}
		if c.endRound() {
			return fmt.Sprintf("score %g; standing: %s", c.st.Metrics["score"], firstNonEmpty(standing, "none")), nil
		}
	}
}
