package engine

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// P09's award rule (patterns/P09-contract_net.md: "the manager ranks the proposals by the
// award rule"). params.award_rule:
//
//   - best_bid (the default): the lowest COST wins. The manager is asked to award and its
//     DECISION stands when it names a lowest bid (it breaks a tie); when it names another, the
//     contract goes to the lowest bid anyway, and the log says so. A proposal without a COST
//     ranks after every one with a cost; when no proposal states one, bids cannot be compared
//     and the manager's DECISION decides.
//   - manager: the manager's DECISION decides, whatever the costs.

// Award rules.
const (
	AwardBestBid = "best_bid"
	AwardManager = "manager"
)

// costRE finds a bid's cost: the first number of its COST line ("COST: $1,200.50 total").
var costRE = regexp.MustCompile(`-?\d[\d,]*(?:\.\d+)?`)

// bidCost reads a proposal's COST: line.
func bidCost(text string) (float64, bool) {
	m := costRE.FindString(fieldOr(text, "COST"))
	if m == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", ""), 64)
	return v, err == nil
}

// lowestBids are the proposers whose cost is the lowest stated (several on a tie), in
// proposer order; none when no proposal states a cost.
func lowestBids(proposers []string, costs map[string]float64) []string {
	var out []string
	for _, p := range proposers {
		c, ok := costs[p]
		switch {
		case !ok:
		case len(out) == 0 || c < costs[out[0]]:
			out = []string{p}
		case c == costs[out[0]]:
			out = append(out, p)
		}
	}
	return out
}

// award asks the manager to award the contract and applies the award rule to its choice.
func (c *ictx) award(mgr string, proposers, bids []string, costs map[string]float64) (string, error) {
	rule := strings.ToLower(firstNonEmpty(str(c.params["award_rule"]), AwardBestBid))
	best := lowestBids(proposers, costs)
	awardTo := func(t string) string {
		vd, _ := readVerdict(t)
		return pickID(firstNonEmpty(vd.Winner, vd.Decision), proposers, c.names(proposers))
	}
	how := "the lowest COST wins (award rule best_bid)"
	if rule == AwardManager {
		how = "your judgment decides (award rule manager)"
	}
	rep, err := c.ask("", mgr, c.prompt(mgr, message{Intent: "Award the contract to the best bid: " + how, Inputs: append([]string{"Costs: " + costList(proposers, costs)}, bids...), Plan: []string{"Rank the proposals by the award rule", "Pick one"}, Actions: []string{"DECISION: <bidder id>"}}),
		need{line: "DECISION: " + oneOf(proposers...), has: func(t string) bool { return awardTo(t) != "" }})
	var ml *MissingLineError
	if err != nil && !(errors.As(err, &ml) && rule == AwardBestBid && len(best) > 0) {
		return "", err
	}
	picked := ""
	if rep != nil {
		picked = awardTo(rep.Text)
	}
	winner, overridden := picked, false
	if rule == AwardBestBid && len(best) > 0 && !slices.Contains(best, picked) {
		winner, overridden = best[0], true
		why := fmt.Sprintf("the manager %s named %s", mgr, firstNonEmpty(picked, "no bidder"))
		if cost, ok := costs[picked]; ok {
			why += fmt.Sprintf(" (COST %g)", cost)
		}
		c.note("warning", map[string]any{"agent": mgr, "message": fmt.Sprintf("%s, but the award rule best_bid gives the contract to the lowest bid: %s (COST %g)", why, winner, costs[winner])})
	}
	fields := map[string]any{"winner": winner, "proposals": len(proposers), "rule": rule, "managerPick": picked, "overridden": overridden}
	if cost, ok := costs[winner]; ok {
		fields["cost"] = cost
	}
	c.note("awarded", fields)
	return winner, nil
}

// costList is the proposals' costs for the manager's prompt.
func costList(proposers []string, costs map[string]float64) string {
	var parts []string
	for _, p := range proposers {
		if cost, ok := costs[p]; ok {
			parts = append(parts, fmt.Sprintf("%s %g", p, cost))
		} else {
			parts = append(parts, p+" (no COST)")
		}
	}
	return strings.Join(parts, ", ")
}
