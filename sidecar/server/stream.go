package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// DefaultMaxFrame is the largest message body the server reads (64 MiB). A bigger frame is
// skipped without being buffered and answered with an error.
const DefaultMaxFrame = 64 << 20

// maxSkippable is the largest declared length the stream skips over (as go.lsp.dev/jsonrpc2
// caps it); a bigger one is treated as a corrupt header.
const maxSkippable = 1 << 30

// stream is the LSP base-protocol framing (Content-Length headers) on stdin/stdout, made
// resilient: jsonrpc2's own header stream ends the connection on the first malformed frame,
// but an editor's sidecar must survive a bad frame. Each bad frame is answered here with a
// JSON-RPC error (id null unless the id could be read) and reading resumes at the next
// "Content-Length:" header.
type stream struct {
	in       *bufio.Reader
	out      io.Writer
	closer   io.Closer
	maxFrame int
	logf     func(format string, args ...any)
	// onEnd is called once when reading ends (end of input or a read error), so requests
	// still running are cancelled rather than keeping the process alive.
	onEnd   func()
	endOnce sync.Once

	wmu  sync.Mutex
	wbuf []byte
}

func newStream(in io.Reader, out io.Writer, closer io.Closer, maxFrame int, logf func(string, ...any)) *stream {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	return &stream{in: bufio.NewReaderSize(in, 64<<10), out: out, closer: closer, maxFrame: maxFrame, logf: logf}
}

// errBadFrame is a framing problem the stream recovers from.
type errBadFrame struct {
	msg    string
	resync bool // the body length is unknown: skip to the next header after answering
}

func (e *errBadFrame) Error() string { return e.msg }

// Read implements jsonrpc2.Stream.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		body, n, err := s.readFrame()
		var bad *errBadFrame
		if errors.As(err, &bad) {
			// Answer first: the client may wait for the answer before sending more.
			s.reject(jsonrpc2.ID{}, jsonrpc2.NewError(jsonrpc2.ParseError, bad.msg))
			if bad.resync {
				if err := s.skipToHeader(); err != nil {
					if s.onEnd != nil {
						s.endOnce.Do(s.onEnd)
					}
					return nil, 0, err
				}
			}
			continue
		}
		if err != nil {
			if s.onEnd != nil {
				s.endOnce.Do(s.onEnd)
			}
			return nil, 0, err
		}
		msg, derr := jsonrpc2.DecodeMessage(body)
		if derr != nil {
			id, code, text := classifyBadBody(body)
			s.reject(id, jsonrpc2.NewError(code, text))
			continue
		}
		return msg, n, nil
	}
}

// readFrame reads one header block and its body. Errors of type *errBadFrame leave the
// reader positioned after the bad frame (or at the next header it could find).
func (s *stream) readFrame() ([]byte, int64, error) {
	length, consumed, err := s.readHeader()
	if err != nil {
		return nil, 0, err
	}
	if length > s.maxFrame {
		// Skip the body without holding it: the next frame starts right after it.
		if _, err := io.CopyN(io.Discard, s.in, int64(length)); err != nil {
			return nil, 0, io.ErrUnexpectedEOF
		}
		return nil, 0, &errBadFrame{fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes; it was skipped", length, s.maxFrame), false}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.in, body); err != nil {
		return nil, 0, io.ErrUnexpectedEOF
	}
	return body, int64(consumed + length), nil
}

// readHeader parses "Name: value" lines up to a blank line. A malformed header block is
// reported once the block ends, then the reader skips to the next "Content-Length:".
func (s *stream) readHeader() (length, consumed int, err error) {
	length = -1
	var problem string
	for {
		line, err := s.in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A header line longer than the buffer is not a header: resynchronise.
			return 0, 0, &errBadFrame{"invalid message header: header line too long", true}
		}
		if err != nil {
			if err == io.EOF && consumed == 0 && len(line) == 0 {
				return 0, 0, io.EOF
			}
			return 0, 0, io.ErrUnexpectedEOF
		}
		consumed += len(line)
		t := bytes.TrimRight(line, "\r\n")
		if len(t) == 0 {
			if consumed == len(line) {
				continue // stray blank lines between frames are harmless
			}
			break
		}
		name, value, ok := bytes.Cut(t, []byte(":"))
		if !ok {
			if problem == "" {
				problem = fmt.Sprintf("header line %q has no colon", clip(t))
			}
			continue
		}
		if bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			n, perr := strconv.Atoi(string(bytes.TrimSpace(value)))
			if perr == nil && n > maxSkippable {
				// Too big to be a real message: more likely a corrupt header than 1 GiB of
				// JSON, so resynchronise on the next header instead of waiting for the body.
				if problem == "" {
					problem = fmt.Sprintf("Content-Length %d is over 1 GiB", n)
				}
				continue
			}
			if perr != nil || n <= 0 {
				if problem == "" {
					problem = fmt.Sprintf("Content-Length %q is not a positive integer", clip(bytes.TrimSpace(value)))
				}
				continue
			}
			length = n
		}
	}
	if problem == "" && length < 0 {
		problem = "no Content-Length header"
	}
	if problem != "" {
		return 0, 0, &errBadFrame{"invalid message header: " + problem, true}
	}
	return length, consumed, nil
}

// skipToHeader discards input up to (not including) the next "Content-Length:" (any case).
func (s *stream) skipToHeader() error {
	const want = "content-length:"
	matched := 0
	for {
		b, err := s.in.ReadByte()
		if err != nil {
			return io.EOF // end of input while resynchronising: a clean end for the caller
		}
		if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		switch {
		case b == want[matched]:
			matched++
		case b == want[0]:
			matched = 1
		default:
			matched = 0
		}
		if matched == len(want) {
			// Put the header name back by parsing it from a reader that replays it.
			s.in = bufio.NewReaderSize(io.MultiReader(bytes.NewReader([]byte("Content-Length:")), s.in), 64<<10)
			return nil
		}
	}
}

// classifyBadBody explains why a frame's body is not a JSON-RPC message: invalid JSON is
// a parse error (id null); valid JSON that is not a request is an invalid request, answered
// with the request's id when it has a usable one.
func classifyBadBody(body []byte) (jsonrpc2.ID, jsonrpc2.Code, string) {
	if !json.Valid(body) {
		return jsonrpc2.ID{}, jsonrpc2.ParseError, "parse error: the message is not valid JSON"
	}
	t := bytes.TrimSpace(body)
	if len(t) > 0 && t[0] == '[' {
		return jsonrpc2.ID{}, jsonrpc2.InvalidRequest, "invalid request: batches are not supported; send one message per frame"
	}
	var probe struct {
		ID      json.RawMessage `json:"id"`
		JSONRPC any             `json:"jsonrpc"`
		Method  any             `json:"method"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return jsonrpc2.ID{}, jsonrpc2.InvalidRequest, "invalid request: the message is not a JSON object"
	}
	id := decodeID(probe.ID)
	switch {
	case probe.JSONRPC != "2.0":
		return id, jsonrpc2.InvalidRequest, `invalid request: "jsonrpc" must be "2.0"`
	case probe.Method != nil:
		if _, ok := probe.Method.(string); !ok {
			return id, jsonrpc2.InvalidRequest, `invalid request: "method" must be a string`
		}
	}
	return id, jsonrpc2.InvalidRequest, "invalid request: not a JSON-RPC 2.0 request, notification or response (check the id: a string or an integer)"
}

// decodeID reads a JSON-RPC id (a string or an integer); anything else is the null id.
// It is also the $/cancelRequest decoder: go.lsp.dev/protocol's CancelParams decodes ids
// as an int32-or-string union and rejects integer ids outside int32 (our jsonrpc2 ids
// are int64), so the server decodes cancel ids itself.
func decodeID(raw json.RawMessage) jsonrpc2.ID {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return jsonrpc2.ID{}
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return jsonrpc2.NewStringID(s)
		}
		return jsonrpc2.ID{}
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return jsonrpc2.NewNumberID(n)
	}
	return jsonrpc2.ID{}
}

// reject answers a bad frame. Write errors surface on the next regular write.
func (s *stream) reject(id jsonrpc2.ID, e *jsonrpc2.Error) {
	if s.logf != nil {
		s.logf("rejected a malformed message: %s", e.Message)
	}
	_, _ = s.Write(context.Background(), jsonrpc2.NewResponse(id, nil, e))
}

// Write implements jsonrpc2.Stream: one contiguous write per frame.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	const reserve = 40
	buf := append(s.wbuf[:0], make([]byte, reserve)...)
	buf = jsonrpc2.AppendMessage(buf, msg)
	body := len(buf) - reserve
	head := "Content-Length: " + strconv.Itoa(body) + "\r\n\r\n"
	start := reserve - len(head)
	copy(buf[start:], head)
	s.wbuf = buf
	n, err := s.out.Write(buf[start:])
	return int64(n), err
}

// Close implements jsonrpc2.Stream.
func (s *stream) Close() error {
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
