// P09 contract_net and P10 bilateral_negotiation: bids, awards and offers.

package engine

import (
	"fmt"
	"strings"
)

// P09 — Contract Net (FIPA): the manager writes the cfp; every bidder answers PERFORMATIVE:
// propose or refuse (late bids are refused); the manager awards (DECISION: <bidder id>) by the
// award rule, which the engine holds it to (award.go); accept-proposal to the winner,
// reject-proposal to the others; the contractor reports inform-done (with its HANDOFF) or
// failure.
func contractNet(c *ictx) (string, error) {
	mgr, bidders := c.cast.one("manager"), c.cast.all("bidder")
	deadline := intParam(c.params, "bid_deadline_ms", 0)
	for {
		cfp, err := c.ask("", mgr, c.prompt(mgr, message{Intent: "Write the call for proposals for: " + c.task(), Inputs: []string{"Bidders: " + strings.Join(bidders, ", ")}, Plan: []string{"State the task and what a bid must contain"}, Actions: []string{"PERFORMATIVE: cfp", "The call"}}), needText)
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
		bidding := c.wordsOnly(bidders...) // a bid is words; the winner edits after the award
		reps, err := c.askAll(mgr, bidders, func(b string) string {
			return c.prompt(b, message{Intent: "Answer the call for proposals: bid or refuse", Inputs: []string{quote("Call for proposals", cfp.Text)}, Plan: []string{"Estimate your cost"}, Actions: []string{"PERFORMATIVE: propose (then COST: <number> and your plan) or PERFORMATIVE: refuse (then why)"}})
		}, needPerformative("propose", "refuse"))
		bidding()
		if err = hard(err); err != nil {
			return "", err
		}
		for _, r := range reps {
			arrived[idx[r.Node]] = c.r.now().Sub(started).Milliseconds()
		}
		var proposers, bids, none []string
		costs := map[string]float64{} // proposer → its COST, when it stated one
		for _, r := range reps {
			late := deadline > 0 && arrived[idx[r.Node]] > int64(deadline)
			if len(r.Missing) > 0 {
				c.lacking(r, "it counts as refuse")
			}
			if !leadsWith(fieldOr(r.Text, "PERFORMATIVE"), "propose") || late {
				c.send(r.Node, mgr, "refuse", map[string]any{"late": late}, "")
				why := r.Node + " refused"
				switch {
				case late:
					c.note("warning", map[string]any{"message": r.Node + "'s bid arrived after bid_deadline_ms; it is refused", "agent": r.Node})
					why = r.Node + "'s bid came after bid_deadline_ms"
				case len(r.Missing) > 0:
					why = r.Node + " wrote no PERFORMATIVE: line, even when asked again"
				}
				none = append(none, why)
				continue
			}
			proposers = append(proposers, r.Node)
			bids = append(bids, quote("Proposal of "+r.Node, r.Text))
			if cost, ok := bidCost(r.Text); ok {
				costs[r.Node] = cost
			}
			c.send(r.Node, mgr, "propose", map[string]any{"cost": fieldOr(r.Text, "COST")}, "")
		}
		if len(proposers) == 0 {
			return "", &NoWorkError{Msg: "no bids: " + strings.Join(none, "; ")}
		}
		winner, err := c.award(mgr, proposers, bids, costs)
		if err != nil {
			return "", err
		}
		for _, p := range proposers {
			typ := "reject-proposal"
			if p == winner {
				typ = "accept-proposal"
			}
			c.send(mgr, p, typ, map[string]any{}, "")
		}
		c.st.Decided, c.st.Decision = true, winner
		done, err := c.ask(mgr, winner, c.prompt(winner, message{Intent: "PERFORMATIVE: accept-proposal — you won the contract; carry out the task: " + c.task(), Inputs: []string{quote("Call for proposals", cfp.Text)}, Plan: []string{"Execute", "Report"}, Actions: []string{"PERFORMATIVE: inform-done with a HANDOFF block, or PERFORMATIVE: failure and why"}}), needPerformative("inform-done", "failure"))
		if err != nil {
			return "", err
		}
		result := ""
		if leadsWith(fieldOr(done.Text, "PERFORMATIVE"), "inform-done") {
			c.send(winner, mgr, "inform-done", map[string]any{}, "")
			c.st.Done = "inform-done"
			result = "inform-done by " + winner
		} else {
			c.send(winner, mgr, "failure", map[string]any{}, "")
			c.st.Done = "failure"
			result = "failure by " + winner
		}
		if c.endRound() {
			return result, nil
		}
	}
}

// actFormat is P10's line.
const actFormat = `{"act": "offer"|"counteroffer"|"accept"|"reject", "terms": {…}}`

// P10 — alternating offers: each reply ends with {"act": offer|counteroffer|accept|reject,
// "terms": {…}}; accept or reject closes the deal.
func negotiation(c *ictx) (string, error) {
	proposer, responder := c.cast.one("proposer"), c.cast.one("responder")
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
			rep, err := c.ask(other, side, c.prompt(side, message{Intent: intent, Inputs: append([]string{fmt.Sprintf("Rounds left after this one: %d", bound-c.st.Round-1)}, history...), Plan: []string{"Weigh the offer against your constraints and the deadline"}, Actions: []string{"End with one JSON line: " + actFormat}}), need{line: actFormat, has: func(t string) bool { a, _ := readAct(t); return a != "" }})
			if err != nil {
				return "", err
			}
			act, t := readAct(rep.Text)
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
