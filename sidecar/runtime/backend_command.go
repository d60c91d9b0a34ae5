package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/tally"
)

// commandBackend runs any argv (runtime.command) in the agent's working folder. The prompt is
// written to stdin, then stdin is closed; stdout is the reply. With Spec.Interactive, stdin
// stays open: the prompt is sent as one JSON line {"type":"prompt","text":…} and answers
// follow on later lines (docs/agents.md).
type commandBackend struct{}

func (commandBackend) id() string { return BackendCommand }

func (commandBackend) argv(s *Spec, in turnInput) ([]string, error) {
	return append([]string(nil), s.Command...), nil
}

func (commandBackend) stdin(s *Spec, in turnInput) string {
	if s.Interactive {
		b, _ := json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"prompt", in.prompt})
		return string(b) + "\n"
	}
	return in.prompt
}

func (commandBackend) newDecoder(*Spec, turnInput) decoder { return &textDecoder{name: "command"} }

// followUp re-runs the command with its original prompt followed by the answers, since a
// plain command has no session to resume (AGENTCANVAS_TURN tells it which turn it is).
func (commandBackend) followUp(original, answers, _ string) turnInput {
	return turnInput{prompt: original + "\n\n" + answers}
}

// maxReply bounds the reply text kept in memory for plain-text agents.
const maxReply = 8 << 20

// textDecoder treats stdout as the agent's text (command and dry-run agents), less the
// USAGE: lines in which a command agent reports what it spent (usage.go).
type textDecoder struct {
	name      string
	reply     strings.Builder
	truncated bool
	usage     Usage
	cost      float64
	costKnown bool
}

// line gets a batch of whole lines (or a chunk of an over-long one): the batch's text, less its
// USAGE: lines, which become usage events.
func (d *textDecoder) line(l []byte) []Event {
	var evs []Event
	if bytes.Contains(l, []byte(usagePrefix)) {
		l, evs = d.usageLines(l)
	}
	if len(l) == 0 {
		return evs
	}
	if d.reply.Len()+len(l) <= maxReply {
		d.reply.Write(l)
	} else {
		d.truncated = true
	}
	return append(evs, Event{Kind: EventText, Text: string(l), cont: true})
}

// usageLines takes the USAGE: lines out of a batch: each a usage event (a malformed one stays
// text, with a warning).
func (d *textDecoder) usageLines(batch []byte) (text []byte, evs []Event) {
	for len(batch) > 0 {
		line := batch
		if i := bytes.IndexByte(batch, '\n'); i >= 0 {
			line = batch[:i+1]
		}
		batch = batch[len(line):]
		u, cost, isUsage, err := parseUsageLine(line)
		switch {
		case isUsage && err == nil:
			d.usage.add(u)
			if cost != nil {
				d.cost, d.costKnown = tally.AddUSD(d.cost, *cost), true
			}
			evs = append(evs, Event{Kind: EventUsage, Usage: &u, CostUSD: cost})
			continue
		case err != nil:
			evs = append(evs, Event{Kind: EventWarning, Reason: err.Error()})
		}
		text = append(text, line...)
	}
	return text, evs
}

func (d *textDecoder) end(code int) turnOutcome {
	out := turnOutcome{reply: d.reply.String(), usage: d.usage, cost: d.cost, costKnown: d.costKnown}
	if d.truncated {
		out.reply += "\n[agentcanvas: reply truncated at 8 MiB]\n"
	}
	if code != 0 {
		out.failed = true
		out.reason = fmt.Sprintf("%s exited with code %d", d.name, code)
	}
	return out
}
