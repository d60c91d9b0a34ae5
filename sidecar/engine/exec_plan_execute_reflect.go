package engine

import (
	"fmt"
	"strings"
)

// P18 — plan, execute (in the sandbox), observe, reflect; reflections feed the next plan and
// go to today's memory notes.
func planExecuteReflect(c *ictx) (string, error) {
	planner, executorN, observer, reflector := c.cast.one("planner"), c.cast.one("executor"), c.cast.one("observer"), c.cast.one("reflector")
	var reflections []string
	for {
		plan, err := c.ask(reflector, planner, c.prompt(planner, message{Intent: "Plan the next steps: " + c.task(), Inputs: reflections, Plan: []string{"3 to 7 steps"}, Actions: []string{"The plan"}}), needText)
		if err != nil {
			return "", err
		}
		act, err := c.ask(planner, executorN, c.prompt(executorN, message{Intent: "Carry out the plan with your tools", Inputs: []string{quote("Plan", plan.Text)}, Plan: []string{"Act"}, Actions: []string{"What you did and its output; a HANDOFF block if you edited files"}}), needText)
		if err != nil {
			return "", err
		}
		changed := "(no edits)"
		if len(act.Changed) > 0 { // what its sandbox's proposal changes, handed off or not
			changed = strings.Join(act.Changed, ", ")
		}
		obs, err := c.ask(executorN, observer, c.prompt(observer, message{Intent: "Observe the results against the plan", Inputs: []string{quote("Plan", plan.Text), quote("Trace", act.Text), "Changed files: " + changed}, Plan: []string{"Compare"}, Actions: []string{"Your observation"}}), needText)
		if err != nil {
			return "", err
		}
		ref, err := c.ask(observer, reflector, c.prompt(reflector, message{Intent: "Reflect: what should change in the next loop?", Inputs: []string{quote("Observation", obs.Text)}, Plan: []string{"Summarise", "Derive lessons"}, Actions: []string{"Your reflection"}}), needText)
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
