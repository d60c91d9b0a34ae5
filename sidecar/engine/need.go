package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// What a step of a pattern needs from a reply, and what happens when it is not there: the
// agent is asked once more with the exact format (repair), and if the line is still missing
// the step fails with a reason naming the agent and the line (docs/runs.md, *Replies*).

// need is a line a step reads from the agent's reply.
type need struct {
	line string                 // as the prompt asks for it: "VOTE: <option>"
	has  func(text string) bool // the reply holds it (read tolerantly, read.go)
}

// needField: a "WORD: value" line with a value.
func needField(word, line string) need {
	return need{line: line, has: func(t string) bool { v, ok := field(t, word); return ok && v != "" }}
}

// needKeyed: at least one "WORD <key>: value" line.
func needKeyed(word, line string) need {
	return need{line: line, has: func(t string) bool { return len(keyedLines(t, word)) > 0 }}
}

// needMetric: a METRIC line with that metric.
func needMetric(name, line string) need {
	return need{line: line, has: func(t string) bool { _, ok := metric(t, name); return ok }}
}

// needText: any reply at all (the step passes the reply on as it is).
var needText = need{line: textLine, has: func(t string) bool { return strings.TrimSpace(t) != "" }}

// textLine is needText's "line": the reply was empty.
const textLine = "(a non-empty reply)"

// oneOf is a placeholder naming the ids a line may hold: "<worker_1|worker_2>".
func oneOf(ids ...string) string { return "<" + strings.Join(ids, "|") + ">" }

// needAnswer: ANSWER: <answer> (debaters; P08's samplers are read the same way).
var needAnswer = needField("ANSWER", "ANSWER: <your answer>")

// needVerdict: DECISION: <…> (or VERDICT: {"decision": …}).
func needVerdict(line string) need {
	return need{line: line, has: func(t string) bool { _, ok := readVerdict(t); return ok }}
}

// needPerformative: PERFORMATIVE: <one of acts>.
func needPerformative(acts ...string) need {
	return need{line: "PERFORMATIVE: " + strings.Join(acts, "|"), has: func(t string) bool {
		v := fieldOr(t, "PERFORMATIVE")
		return slices.ContainsFunc(acts, func(a string) bool { return leadsWith(v, a) })
	}}
}

// unmet are the needs text does not meet.
func unmet(text string, needs []need) []need {
	var out []need
	for _, n := range needs {
		if !n.has(text) {
			out = append(out, n)
		}
	}
	return out
}

// lines are the needs' lines.
func lines(needs []need) []string {
	out := make([]string, len(needs))
	for i, n := range needs {
		out[i] = n.line
	}
	return out
}

// MissingLineError: an agent's reply lacks a line its step needs, even after it was asked
// again with the exact format.
type MissingLineError struct {
	Agent string
	Lines []string
}

func (e *MissingLineError) Error() string {
	return lacks(e.Agent, e.Lines) + ", even when asked again with the exact format"
}

// lacks says what agent's reply lacked: "judge's reply has no `DECISION: <option>` line".
func lacks(agent string, lines []string) string {
	if len(lines) == 1 && lines[0] == textLine {
		return agent + " replied with nothing"
	}
	return fmt.Sprintf("%s's reply has no %s line", agent, quoteLines(lines))
}

// NoWorkError: no agent did the work the pattern needs (no worker assigned, no bid, no vote):
// the interaction fails rather than completing having done nothing.
type NoWorkError struct{ Msg string }

func (e *NoWorkError) Error() string { return e.Msg }

func quoteLines(lines []string) string {
	q := make([]string, len(lines))
	for i, l := range lines {
		q[i] = "`" + l + "`"
	}
	return strings.Join(q, " or ")
}

// ExpiredError: every message the interaction's agents were to read expired before they
// read it (its ttl passed), so nothing reached them: the interaction did not do its work.
type ExpiredError struct{ Msg string }

func (e *ExpiredError) Error() string { return e.Msg }

// failReason is the termination reason of an interaction that failed with err.
func failReason(err error) string {
	var ml *MissingLineError
	var nw *NoWorkError
	var ex *ExpiredError
	switch {
	case errors.As(err, &ex):
		return "expired"
	case errors.As(err, &ml):
		return "missing_line"
	case errors.As(err, &nw):
		return "no_work"
	}
	return "error"
}

// hard is err without the missing-line errors of replies a step can do without (a voter
// that wrote no VOTE: line abstains): only agents' real failures are left.
func hard(err error) error {
	if err == nil {
		return nil
	}
	var kept []error
	for _, e := range unjoin(err) {
		var ml *MissingLineError
		if !errors.As(e, &ml) {
			kept = append(kept, e)
		}
	}
	return errors.Join(kept...)
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// lacking logs that rep still lacks a line after its repair, and what the step does instead.
func (c *ictx) lacking(rep *Reply, instead string) {
	c.note("warning", map[string]any{"agent": rep.Node, "message": lacks(rep.Node, rep.Missing) + ", even when asked again; " + instead})
}

// repairPrompt asks node again for the lines its reply lacked. A backend with sessions gets
// the request alone, as the next turn of the same session; one without (a command agent)
// gets its prompt again, its last reply and the request.
func (c *ictx) repairPrompt(node, prompt, reply string, missing []need) string {
	var b strings.Builder
	var formats []need
	for _, n := range missing {
		if n.line != textLine {
			formats = append(formats, n)
		}
	}
	if strings.TrimSpace(reply) == "" {
		b.WriteString("[AGENTCANVAS] Your last reply was empty. Reply again, in the standard response format.\n")
	}
	if len(formats) > 0 {
		b.WriteString("[AGENTCANVAS] Your last reply did not contain the line(s) this step needs. Reply again, and write each of these on a line of its own, exactly in this form, with no Markdown around it:\n")
		for _, n := range formats {
			b.WriteString(n.line + "\n")
		}
	}
	c.mu.Lock()
	session := c.sessions[node]
	c.mu.Unlock()
	if session != "" {
		return b.String()
	}
	return prompt + "\n\n## Your last reply\n" + indent(truncate(firstNonEmpty(reply, "(empty)"), 6000)) + "\n\n## Repair\n" + b.String()
}
