// Package agentproto parses the structured blocks an agent prints on stdout
// (docs/agent-protocol.md): [DEPENDENCY_REQUEST], [USER_QUESTION],
// === PHASE N COMPLETE ===, [ERROR] and HANDOFF, plus the standard message and
// response sections of a reply.
//
// The Parser is streaming: feed it byte chunks of any size as they arrive from a
// process; it finds blocks across chunk boundaries, tolerates CRLF line endings
// and ANSI colour codes, passes ordinary lines through to a log callback, and
// never buffers more than Options.MaxBlockBytes: a block that would need more
// becomes an invalid Block instead.
//
// The package knows nothing of processes or JSON-RPC; the agent runtime owns
// pausing, answering and injecting.
package agentproto

import (
	"bytes"
	"encoding/json"
	"sort"
)

// Kind is what a Block is. The strings are the kinds of `agentcanvas protocol scan`.
type Kind string

const (
	KindDependencyRequest Kind = "dependency_request"
	KindUserQuestion      Kind = "user_question"
	KindPhaseComplete     Kind = "phase_complete"
	KindError             Kind = "error"
	KindHandoff           Kind = "handoff"
	// KindInvalid is a block that was recognised by its opening line but breaks
	// the protocol (docs/agent-protocol.md): a missing or malformed field, a missing closing tag, or a block
	// larger than Options.MaxBlockBytes. Block.Of says what it tried to be.
	KindInvalid Kind = "invalid"
)

// Block is one protocol block found in agent output.
type Block struct {
	Kind Kind
	// Line is the 1-based line number of the block's opening line in the stream.
	Line int
	// Fields holds the block's fields under the protocol's names: strings, []string
	// for lists (options, ChangedFiles, …), bool for `required`, int for the
	// phase number N. For an invalid block, whatever could be read.
	Fields map[string]any
	// Keys lists the field names in the order they appeared.
	Keys []string
	// Error says what is wrong with an invalid block, naming the block and field.
	Error string
	// Field is the first field Error is about ("" when the problem is the block
	// itself, such as a missing closing tag).
	Field string
	// Of is the kind an invalid block was meant to be; equal to Kind otherwise.
	Of Kind
	// Raw is the block's bytes exactly as received (colour codes and CRs kept).
	// For a block cut short by the size cap it is what was buffered before.
	Raw string
}

// MarshalJSON writes the `protocol scan --json` form: {kind,line,fields,error?}.
func (b Block) MarshalJSON() ([]byte, error) {
	fields := b.Fields
	if fields == nil {
		fields = map[string]any{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // paths like <runId> stay readable
	err := enc.Encode(struct {
		Kind   Kind           `json:"kind"`
		Line   int            `json:"line"`
		Fields map[string]any `json:"fields"`
		Error  string         `json:"error,omitempty"`
	}{b.Kind, b.Line, fields, b.Error})
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), err
}

// Priority orders kinds as docs/agent-protocol.md ("Priority") does: when one
// chunk or turn yields several blocks, the runtime acts on the lowest number
// first. ERROR 1, PHASE_COMPLETE 2, DEPENDENCY_REQUEST 3, USER_QUESTION 4, log
// lines 5. The protocol answers a malformed block with a fatal [ERROR]
// ("Invalid protocol format"), so invalid ranks with error; HANDOFF, which the
// protocol does not rank, is a worker's final report and ranks after the
// blocking kinds, before logs.
func Priority(k Kind) int {
	switch k {
	case KindError, KindInvalid:
		return 1
	case KindPhaseComplete:
		return 2
	case KindDependencyRequest:
		return 3
	case KindUserQuestion:
		return 4
	case KindHandoff:
		return 5
	}
	return 6 // log lines and anything unknown
}

// SortByPriority orders blocks by Priority (error before invalid), keeping
// stream order within a rank.
func SortByPriority(blocks []Block) {
	sort.SliceStable(blocks, func(i, j int) bool { return rank(blocks[i].Kind) < rank(blocks[j].Kind) })
}

// Urgent returns the block the runtime should act on first, if any.
func Urgent(blocks []Block) (Block, bool) {
	if len(blocks) == 0 {
		return Block{}, false
	}
	best := 0
	for i := 1; i < len(blocks); i++ {
		if rank(blocks[i].Kind) < rank(blocks[best].Kind) {
			best = i
		}
	}
	return blocks[best], true
}

// rank is Priority with error strictly ahead of invalid.
func rank(k Kind) int {
	r := 2 * Priority(k)
	if k == KindInvalid {
		r++
	}
	return r
}

// SpecError is the [ERROR] block a validation failure amounts to (docs/agent-protocol.md,
// "Invalid blocks"): fatal, "Invalid protocol format",
// recovery notify_user, with the invalid block's Error as details. For any other
// block it returns b unchanged.
func (b Block) SpecError() Block {
	if b.Kind != KindInvalid {
		return b
	}
	return Block{
		Kind: KindError, Of: KindError, Line: b.Line, Raw: b.Raw,
		Keys: []string{"type", "message", "details", "recovery"},
		Fields: map[string]any{
			"type":     "fatal",
			"message":  "Invalid protocol format",
			"details":  b.Error,
			"recovery": "notify_user",
		},
	}
}
