package engine

import (
	"fmt"
	"strings"
)

// P02 — CAMEL: inception prompts fix the roles; the user gives one instruction a turn, the
// assistant solves it, until the user's reply holds the done token (task_done = 1; that turn
// is not sent to the assistant).
func rolePlayPair(c *ictx) (string, error) {
	user, assistant := c.cast.one("user"), c.cast.one("assistant")
	token := firstNonEmpty(str(c.params["done_token"]), "<CAMEL_TASK_DONE>")
	inception := func(self, partner string) string {
		return fmt.Sprintf("You are %s (%s); your partner is %s (%s). Never flip roles. Task: %s", self, c.roles[self], partner, c.roles[partner], c.task())
	}
	var transcript []string
	last := ""
	for {
		ins, err := c.ask(assistant, user, c.prompt(user, message{Intent: inception(user, assistant) + ". Instruct the assistant one step at a time; reply " + token + " when the task is done.", Inputs: append([]string{quote("Assistant's last solution", firstNonEmpty(last, "(none yet)"))}, transcript...), Plan: []string{"One instruction at a time"}, Actions: []string{"Instruction: <one instruction>, or " + token}}), needText)
		if err != nil {
			return "", err
		}
		if strings.Contains(strings.ToUpper(ins.Text), strings.ToUpper(token)) {
			c.st.Metrics["task_done"] = 1 // this turn is not sent to the assistant nor counted as a round
			c.r.checkpoint()
			return firstNonEmpty(last, ins.Text), nil
		}
		transcript = append(transcript, quote("Instruction", truncate(ins.Text, 1500)))
		c.send(user, assistant, "instruction", map[string]any{"bytes": len(ins.Text)}, "")
		sol, err := c.ask(user, assistant, c.prompt(assistant, message{Intent: inception(assistant, user) + ". Carry out the user's instruction.", Inputs: append([]string{quote("Instruction", ins.Text)}, transcript...), Plan: []string{"Solve", "Explain"}, Actions: []string{"Solution: <your solution>. Next request."}}), needText)
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
