// P07 majority_vote and P08 self_consistency.

package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// P07 — an optional proposal step (PROPOSAL: lines, when the task lists no OPTIONS:), then
// ballots in parallel (VOTE: <option>; no vote is an abstention); share ≥ threshold wins,
// else the tie-break decides (DECISION: <option>); else the plurality, "no consensus".
func majorityVote(c *ictx) (string, error) {
	tb := c.cast.one("tiebreak")
	voters := c.cast.all("voter")
	if len(voters) == 0 {
		return "", fmt.Errorf("no voters")
	}
	options := fieldOr(c.task(), "OPTIONS")
	var proposed []string // the options the voters proposed, numbered from 1
	if options == "" {
		reps, err := c.askAll("", voters, func(v string) string {
			return c.prompt(v, message{Intent: "Propose an answer to: " + c.task(), Plan: []string{"Decide alone"}, Actions: []string{"PROPOSAL: <your answer>"}})
		}, needField("PROPOSAL", "PROPOSAL: <your answer>"))
		if err = hard(err); err != nil {
			return "", err
		}
		seen := map[string]bool{}
		var opts []string
		for _, r := range reps {
			if len(r.Missing) > 0 {
				c.lacking(r, "it proposes no option")
			}
			if p, ok := field(r.Text, "PROPOSAL"); ok && p != "" && !seen[normalise(p)] {
				seen[normalise(p)] = true
				proposed = append(proposed, p)
				opts = append(opts, fmt.Sprintf("%d. %s", len(opts)+1, p))
			}
		}
		options = strings.Join(opts, "; ")
		c.note("proposals", map[string]any{"options": opts})
	}
	format := firstNonEmpty(str(c.params["ballot_format"]), "VOTE: <option>")
	// The threshold is the termination's consensus_threshold, else the pattern's 0.6: a share
	// that reaches it wins outright, and only a tie or a share below it goes to the tie-break.
	threshold, own := defaultThreshold, false
	c.term.Walk(func(t *flow.Termination) {
		if t.Type == "consensus_threshold" && t.Threshold != nil {
			threshold, own = *t.Threshold, true
		}
	})
	tally := "" // the last ballot's count, shown in the next one (a second ballot without a tie-break)
	for {
		in := []string{"Options: " + firstNonEmpty(options, "(free answer)")}
		if tally != "" {
			in = append(in, "The last ballot reached no consensus: "+tally)
		}
		reps, err := c.askAll("", voters, func(v string) string {
			return c.prompt(v, message{Intent: "Vote independently on: " + c.task(), Inputs: in, Plan: []string{"Decide alone"}, Actions: []string{format}})
		}, need{line: format, has: func(t string) bool { return vote(t, nil) != "" }})
		if err = hard(err); err != nil {
			return "", err
		}
		var votes, ballots, silent []string
		for _, r := range reps {
			v := vote(r.Text, proposed)
			if v == "" {
				c.lacking(r, "it abstains")
				silent = append(silent, r.Node)
			}
			ballots = append(ballots, r.Node+": "+firstNonEmpty(v, "(abstained)"))
			if v != "" {
				votes = append(votes, v)
			}
			if agg := c.cast.one("aggregator"); agg != "" {
				c.send(r.Node, agg, "ballot", map[string]any{"vote": v}, "")
			}
		}
		if len(votes) == 0 {
			return "", &NoWorkError{Msg: "no voter voted: " + strings.Join(silent, ", ") + " wrote no `" + format + "` line, even when asked again"}
		}
		win, _, tie := majority(votes)
		leaders, counts := leading(votes, tie)
		share := float64(counts[normalise(win)]) / float64(len(reps)) // abstentions count in the denominator
		c.st.Consensus = share
		tally = tallyText(votes, counts)
		c.note("vote_counted", map[string]any{"winner": win, "share": share, "tie": tie, "ballots": ballots, "threshold": threshold, "leading": leaders})
		reached := share >= threshold && !tie
		switch {
		case reached && !own:
			c.st.Done = "consensus_threshold" // the pattern's threshold, the flow setting none
		case !reached && tb != "":
			d, err := c.tiebreak(tb, options, ballots, leaders, proposed)
			if err != nil {
				return "", err
			}
			c.st.Decided, c.st.Decision, win = true, d, d
		}
		if c.endRound() || c.st.Done != "" {
			if c.reason() == "max_rounds" && !c.st.Decided && !reached {
				c.note("warning", map[string]any{"message": "no consensus; the plurality option is reported"})
				return win + " (no consensus)", nil
			}
			return win, nil
		}
	}
}

// defaultThreshold is P07's consensus threshold when the flow sets none.
const defaultThreshold = 0.6

// leading are the options the tie-break may pick (P07: "among the tied or leading options"):
// on a tie, the options tied for the most votes; else every option that got a vote, most
// votes first. Each as first written; counts are the votes per normalised option.
func leading(votes []string, tie bool) (leaders []string, counts map[string]int) {
	counts = map[string]int{}
	most := 0
	for _, v := range votes {
		counts[normalise(v)]++
		most = max(most, counts[normalise(v)])
	}
	seen := map[string]bool{}
	for _, v := range votes {
		if n := normalise(v); !seen[n] && (!tie || counts[n] == most) {
			seen[n] = true
			leaders = append(leaders, v)
		}
	}
	sort.SliceStable(leaders, func(i, j int) bool { return counts[normalise(leaders[i])] > counts[normalise(leaders[j])] })
	return leaders, counts
}

// tallyText is a ballot's count, "red 2, blue 2".
func tallyText(votes []string, counts map[string]int) string {
	var parts []string
	seen := map[string]bool{}
	for _, v := range votes {
		if n := normalise(v); !seen[n] {
			seen[n] = true
			parts = append(parts, fmt.Sprintf("%s %d", v, counts[n]))
		}
	}
	return strings.Join(parts, ", ")
}

// tiebreak asks the tie-break judge to decide between the leading options (P07: "the tie-break
// judge picks among the tied or leading options"); a decision for any other option is asked
// again, then fails the interaction.
func (c *ictx) tiebreak(tb, options string, ballots, leaders, proposed []string) (string, error) {
	pick := func(t string) string {
		vd, ok := readVerdict(t)
		if !ok {
			return ""
		}
		d := firstNonEmpty(vote("VOTE: "+vd.Decision, proposed), vd.Decision)
		for _, l := range leaders {
			if normalise(l) == normalise(d) {
				return l
			}
		}
		return ""
	}
	line := "DECISION: " + strings.Join(leaders, "|")
	v, err := c.ask("", tb, c.prompt(tb, message{Intent: "No option reached the threshold; decide between the leading options: " + c.task(), Inputs: []string{"Options: " + firstNonEmpty(options, "(free answer)"), "Leading options: " + strings.Join(leaders, ", "), "Ballots: " + strings.Join(ballots, " | ")}, Plan: []string{"Pick one of the leading options"}, Actions: []string{line}}),
		need{line: line, has: func(t string) bool { return pick(t) != "" }})
	if err != nil {
		return "", err
	}
	return pick(v.Text), nil
}

// P08 — self-consistency: N samples (sampler nodes run again until N replies exist, each a
// fresh process); the last ANSWER: line of each, normalised, is counted; the most frequent
// wins (ties: the one seen first). The aggregator is the engine.
func selfConsistency(c *ictx) (string, error) {
	samplers := c.cast.all("sampler")
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
		}, need{line: format, has: func(t string) bool { _, ok := lastAnswer(t); return ok }})
		if err = hard(err); err != nil {
			return "", err
		}
		for _, r := range reps {
			replies++
			if a, ok := lastAnswer(r.Text); ok {
				answers = append(answers, a)
				if agg := c.cast.one("aggregator"); agg != "" {
					c.send(r.Node, agg, "sample", map[string]any{"answer": truncate(a, 200)}, "")
				}
			} else {
				c.lacking(r, "the sample is dropped")
			}
		}
	}
	if len(answers) == 0 {
		return "", &NoWorkError{Msg: fmt.Sprintf("no sample has an answer: none of the %d replies has a `%s` line, even when asked again", replies, format)}
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
