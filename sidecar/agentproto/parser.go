package agentproto

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DefaultMaxBlockBytes is the size cap used when Options.MaxBlockBytes is 0.
const DefaultMaxBlockBytes = 64 << 10

// minMaxBlockBytes keeps the cap above the length of any opening line.
const minMaxBlockBytes = 256

// Options configures a Parser.
type Options struct {
	// MaxBlockBytes caps the size of a block and of a line. A block that would
	// grow past it is reported as an invalid Block and the parser reads on from
	// the line that did not fit; a line longer than it is never part of a block
	// and goes to OnLog in pieces. The parser so holds at most 2×MaxBlockBytes:
	// one block and one unfinished line. 0 means DefaultMaxBlockBytes; values
	// below 256 are raised to 256.
	MaxBlockBytes int
	// OnLog, if set, receives every line that is not part of a block, with its
	// 1-based line number, the line ending removed and ANSI escape sequences
	// stripped. text is only valid during the call. A line longer than
	// MaxBlockBytes arrives unmodified in several calls with the same number.
	OnLog func(line int, text []byte)
	// OnBlock, if set, receives each block as it completes, in stream order
	// with OnLog calls (Write and Flush return the same blocks as well).
	OnBlock func(Block)
}

// Parser finds protocol blocks in a stream of agent output. It is not safe for
// concurrent use; one Parser reads one stream.
type Parser struct {
	max     int
	log     func(int, []byte)
	onBlock func(Block)

	done     int    // lines completed so far; the current line is done+1
	partial  []byte // the current line's bytes while it is unfinished
	longLine bool   // the current line is over the cap and streams to OnLog
	heldCR   bool   // a long line's piece ended in '\r'; emitted unless "\n" follows

	cur     *pending // the block being read, or nil
	out     []Block
	scratch []byte // reused for lines that need their escape sequences stripped
}

// pending is a block whose end has not been seen yet.
type pending struct {
	of     Kind
	tag    string // "ERROR" for [ERROR]; "" for open-ended blocks (phase, handoff)
	line   int
	indent int
	raw    []byte
	fp     *fieldParser
	phaseN string // the N of === PHASE N COMPLETE ===
}

// NewParser returns a Parser.
func NewParser(opt Options) *Parser {
	max := opt.MaxBlockBytes
	if max == 0 {
		max = DefaultMaxBlockBytes
	}
	if max < minMaxBlockBytes {
		max = minMaxBlockBytes
	}
	return &Parser{max: max, log: opt.OnLog, onBlock: opt.OnBlock}
}

// Buffered reports how many bytes the parser holds: the block being read plus
// the unfinished line, each at most MaxBlockBytes (see Cap).
func (p *Parser) Buffered() int {
	n := len(p.partial)
	if p.cur != nil {
		n += len(p.cur.raw)
	}
	return n
}

// Cap is the most Buffered can ever be: 2×MaxBlockBytes.
func (p *Parser) Cap() int { return 2 * p.max }

// Lines reports how many complete lines the parser has read.
func (p *Parser) Lines() int { return p.done }

// Write feeds the next chunk of output and returns the blocks completed by it,
// in stream order. The chunk may split lines, CRLF pairs or escape sequences
// anywhere. The parser does not keep chunk.
func (p *Parser) Write(chunk []byte) []Block {
	p.out = nil
	// escAt is the distance from the start of chunk to its next escape byte
	// (len(chunk) when none; negative when not yet looked for), so ordinary
	// lines are searched for escapes once per chunk rather than once per line.
	escAt := -1
	for len(chunk) > 0 {
		if escAt < 0 {
			if escAt = bytes.IndexByte(chunk, esc); escAt < 0 {
				escAt = len(chunk)
			}
		}
		nl := bytes.IndexByte(chunk, '\n')
		complete := nl >= 0
		seg := chunk
		if complete {
			seg, chunk = chunk[:nl+1], chunk[nl+1:]
		} else {
			chunk = nil
		}
		hasEsc := escAt < len(seg)
		escAt -= len(seg)
		if p.longLine {
			p.longPiece(seg, complete)
			continue
		}
		content := len(p.partial) + len(seg) // this line's bytes so far, without '\n'
		if complete {
			content--
		}
		if content > p.max {
			p.overLong(seg, complete)
			continue
		}
		if !complete {
			p.partial = append(p.partial, seg...)
			continue
		}
		if len(p.partial) > 0 {
			p.partial = append(p.partial, seg...)
			p.line(p.partial, bytes.IndexByte(p.partial, esc) >= 0)
			p.partial = p.partial[:0]
			continue
		}
		p.line(seg, hasEsc)
	}
	return p.out
}

// Flush ends the stream: it reads the last line if it has no line ending and
// closes any open block (an unterminated tagged block is invalid). Call it once
// at EOF.
func (p *Parser) Flush() []Block {
	p.out = nil
	if p.longLine {
		p.longPiece(nil, true)
	} else if len(p.partial) > 0 {
		p.line(p.partial, bytes.IndexByte(p.partial, esc) >= 0)
		p.partial = p.partial[:0]
	}
	p.closeBlock(0)
	return p.out
}

// EndOpenBlock completes a PHASE_COMPLETE or HANDOFF block that is still
// open. Those blocks have no closing line, so the parser otherwise waits for
// the next unrelated line or EOF; an agent that prints one and then waits for
// an answer would wait for ever. The runtime calls this when the agent's
// output has gone quiet (its choice of delay). Tagged blocks, which do have
// closing tags, stay open.
func (p *Parser) EndOpenBlock() []Block {
	p.out = nil
	if p.cur != nil && p.cur.tag == "" {
		p.closeBlock(0)
	}
	return p.out
}

// overLong handles a line longer than the cap. Such a line is never part of a
// block: it ends an open-ended block (PHASE_COMPLETE details, HANDOFF), which
// is complete without it; a tagged block that cannot hold it is invalid. The
// line goes to OnLog as it is, in pieces.
func (p *Parser) overLong(seg []byte, complete bool) {
	if c := p.cur; c != nil {
		p.cur = nil
		if c.tag == "" {
			p.finish(c)
		} else {
			p.emitInvalid(c, fmt.Sprintf("line %d is longer than %d bytes", p.done+1, p.max))
		}
	}
	p.longLine = true
	if len(p.partial) > 0 {
		p.longPiece(p.partial, false)
		p.partial = p.partial[:0]
	}
	p.longPiece(seg, complete)
}

// longPiece passes one piece of an over-long line to OnLog unmodified but for the
// line ending; a trailing '\r' is held back until we know whether '\n' follows,
// so the pieces join to the same text whatever the chunking.
func (p *Parser) longPiece(seg []byte, complete bool) {
	if complete {
		seg = bytes.TrimSuffix(seg, []byte{'\n'})
		if len(seg) == 0 {
			p.heldCR = false // the held '\r' was the CR of CRLF
		}
		seg = bytes.TrimSuffix(seg, []byte{'\r'})
	}
	if p.heldCR {
		p.heldCR = false
		p.emitLog([]byte{'\r'})
	}
	if !complete && len(seg) > 0 && seg[len(seg)-1] == '\r' {
		seg = seg[:len(seg)-1]
		p.heldCR = true
	}
	if len(seg) > 0 {
		p.emitLog(seg)
	}
	if complete {
		p.longLine = false
		p.done++
	}
}

func (p *Parser) emitLog(text []byte) {
	if p.log != nil {
		p.log(p.done+1, text)
	}
}

// line handles one complete line (with its '\n', except at EOF) that fits
// under the cap. hasEsc says whether raw holds an escape byte.
func (p *Parser) line(raw []byte, hasEsc bool) {
	lineNo := p.done + 1
	p.done = lineNo
	if c := p.cur; c != nil {
		text := string(StripANSI(trimEOL(raw)))
		body := dedent(text, c.indent)
		if len(c.raw)+len(raw) > p.max && (c.tag != "" || c.fp.accepts(body)) {
			// The block would outgrow the cap: report it and read this line
			// afresh (it may open the next block).
			p.cur = nil
			p.emitInvalid(c, fmt.Sprintf("block is larger than %d bytes (unterminated or too big)", p.max))
		} else if c.tag != "" {
			t := strings.TrimSpace(text)
			if t == "[/"+c.tag+"]" {
				c.raw = append(c.raw, raw...)
				p.cur = nil
				p.finish(c)
				return
			}
			if taggedOpener(t) == "" {
				c.raw = append(c.raw, raw...)
				c.fp.feed(body, lineNo, true)
				return
			}
			p.closeBlock(lineNo) // another opening tag: this block was never closed
		} else {
			if c.fp.feed(body, lineNo, false) {
				c.raw = append(c.raw, raw...)
				return
			}
			p.closeBlock(lineNo)
		}
	}
	text := trimEOL(raw)
	if hasEsc {
		p.scratch = stripInto(p.scratch[:0], text)
		text = p.scratch
	}
	if maybeOpener(text) {
		if c := p.open(text, lineNo); c != nil {
			c.raw = append(c.raw, raw...)
			p.cur = c
			return
		}
	}
	if p.log != nil {
		p.log(lineNo, text)
	}
}

// maxOpenerLen bounds an opening line after trimming; longer lines are not
// examined further.
const maxOpenerLen = 96

// maybeOpener is the cheap test every ordinary line goes through: an opening
// line is short and starts, after blanks, with '[', '=', 'H', or a Markdown
// '#' or '*'.
func maybeOpener(text []byte) bool {
	i := 0
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i == len(text) || len(text)-i > maxOpenerLen+8 {
		return false
	}
	switch text[i] {
	case '[':
		return text[len(text)-1] == ']' || text[len(text)-1] == ' ' || text[len(text)-1] == '\t'
	case '=', 'H', '#', '*':
		return true
	}
	return false
}

// Block tags: the name inside [NAME] and the kind it opens.
var tagKinds = map[string]Kind{
	"DEPENDENCY_REQUEST": KindDependencyRequest,
	"USER_QUESTION":      KindUserQuestion,
	"ERROR":              KindError,
}

var kindTags = map[Kind]string{
	KindDependencyRequest: "DEPENDENCY_REQUEST",
	KindUserQuestion:      "USER_QUESTION",
	KindError:             "ERROR",
	KindPhaseComplete:     "PHASE_COMPLETE",
	KindHandoff:           "HANDOFF",
}

// taggedOpener returns the tag name if t (trimmed) is exactly an opening tag.
// "[ERROR] something failed" is an ordinary log line, not a block.
func taggedOpener(t string) string {
	if len(t) < 3 || t[0] != '[' || t[len(t)-1] != ']' {
		return ""
	}
	if _, ok := tagKinds[t[1:len(t)-1]]; ok {
		return t[1 : len(t)-1]
	}
	return ""
}

// open starts a block if text is an opening line. It rejects most lines
// without allocating.
func (p *Parser) open(text []byte, lineNo int) *pending {
	t := bytes.TrimSpace(text)
	if len(t) == 0 || len(t) > maxOpenerLen {
		return nil
	}
	indent := len(text) - len(bytes.TrimLeft(text, " \t"))
	switch t[0] {
	case '[':
		if len(t) < 3 || t[len(t)-1] != ']' {
			return nil
		}
		if of, ok := tagKinds[string(t[1:len(t)-1])]; ok {
			return &pending{of: of, tag: string(t[1 : len(t)-1]), line: lineNo, indent: indent, fp: newFieldParser(knownKeys[of])}
		}
	case '=':
		if !bytes.HasPrefix(t, []byte("===")) || !bytes.HasSuffix(t, []byte("===")) {
			return nil
		}
		if w := bytes.TrimLeft(t, "= \t"); len(w) < 5 || !bytes.EqualFold(w[:5], []byte("PHASE")) {
			return nil
		}
		if n, ok := phaseMarker(string(t)); ok {
			return &pending{of: KindPhaseComplete, line: lineNo, indent: indent, phaseN: n, fp: newFieldParser(nil)}
		}
	default:
		if bytes.Contains(t, []byte("HANDOFF")) && isHandoffHeading(string(t)) {
			return &pending{of: KindHandoff, line: lineNo, indent: indent, fp: newFieldParser(knownKeys[KindHandoff])}
		}
	}
	return nil
}

// phaseMarker recognises "=== PHASE N COMPLETE ===" (at least three '=' each
// side, words in any case) and returns N as written.
func phaseMarker(t string) (string, bool) {
	if !strings.HasPrefix(t, "===") || !strings.HasSuffix(t, "===") || len(t) < 6 {
		return "", false
	}
	w := strings.Fields(strings.Trim(t, "="))
	if len(w) != 3 || !strings.EqualFold(w[0], "PHASE") || !strings.EqualFold(w[2], "COMPLETE") {
		return "", false
	}
	return w[1], true
}

// isHandoffHeading accepts "HANDOFF" alone on its line, also dressed as a
// Markdown heading or bold text ("## HANDOFF", "**HANDOFF**", "HANDOFF:").
func isHandoffHeading(t string) bool {
	t = strings.TrimSpace(strings.TrimLeft(t, "#"))
	t = strings.TrimSuffix(strings.TrimPrefix(t, "**"), "**")
	t = strings.TrimSuffix(strings.TrimSpace(t), ":")
	return t == "HANDOFF"
}

// closeBlock ends the open block, if any: a tagged block without its closing
// tag is invalid; an open-ended block is complete. at is the line that
// interrupted it, or 0 at EOF.
func (p *Parser) closeBlock(at int) {
	c := p.cur
	if c == nil {
		return
	}
	p.cur = nil
	if c.tag == "" {
		p.finish(c)
		return
	}
	msg := fmt.Sprintf("missing closing tag [/%s]", c.tag)
	if at > 0 {
		msg += fmt.Sprintf(" before the next block at line %d", at)
	} else {
		msg += " before end of output"
	}
	p.emitInvalid(c, msg)
}

// finish validates a complete block and emits it.
func (p *Parser) finish(c *pending) {
	b := Block{Kind: c.of, Of: c.of, Line: c.line, Raw: string(c.raw)}
	probs := validate(c, &b)
	if len(probs) > 0 {
		msgs := make([]string, len(probs))
		for i, pr := range probs {
			msgs[i] = pr.msg
		}
		b.Kind = KindInvalid
		b.Field = probs[0].field
		b.Error = kindTags[c.of] + ": " + strings.Join(msgs, "; ")
	}
	p.emit(b)
}

// emitInvalid reports a block that could not be read to its end.
func (p *Parser) emitInvalid(c *pending, msg string) {
	b := Block{Kind: KindInvalid, Of: c.of, Line: c.line, Raw: string(c.raw),
		Error: kindTags[c.of] + ": " + msg}
	b.Fields, b.Keys = c.fp.fields(), c.fp.keys
	if c.of == KindPhaseComplete {
		b.Fields["N"] = c.phaseN
		b.Keys = append([]string{"N"}, b.Keys...)
	}
	p.emit(b)
}

func (p *Parser) emit(b Block) {
	p.out = append(p.out, b)
	if p.onBlock != nil {
		p.onBlock(b)
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// dedent removes up to n leading blanks: the indentation of the opening line,
// so a block indented as a whole (in a Markdown list, say) reads as if it were not.
func dedent(s string, n int) string {
	i := 0
	for i < n && i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[i:]
}

// phaseNumber parses N of a phase marker: a positive decimal integer.
func phaseNumber(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || s[0] == '+' {
		return 0, false
	}
	return n, true
}

// ParseAll reads a complete text (a per-turn CLI's whole reply, a log file)
// and returns its blocks in order.
func ParseAll(text []byte, opt Options) []Block {
	p := NewParser(opt)
	blocks := p.Write(text)
	return append(blocks, p.Flush()...)
}

// AsWriter returns an io.Writer that feeds p, for io.Copy from a process's
// stdout; blocks then reach Options.OnBlock. Call p.Flush at EOF.
func (p *Parser) AsWriter() io.Writer { return parserWriter{p} }

type parserWriter struct{ p *Parser }

func (w parserWriter) Write(b []byte) (int, error) {
	w.p.Write(b)
	return len(b), nil
}
