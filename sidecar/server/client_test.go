package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A test client speaking JSON-RPC 2.0 with Content-Length framing to a server over pipes:
// the real binary (startBinary) or an in-process Server (startInProcess). It answers the
// server's own requests (window/workDoneProgress/create) unless told to hold them.

// deadline bounds every wait so a broken server fails the test instead of hanging it. It is
// a safety net, not an assertion about speed.
const deadline = 30 * time.Second

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type client struct {
	t  testing.TB
	w  io.WriteCloser
	wm sync.Mutex

	next atomic.Int64

	mu          sync.Mutex
	pending     map[string]chan *wireMsg
	notes       []*wireMsg
	log         []*wireMsg    // every notification, in arrival order, never consumed
	noteCh      chan struct{} // signalled on every notification
	serverCalls []*wireMsg
	holdCalls   bool // do not answer server requests
	nullIDResp  []*wireMsg
	readErr     error
	readDone    chan struct{}

	proc   *exec.Cmd
	stderr *bytes.Buffer
	exited chan struct{}
	code   int
}

func newClient(t testing.TB, r io.Reader, w io.WriteCloser) *client {
	c := &client{t: t, w: w, pending: map[string]chan *wireMsg{}, noteCh: make(chan struct{}, 1), readDone: make(chan struct{})}
	go c.read(bufio.NewReader(r))
	return c
}

var (
	buildFlags []string // extra `go build` flags for the binary (race_test.go adds -race)
	binOnce    sync.Once
	binPath    string
	binErr     error
)

// binary builds agentcanvas once per test run.
func binary(t testing.TB) string {
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentcanvas-server-test")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "agentcanvas")
		args := append(append([]string{"build"}, buildFlags...), "-o", binPath, "github.com/agentcanvas/agentcanvas/sidecar/cmd/agentcanvas")
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// startBinary runs `agentcanvas serve` with the test hooks on.
func startBinary(t testing.TB, args ...string) *client {
	cmd := exec.Command(binary(t), append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), "AGENTCANVAS_SERVE_TEST_HOOKS=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &lockedWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, stdout, stdin)
	c.proc, c.stderr, c.exited = cmd, &stderr, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		c.code = cmd.ProcessState.ExitCode()
		close(c.exited)
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-c.exited:
		case <-time.After(deadline):
			_ = cmd.Process.Kill()
			t.Errorf("server did not exit after stdin closed")
		}
		if s := stderr.String(); strings.Contains(s, "bug: ") || strings.Contains(s, "panic") || strings.Contains(s, "DATA RACE") {
			t.Errorf("the server reported a bug, panicked or raced")
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	return c
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// startInProcess runs a Server in this process over pipes.
func startInProcess(t testing.TB, opts Options) (*client, *Server) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	opts.TestHooks = true
	s := New(opts)
	done := make(chan struct{})
	go func() {
		s.Run(context.Background(), inR, outW)
		outW.Close()
		close(done)
	}()
	c := newClient(t, outR, inW)
	c.exited = done
	bugMu.Lock()
	bugsBefore := len(bugSeen)
	bugMu.Unlock()
	t.Cleanup(func() {
		bugMu.Lock()
		if bugs := bugSeen[bugsBefore:]; len(bugs) > 0 {
			t.Errorf("the server reported bugs: %v", bugs)
		}
		bugMu.Unlock()
		inW.Close()
		inR.Close()
		select {
		case <-done:
		case <-time.After(deadline):
			t.Errorf("in-process server did not stop")
		}
	})
	return c, s
}

func (c *client) read(r *bufio.Reader) {
	defer close(c.readDone)
	for {
		body, err := readFrame(r)
		if err != nil {
			c.mu.Lock()
			c.readErr = err
			c.mu.Unlock()
			return
		}
		var m wireMsg
		if err := json.Unmarshal(body, &m); err != nil {
			c.t.Errorf("server sent invalid JSON: %v: %q", err, body)
			continue
		}
		if m.JSONRPC != "2.0" {
			c.t.Errorf("server sent a message without jsonrpc 2.0: %s", body)
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // a request from the server
			c.mu.Lock()
			c.serverCalls = append(c.serverCalls, &m)
			hold := c.holdCalls
			c.mu.Unlock()
			if !hold {
				c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil})
			}
		case m.Method != "":
			c.mu.Lock()
			c.notes = append(c.notes, &m)
			c.log = append(c.log, &m)
			c.mu.Unlock()
			select {
			case c.noteCh <- struct{}{}:
			default:
			}
		default:
			key := string(m.ID)
			c.mu.Lock()
			ch := c.pending[key]
			delete(c.pending, key)
			if ch == nil {
				c.nullIDResp = append(c.nullIDResp, &m)
			}
			c.mu.Unlock()
			if ch != nil {
				ch <- &m
			} else {
				select {
				case c.noteCh <- struct{}{}:
				default:
				}
			}
		}
	}
}

// newFrameReader reads frames from r until io.EOF at a frame boundary.
func newFrameReader(r io.Reader) func() ([]byte, error) {
	br := bufio.NewReader(r)
	return func() ([]byte, error) {
		if _, err := br.Peek(1); err == io.EOF {
			return nil, io.EOF
		}
		return readFrame(br)
	}
}

func readFrame(r *bufio.Reader) ([]byte, error) {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, err = strconv.Atoi(v)
			if err != nil {
				return nil, err
			}
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("frame without Content-Length")
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}

func (c *client) writeRaw(b []byte) {
	c.wm.Lock()
	defer c.wm.Unlock()
	if _, err := c.w.Write(b); err != nil {
		c.t.Fatalf("write to server: %v", err)
	}
}

func frame(body []byte) []byte {
	return append([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))), body...)
}

func (c *client) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.writeRaw(frame(b))
}

// expect registers for the response with id without sending anything.
func (c *client) expect(id any) chan *wireMsg {
	raw, _ := json.Marshal(id)
	ch := make(chan *wireMsg, 1)
	c.mu.Lock()
	c.pending[string(raw)] = ch
	c.mu.Unlock()
	return ch
}

// send sends a request with the given id (a number or a string) and returns a channel
// for its response.
func (c *client) send(id any, method string, params any) chan *wireMsg {
	ch := c.expect(id)
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.write(msg)
	return ch
}

func (c *client) await(ch chan *wireMsg, what string) *wireMsg {
	c.t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(deadline):
		c.t.Fatalf("no response to %s", what)
		return nil
	}
}

// call sends a request and waits for its response.
func (c *client) call(method string, params any) (json.RawMessage, *rpcError) {
	c.t.Helper()
	m := c.await(c.send(c.next.Add(1), method, params), method)
	return m.Result, m.Error
}

// mustCall fails the test on an error response and decodes the result into out.
func (c *client) mustCall(method string, params any, out any) {
	c.t.Helper()
	res, err := c.call(method, params)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			c.t.Fatalf("%s result %s: %v", method, res, err)
		}
	}
}

// ping makes a trivial request (hover in a document that is not open: a null result).
func (c *client) ping() *rpcError {
	c.t.Helper()
	res, err := c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///nowhere/flows/x.yaml"},
		"position": map[string]any{"line": 0, "character": 0}})
	if err == nil && string(res) != "null" {
		c.t.Errorf("ping: %s", res)
	}
	return err
}

func (c *client) notify(method string, params any) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.write(msg)
}

// waitNote waits for a notification of method that satisfies ok and consumes it.
func (c *client) waitNote(method string, ok func(params json.RawMessage) bool) json.RawMessage {
	c.t.Helper()
	timeout := time.After(deadline)
	for {
		c.mu.Lock()
		for i, m := range c.notes {
			if m.Method == method && (ok == nil || ok(m.Params)) {
				c.notes = append(c.notes[:i:i], c.notes[i+1:]...)
				c.mu.Unlock()
				return m.Params
			}
		}
		c.mu.Unlock()
		select {
		case <-c.noteCh:
		case <-timeout:
			c.t.Fatalf("no %s notification", method)
			return nil
		case <-c.readDone:
			c.t.Fatalf("server closed its output while waiting for %s", method)
		}
	}
}

// waitNullID waits for an error response with a null id (a rejected malformed message).
func (c *client) waitNullID() *wireMsg {
	c.t.Helper()
	timeout := time.After(deadline)
	for {
		c.mu.Lock()
		if len(c.nullIDResp) > 0 {
			m := c.nullIDResp[0]
			c.nullIDResp = c.nullIDResp[1:]
			c.mu.Unlock()
			return m
		}
		c.mu.Unlock()
		select {
		case <-c.noteCh:
		case <-timeout:
			c.t.Fatalf("no null-id error response")
			return nil
		}
	}
}

// initialize runs the LSP handshake with root as the workspace folder.
func (c *client) initialize(root string) map[string]any {
	c.t.Helper()
	return c.initializeWith(root, nil)
}

// initializeWith is initialize with more initializationOptions (the editor's settings).
func (c *client) initializeWith(root string, options map[string]any) map[string]any {
	c.t.Helper()
	opts := map[string]any{"diagnosticsDelayMs": 5}
	for k, v := range options {
		opts[k] = v
	}
	params := map[string]any{
		"processId":             os.Getpid(),
		"capabilities":          map[string]any{"window": map[string]any{"workDoneProgress": true}},
		"initializationOptions": opts,
	}
	if root != "" {
		params["rootUri"] = pathURI(root)
		params["workspaceFolders"] = []any{map[string]any{"uri": pathURI(root), "name": "ws"}}
	}
	var res map[string]any
	c.mustCall("initialize", params, &res)
	c.notify("initialized", map[string]any{})
	return res
}

func (c *client) shutdownExit() {
	c.t.Helper()
	c.mustCall("shutdown", nil, nil)
	c.notify("exit", nil)
}

func (c *client) waitExit() int {
	c.t.Helper()
	select {
	case <-c.exited:
		return c.code
	case <-time.After(deadline):
		c.t.Fatal("server did not exit")
		return -1
	}
}

// diagnostics waits for publishDiagnostics of uri at version.
func (c *client) diagnostics(uri string, version int) []clientDiagnostic {
	c.t.Helper()
	raw := c.waitNote("textDocument/publishDiagnostics", func(p json.RawMessage) bool {
		var d clientPublishDiagnostics
		_ = json.Unmarshal(p, &d)
		return d.URI == uri && d.Version != nil && int(*d.Version) == version
	})
	var d clientPublishDiagnostics
	if err := json.Unmarshal(raw, &d); err != nil {
		c.t.Fatal(err)
	}
	return d.Diagnostics
}
