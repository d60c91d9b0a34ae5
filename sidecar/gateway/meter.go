package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// metered is what a meter read of one response.
type metered struct {
	model string
	usage Usage
	// seen: the response said something of its usage; final: it gave its last word (a
	// stream cut before that has only a first count, or none).
	seen, final bool
	// text is the bytes of model text it streamed (or, not streamed, its size): an upper
	// bound of its output tokens.
	text int64
	// cut: the body ended with an error, not at its end.
	cut bool
}

// meter reads a response's body as it passes to the agent, unchanged and unbuffered, and
// calls done once with what it found when the body ends or is closed.
type meter struct {
	body  io.ReadCloser
	p     Provider
	sse   bool
	line  []byte // SSE: the line read so far
	whole []byte // JSON: the body so far (up to maxJSON)
	got   metered
	// answers asked for (Gemini's candidateCount), and those that have finished so far.
	answers  int64
	finished map[int]bool
	once     sync.Once
	done     func(metered)
}

const maxJSON = 16 << 20

func (m *meter) Read(b []byte) (int, error) {
	k, err := m.body.Read(b)
	m.scan(b[:k])
	if err != nil {
		m.got.cut = !errors.Is(err, io.EOF)
		m.finish()
	}
	return k, err
}

// Close ends the body; closed before its end (the agent hung up), the response was cut.
func (m *meter) Close() error {
	err := m.body.Close()
	m.once.Do(func() { m.got.cut = true; m.end() }) // a body read to its end has finished already
	return err
}

func (m *meter) finish() { m.once.Do(m.end) }

func (m *meter) end() {
	if m.sse {
		m.sseLine(m.line)
	} else {
		m.got.text = int64(len(m.whole))
		m.read(m.whole)
	}
	m.done(m.got)
}

func (m *meter) scan(b []byte) {
	if !m.sse {
		if len(m.whole)+len(b) <= maxJSON {
			m.whole = append(m.whole, b...)
		} else {
			m.got.text += int64(len(b)) // past what is kept: still counted
		}
		return
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(m.line)+len(b) <= maxJSON {
				m.line = append(m.line, b...)
			}
			return
		}
		m.line = append(m.line, b[:i]...)
		m.sseLine(m.line)
		m.line, b = m.line[:0], b[i+1:]
	}
}

func (m *meter) sseLine(l []byte) {
	l = bytes.TrimRight(l, "\r")
	d, ok := bytes.CutPrefix(l, []byte("data:"))
	if !ok {
		return
	}
	// Most of a stream is text deltas: their text is counted from the raw line, in one pass
	// that also finds the events that may carry usage, the model or the end, which alone
	// are decoded.
	if n, decode := streamedText(d); !decode {
		m.got.text += n
		return
	}
	m.read(d)
}

// usageNames are the members that make an event worth decoding.
var usageNames = map[string]bool{"usage": true, "usageMetadata": true, "model": true, "modelVersion": true, "message": true,
	"response": true, "finishReason": true, "finish_reason": true, "stop_reason": true}

// framingNames are the members of streamed events that hold no generated text.
var framingNames = map[string]bool{"type": true, "id": true, "item_id": true, "role": true, "object": true, "status": true,
	"call_id": true, "event_id": true, "response_id": true, "responseId": true, "name": true, "index": true}

// streamedText is the bytes of every string in a streamed event but its framing (types,
// ids): the text and tool arguments the model generated, as written (an escape is never
// shorter than what it stands for), so an upper bound of its tokens. decode: the event
// names a member that may carry usage, the model or the end; it is then to be decoded.
func streamedText(d []byte) (n int64, decode bool) {
	name := ""
	for i := 0; i < len(d); i++ {
		if d[i] != '"' {
			continue
		}
		end := stringEnd(d, i)
		if end < 0 {
			return n + int64(len(d)-i), false
		}
		if nextNonSpace(d, end+1) == ':' {
			if name = string(d[i+1 : end]); usageNames[name] {
				return n, true
			}
		} else if !framingNames[name] {
			n += int64(end - i - 1)
		}
		i = end
	}
	return n, false
}

// read takes what one JSON value says about usage, the model, and the text it streams.
func (m *meter) read(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' { // Gemini's streamGenerateContent without alt=sse
		var all []json.RawMessage
		if json.Unmarshal(b, &all) == nil {
			for _, x := range all {
				m.read(x)
			}
		}
		return
	}
	var e event
	if json.Unmarshal(b, &e) != nil {
		return
	}
	if m.sse {
		m.got.text += e.text()
	}
	for _, w := range []struct {
		model string
		u     *wireUsage
	}{{e.Model, e.Usage}, {e.ModelVersion, e.UsageMetadata}} {
		m.found(w.model, w.u)
	}
	if e.Message != nil {
		m.found(e.Message.Model, e.Message.Usage)
	}
	if e.Response != nil {
		m.found(e.Response.Model, e.Response.Usage)
	}
	if e.final(m.p, m.finished, m.answers) {
		m.got.final = true
	}
}

func (m *meter) found(model string, u *wireUsage) {
	if model != "" && m.got.model == "" {
		m.got.model = model
	}
	if u != nil {
		m.got.usage.merge(m.p, *u)
		m.got.seen = true
	}
}
