package engine

import "fmt"

// P06 — the judge reports errors (METRIC: open_errors=N), the critic explains them, the
// refiner fixes in its sandbox; open_errors=0 ends the round before the critic. The curator,
// when present, turns the loop into a note in today's memory file.
func criticRefinerCurator(c *ictx) (string, error) {
	judge, critic, refiner, curator := c.cast.one("judge"), c.cast.one("critic"), c.cast.one("refiner"), c.cast.one("curator")
	draft := c.task()
	var history []string
	loop := func() error {
		for {
			v, err := c.ask("", judge, c.prompt(judge, message{Intent: "Find the errors in the current solution", Inputs: []string{quote("Solution", draft)}, Plan: []string{"Check every step"}, Actions: []string{"METRIC: open_errors=<N> (0 when it is correct)", "The first wrong step, when N > 0"}}), needMetric("open_errors", "METRIC: open_errors=<N>"))
			if err != nil {
				return err
			}
			n, _ := metric(v.Text, "open_errors")
			c.st.Metrics["open_errors"] = n
			history = append(history, quote(fmt.Sprintf("Error report %d", c.st.Round+1), v.Text))
			if n > 0 {
				c.send(judge, critic, "error_report", map[string]any{"open_errors": n}, "")
				f, err := c.ask(judge, critic, c.prompt(critic, message{Intent: "Explain the reported errors and how to fix them", Inputs: []string{quote("Solution", draft), quote("Error report", v.Text)}, Plan: []string{"Explain each error", "Say how to fix it"}, Actions: []string{"A critique, one point per error"}}), needText)
				if err != nil {
					return err
				}
				history = append(history, quote("Critique", f.Text))
				c.send(critic, refiner, "critique", map[string]any{}, "")
				r, err := c.ask(critic, refiner, c.prompt(refiner, message{Intent: "Revise the solution with the critique", Inputs: []string{quote("Solution", draft), quote("Critique", f.Text)}, Plan: []string{"Fix every point"}, Actions: []string{"The revised solution; a HANDOFF block if you edited files"}}), needText)
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
		note, cerr := c.ask(refiner, curator, c.prompt(curator, message{Intent: "Turn this loop into a short reusable note", Inputs: append(history, quote("Accepted fix", draft)), Plan: []string{"Generalise"}, Actions: []string{"A few lines for the memory notes"}}), needText)
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
