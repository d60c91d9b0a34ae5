// Package server is the sidecar's JSON-RPC 2.0 server, spoken over stdin/stdout in language
// server style (Content-Length framing, the LSP lifecycle, flow files as LSP documents) plus
// custom requests under "agentcanvas/". Like gopls's internal/server, each RPC method (or
// small group) lives in its own file and only decodes parameters, calls a domain package
// and encodes the answer; domain packages know nothing of JSON-RPC.
//
// Concurrency: go.lsp.dev/jsonrpc2 runs a handler inline on the read loop unless it calls
// jsonrpc2.Async, so notifications (didOpen, didChange…) are applied in wire order. Methods
// that do real work are marked async: they release the read loop first, which is what lets
// $/cancelRequest reach them and lets them call back into the client ($/progress).
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Options configure a Server.
type Options struct {
	// Version is reported in initialize's serverInfo.
	Version string
	// Log receives the sidecar's own log (stderr for `agentcanvas serve`; never stdout).
	Log io.Writer
	// DiagnosticsDelay debounces diagnostics after a change (default 75ms).
	DiagnosticsDelay time.Duration
	// WatchDelay debounces file-system notifications (default 100ms).
	WatchDelay time.Duration
	// MaxFrame is the largest message accepted (default DefaultMaxFrame).
	MaxFrame int
	// StopTimeout bounds the end of a session (default 15s, above the agents' stop grace):
	// past it Run returns anyway, after logging what is still stuck, so an editor that went
	// away never leaves a sidecar behind. Agents still running die with it: their guardian
	// kills them when the sidecar exits.
	StopTimeout time.Duration
	// TestHooks enables methods that exist only for tests (agentcanvas/test/block).
	TestHooks bool
	// Services are the domain packages behind the custom requests; a nil service answers
	// with a "not available yet" error.
	Services Services
}

// lifecycle states.
const (
	stateNew = iota
	stateInitialized
	stateShutdown
)

// Server is one JSON-RPC session with one client.
type Server struct {
	opts   Options
	logger *log.Logger
	svc    Services

	conn   jsonrpc2.Conn
	stream *stream

	mu          sync.Mutex
	state       int
	root        string // workspace root folder, from initialize
	progressCap bool   // client supports window/workDoneProgress/create
	clientPID   int

	docs *documents

	cancelMu sync.Mutex
	inflight map[jsonrpc2.ID]context.CancelFunc

	exitOnce sync.Once
	exited   chan struct{}
	ending   atomic.Bool // the session is ending: notifications may fail quietly
	exitCode atomic.Int32

	engineMu sync.Mutex // guards svc.Runs

	settingsMu sync.Mutex
	settings   settings // the editor's agentcanvas.* settings (settings.go)

	watch  *watcher
	status statusTracker
	seq    atomic.Int64 // progress tokens
}

// New makes a server.
func New(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.DiagnosticsDelay <= 0 {
		opts.DiagnosticsDelay = 75 * time.Millisecond
	}
	if opts.WatchDelay <= 0 {
		opts.WatchDelay = 100 * time.Millisecond
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = 15 * time.Second
	}
	s := &Server{
		opts:     opts,
		logger:   log.New(opts.Log, "agentcanvas serve: ", log.LstdFlags|log.Lmicroseconds),
		svc:      opts.Services.withDefaults(),
		inflight: map[jsonrpc2.ID]context.CancelFunc{},
		exited:   make(chan struct{}),
		settings: defaultSettings(),
	}
	s.docs = newDocuments(s)
	return s
}

// Run serves one client on in/out until in closes or the client sends exit. It returns the
// process exit code: 0, or 1 when the client sent exit without shutdown (as LSP asks).
func (s *Server) Run(ctx context.Context, in io.Reader, out io.Writer) int {
	var closer io.Closer
	if c, ok := in.(io.Closer); ok {
		closer = c
	}
	// Every request's context derives from ctx; cancelling it when input ends stops the
	// requests still running, so end of input always ends the session.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.stream = newStream(in, out, closer, s.opts.MaxFrame, s.logf)
	s.stream.onEnd = cancel
	s.conn = jsonrpc2.NewConn(s.stream, jsonrpc2.WithCodec(stdCodec{}), jsonrpc2.WithPreempter(cancelPreempter{s}))
	s.conn.Go(ctx, s.handle)
	select {
	case <-s.conn.Done():
		if err := s.conn.Err(); err != nil {
			s.logf("connection ended: %v", err)
		}
	case <-s.exited:
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() {
		s.stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(s.opts.StopTimeout):
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		s.logf("ending the session took longer than %s; exiting anyway. Goroutines:\n%s", s.opts.StopTimeout, buf)
		_ = s.stream.Close()
		return 1
	}
	return int(s.exitCode.Load())
}

// stop releases everything the session started.
func (s *Server) stop() {
	s.ending.Store(true)
	s.docs.stop()
	if s.watch != nil {
		s.watch.close()
	}
	s.engineMu.Lock()
	runs := s.svc.Runs
	s.engineMu.Unlock()
	if runs != nil {
		runs.Close() // stops every run and waits: no agent outlives the session
	}
	// Close the stream rather than Conn.Close: Close waits for in-flight handlers, and a
	// handler blocked on the client must not keep the process alive after exit.
	_ = s.stream.Close()
}

func (s *Server) logf(format string, args ...any) { s.logger.Printf(format, args...) }

// method is one RPC method or notification.
type method struct {
	// handle decodes params and does the work. For notifications the result is ignored and
	// an error is logged (an error from a notification handler would close the connection).
	handle func(s *Server, ctx context.Context, params json.RawMessage) (any, error)
	// async releases the read loop before handling: for work that takes time, may be
	// cancelled, or calls back into the client.
	async bool
	// beforeInit may run before initialize.
	beforeInit bool
	// testOnly methods exist only with Options.TestHooks.
	testOnly bool
}

// methods is the dispatch table; each file registers its methods in init.
var methods = map[string]method{}

func register(name string, m method) {
	if _, dup := methods[name]; dup {
		panic("server: method registered twice: " + name)
	}
	methods[name] = m
}

// MethodNames lists every registered method and notification (docs/protocol.md is tested
// against it).
func MethodNames() []string {
	out := make([]string, 0, len(methods))
	for n, m := range methods {
		if !m.testOnly {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// handle is the jsonrpc2 handler: lifecycle checks, dispatch, error mapping.
func (s *Server) handle(ctx context.Context, req *jsonrpc2.Request) (result any, err error) {
	name := req.Method()
	m, ok := methods[name]
	if m.testOnly && !s.opts.TestHooks {
		ok = false
	}
	isCall := req.IsCall()
	if !ok {
		if !isCall {
			if len(name) < 2 || name[:2] != "$/" {
				s.logf("ignored unknown notification %q", name)
			}
			return nil, nil
		}
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %q", name)
	}
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	switch {
	case state == stateNew && !m.beforeInit:
		if !isCall {
			return nil, nil // LSP: notifications before initialize are dropped
		}
		return nil, jsonrpc2.Errorf(jsonrpc2.ServerNotInitialized, "%s: the server is not initialized; send initialize first", name)
	case state == stateShutdown && name != "exit" && isCall:
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "%s: the server is shutting down", name)
	}

	// The params are borrowed from the read buffer; copy them before releasing the loop.
	params := json.RawMessage(append([]byte(nil), req.Params()...))
	// The request context is pooled and recycled when the handler returns; deriving a
	// cancellable context from it would leave a goroutine watching a recycled value. Use
	// the connection's context and our own cancellation ($/cancelRequest) instead.
	reqCtx := ctx
	ctx = jsonrpc2.DetachContext(ctx)
	if isCall {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		id := req.ID()
		s.cancelMu.Lock()
		s.inflight[id] = cancel
		s.cancelMu.Unlock()
		defer func() {
			s.cancelMu.Lock()
			delete(s.inflight, id)
			s.cancelMu.Unlock()
			cancel()
		}()
	}
	if m.async {
		jsonrpc2.Async(reqCtx)
	}
	defer func() {
		if r := recover(); r != nil {
			err = bugf("%s panicked: %v", name, r)
		}
		var be *bugError
		if errors.As(err, &be) {
			s.logMessage(msgError, fmt.Sprintf("%s: %v (please report this)", name, be))
		}
		if !isCall {
			if err != nil {
				s.logf("%s: %v", name, err)
				s.logMessage(msgWarning, fmt.Sprintf("%s: %v", name, err))
			}
			result, err = nil, nil
			return
		}
		err = wireError(ctx, name, err)
	}()
	return m.handle(s, ctx, params)
}

// cancelPreempter handles $/cancelRequest on the read loop, ahead of later messages. It is
// the server's own rather than protocol.CancelHandler, and the id is read by decodeID rather
// than into protocol.CancelParams: in go.lsp.dev/protocol v1.0.1 CancelParams.ID is an int32 or
// a string, so the id of a request numbered beyond 32 bits (jsonrpc2 allows 64) cannot be
// decoded, and CancelHandler answers that by returning an error from a notification, which
// ends a go.lsp.dev/jsonrpc2 v1 connection.
type cancelPreempter struct{ s *Server }

func (p cancelPreempter) Preempt(_ context.Context, req *jsonrpc2.Request) (any, error) {
	if req.Method() != "$/cancelRequest" {
		return nil, jsonrpc2.ErrNotHandled
	}
	var params struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(req.Params(), &params); err != nil || !decodeID(params.ID).IsValid() {
		p.s.logf("$/cancelRequest with an unusable id: %s", clip(req.Params()))
		return struct{}{}, nil
	}
	id := decodeID(params.ID)
	p.s.cancelMu.Lock()
	cancel := p.s.inflight[id]
	p.s.cancelMu.Unlock()
	if cancel != nil {
		cancel()
	}
	return struct{}{}, nil // handled: never reaches the handler
}

// Error codes beyond JSON-RPC's own (LSP's where LSP has one).
const (
	// CodeRequestCancelled answers a request cancelled by $/cancelRequest (LSP).
	CodeRequestCancelled jsonrpc2.Code = -32800
	// CodeContentModified answers a request against a stale document version (LSP).
	CodeContentModified jsonrpc2.Code = -32801
	// CodeRequestFailed is a well-formed request the domain refused (LSP).
	CodeRequestFailed jsonrpc2.Code = -32803
	// CodeNotAvailable: the feature's package has not landed in this build.
	CodeNotAvailable jsonrpc2.Code = -32010
)

// Typed errors handlers return; wireError maps them to codes.
type (
	paramsError  struct{ msg string }
	staleError   struct{ msg string }
	unavailError struct{ what string }
)

// dataError is a domain refusal with structured data for the client (the error's "data").
type dataError struct {
	err  error
	data any
}

func (e *dataError) Error() string { return e.err.Error() }
func (e *dataError) Unwrap() error { return e.err }

func (e *paramsError) Error() string  { return e.msg }
func (e *staleError) Error() string   { return e.msg }
func (e *unavailError) Error() string { return "not available yet: " + e.what }

func badParams(format string, args ...any) error { return &paramsError{fmt.Sprintf(format, args...)} }
func stale(format string, args ...any) error     { return &staleError{fmt.Sprintf(format, args...)} }
func notAvailable(what string) error             { return &unavailError{what} }

func wireError(ctx context.Context, name string, err error) error {
	if err == nil {
		return nil
	}
	var (
		we *jsonrpc2.Error
		pe *paramsError
		se *staleError
		ue *unavailError
		be *bugError
	)
	switch {
	case errors.As(err, &we):
		return err
	case errors.As(err, &pe):
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: invalid params: %s", name, pe.msg)
	case errors.As(err, &se):
		return jsonrpc2.Errorf(CodeContentModified, "%s: %s", name, se.msg)
	case errors.As(err, &ue):
		return jsonrpc2.Errorf(CodeNotAvailable, "%s: %s", name, ue.Error())
	case errors.As(err, &be):
		return jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: internal error: %s", name, be.msg)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return jsonrpc2.Errorf(CodeRequestCancelled, "%s: cancelled", name)
	}
	var de *dataError
	if errors.As(err, &de) {
		e := jsonrpc2.Errorf(CodeRequestFailed, "%s: %v", name, err)
		e.Data, _ = json.Marshal(de.data)
		return e
	}
	return jsonrpc2.Errorf(CodeRequestFailed, "%s: %v", name, err)
}

// decode unmarshals params into v; absent params decode as {}.
func decode(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return badParams("%v", err)
	}
	return nil
}

// stdCodec marshals params and results with encoding/json, which the server's own wire types
// (agentcanvas/*) are written for (omitempty, nil slices as null where the protocol allows
// it), and go.lsp.dev/protocol's types with protocol's codec, which theirs are written for
// (unions as sealed interfaces, Optional fields, omitzero).
type stdCodec struct{}

func (stdCodec) Marshal(v any) ([]byte, error) {
	if isProtocolType(v) {
		return protocol.Marshal(v)
	}
	switch m := v.(type) {
	case jsonrpc2.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case json.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	}
	return json.Marshal(v)
}

// protocolPkg is go.lsp.dev/protocol's import path, as reflect names it.
var protocolPkg = reflect.TypeFor[protocol.Position]().PkgPath()

// isProtocolType says whether v is a go.lsp.dev/protocol value, a pointer to one or a slice
// of them.
func isProtocolType(v any) bool {
	t := reflect.TypeOf(v)
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice) {
		t = t.Elem()
	}
	return t != nil && t.PkgPath() == protocolPkg
}

func (stdCodec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	return json.Unmarshal(data, v)
}

// notify sends a notification to the client; failures are logged, not returned (the
// client going away ends the session through the read loop).
func (s *Server) notify(method string, params any) {
	if s.conn == nil {
		return
	}
	if err := s.conn.Notify(context.Background(), method, params); err != nil && !s.ending.Load() {
		s.logf("notify %s: %v", method, err)
	}
}
