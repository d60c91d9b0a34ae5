package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// P17 — producer (CLAIM: <claim> [source] lines), verifier (sees the claims only; CHECK <n>:
// pass|fail — evidence), judge (DECISION: accept | revise <numbers>). tool_check_pass = every
// claim passed; citations_count = passed claims with a source. Revise sends the failed claims
// back; accept ends the loop.
func factCheck(c *ictx) (string, error) {
	prod, verifier, judge := c.cast.one("producer"), c.cast.one("verifier"), c.cast.one("judge")
	feedback := ""
	for {
		claimFormat := firstNonEmpty(str(c.params["claim_format"]), "CLAIM: <claim> [source]")
		a, err := c.ask(judge, prod, c.prompt(prod, message{Intent: "Answer with sources: " + c.task(), Inputs: []string{quote("Claims to revise", firstNonEmpty(feedback, "(none: first answer)"))}, Plan: []string{"Answer", "Cite"}, Actions: []string{claimFormat + ", one line per claim"}}), needKeyed("CLAIM", claimFormat))
		if err != nil {
			return "", err
		}
		claims := keyedLines(a.Text, "CLAIM")
		var list []string
		for i, cl := range claims {
			list = append(list, fmt.Sprintf("%d. %s", i+1, cl.Value))
		}
		c.send(prod, verifier, "answer", map[string]any{"claims": len(claims)}, "")
		v, err := c.ask(prod, verifier, c.prompt(verifier, message{Intent: "Check every claim and its source with your tools", Inputs: []string{quote("Claims", strings.Join(list, "\n"))}, Plan: []string{"Check each claim"}, Actions: []string{"CHECK <n>: pass|fail — <evidence>, one line per claim"}}),
			need{line: "CHECK <n>: pass|fail — <evidence>", has: func(t string) bool { return len(checks(t, len(claims))) > 0 }})
		if err != nil {
			return "", err
		}
		pass := map[int]bool{}
		var failed []string
		evidence := map[int]string{} // claim number → the claim and what the verifier found
		checked := checks(v.Text, len(claims))
		for n := 1; n <= len(claims); n++ {
			verdict, ok := checked[n]
			if !ok {
				evidence[n] = fmt.Sprintf("%d. %s — not checked", n, claims[n-1].Value)
				continue
			}
			evidence[n] = fmt.Sprintf("%d. %s — %s", n, claims[n-1].Value, verdict)
			if leadsWith(verdict, "pass") || leadsWith(verdict, "passed") {
				pass[n] = true
			} else {
				failed = append(failed, evidence[n])
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
		j, err := c.ask(verifier, judge, c.prompt(judge, message{Intent: "Accept the answer or send claims back for revision", Inputs: []string{quote("Claims", strings.Join(list, "\n")), quote("Check report", v.Text)}, Plan: []string{"Decide"}, Actions: []string{"DECISION: accept, or DECISION: revise <claim numbers>"}}),
			need{line: "DECISION: accept|revise <claim numbers>", has: func(t string) bool {
				vd, _ := readVerdict(t)
				return leadsWith(vd.Decision, "accept") || leadsWith(vd.Decision, "revise")
			}})
		if err != nil {
			return "", err
		}
		vd, _ := readVerdict(j.Text)
		accepted := leadsWith(vd.Decision, "accept")
		if accepted {
			c.send(judge, prod, "accept", map[string]any{}, "")
			c.st.Decided, c.st.Decision, c.st.Done = true, "accept", "accepted"
		} else {
			// The producer gets the claims the judge named, with their evidence; the failed
			// ones when it named none (patterns/P17: revise → the failed claims and evidence).
			named := claimNumbers(vd.Decision, len(claims))
			back := failed
			if len(named) > 0 {
				back = nil
				for _, n := range named {
					back = append(back, evidence[n])
				}
			}
			c.send(judge, prod, "revise", map[string]any{"claims": named}, "")
			feedback = strings.Join(back, "\n") + "\n" + vd.Decision
		}
		if c.endRound() || accepted {
			return strings.Join(list, "\n"), nil
		}
	}
}

// claimNumbers are the claim numbers a "revise 1, 3" decision names (within 1…n, in order,
// once each).
func claimNumbers(decision string, n int) []int {
	var out []int
	seen := map[int]bool{}
	for _, f := range strings.FieldsFunc(decision, func(r rune) bool { return r < '0' || r > '9' }) {
		if k, err := strconv.Atoi(f); err == nil && k >= 1 && k <= n && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
