package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	lspuri "go.lsp.dev/uri"
)

// These tests drive the real `agentcanvas serve` binary over pipes.

const goodFlow = `# a small flow
version: "1.0"
agents:
  - id: a1
    name: "Planner — 계획"
    role: orchestrator
  - id: a2
    role: worker
    runtime: {kind: cli, backendId: dry-run}
interactions:
  - id: i1
    patternId: manager_worker
    edges:
      - source: a1
        target: a2
        data:
          termination: {type: max_rounds, rounds: 2}
`

// workspace makes a workspace folder with flows/<name> holding text.
func workspace(t *testing.T, name, text string) (root, uri string) {
	t.Helper()
	root = t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "flows"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "flows", name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, pathURI(p)
}

func (c *client) open(uri, text string, version int) {
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "yaml", "version": version, "text": text}})
}

// change sends didChange, written with go.lsp.dev/protocol's codec (its content changes are
// a union).
func (c *client) change(uri string, version int, changes ...protocol.TextDocumentContentChangeEvent) {
	c.t.Helper()
	params, err := protocol.Marshal(&protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: lspuri.URI(uri)}, Version: int32(version)},
		ContentChanges: changes})
	if err != nil {
		c.t.Fatal(err)
	}
	c.notify("textDocument/didChange", json.RawMessage(params))
}

func TestLifecycle(t *testing.T) {
	c := startBinary(t)
	_, err := c.call("agentcanvas/listPatterns", nil)
	if err == nil || err.Code != -32002 {
		t.Fatalf("a request before initialize: got %v, want -32002 (server not initialized)", err)
	}
	res := c.initialize(t.TempDir())
	caps := res["capabilities"].(map[string]any)
	if caps["positionEncoding"] != "utf-16" {
		t.Errorf("positionEncoding = %v", caps["positionEncoding"])
	}
	if sync := caps["textDocumentSync"].(map[string]any); sync["change"] != float64(2) || sync["openClose"] != true {
		t.Errorf("textDocumentSync = %v, want incremental with open/close", sync)
	}
	var advertised []string
	for _, m := range caps["experimental"].(map[string]any)["agentcanvas"].(map[string]any)["methods"].([]any) {
		advertised = append(advertised, m.(string))
	}
	for _, m := range designMethods {
		if !slices.Contains(advertised, "agentcanvas/"+m) {
			t.Errorf("initialize does not advertise agentcanvas/%s", m)
		}
	}
	if slices.Contains(advertised, "agentcanvas/test/block") {
		t.Error("a test hook is advertised")
	}
	st := c.waitNote("agentcanvas/status", nil)
	var status statusParams
	_ = json.Unmarshal(st, &status)
	if status.Health != healthOK && status.Health != healthWarning {
		t.Errorf("status after initialized: %s", st)
	}
	if _, err := c.call("initialize", map[string]any{}); err == nil {
		t.Error("a second initialize was accepted")
	}
	c.mustCall("shutdown", nil, nil)
	if err := c.ping(); err == nil || err.Code != -32600 {
		t.Errorf("a request after shutdown: got %v, want -32600", err)
	}
	c.notify("exit", nil)
	if code := c.waitExit(); code != 0 {
		t.Errorf("exit after shutdown: code %d, want 0", code)
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	c := startBinary(t)
	c.initialize("")
	c.notify("exit", nil)
	if code := c.waitExit(); code != 1 {
		t.Errorf("exit without shutdown: code %d, want 1", code)
	}
}

func TestExitWhenStdinCloses(t *testing.T) {
	c := startBinary(t)
	c.initialize(t.TempDir())
	c.w.Close()
	if code := c.waitExit(); code != 0 {
		t.Errorf("exit on end of input: code %d, want 0", code)
	}
	if strings.Contains(c.stderr.String(), "panic") {
		t.Errorf("stderr: %s", c.stderr.String())
	}
}

func TestDiagnosticsOnOpenAndChange(t *testing.T) {
	bad := strings.Replace(goodFlow, "agents:", "agnets:", 1)
	root, uri := workspace(t, "team.yaml", bad)
	c := startBinary(t)
	c.initialize(root)
	c.open(uri, bad, 1)
	ds := c.diagnostics(uri, 1)
	if len(ds) == 0 {
		t.Fatalf("no diagnostics for a flow with the unknown field agnets")
	}
	found := false
	for _, d := range ds {
		if d.Range.Start.Line == 2 && strings.Contains(d.Message, "agnets") {
			found = true
		}
		if d.Source != "agentcanvas" || d.Severity < 1 || d.Severity > 4 {
			t.Errorf("diagnostic %+v", d)
		}
	}
	if !found {
		t.Errorf("no diagnostic on line 2 (0-based) naming agnets: %+v", ds)
	}
	// Fix the typo with an incremental change: "agnets" -> "agents".
	c.change(uri, 2, rangeChange(protocol.Range{Start: protocol.Position{Line: 2, Character: 0}, End: protocol.Position{Line: 2, Character: 6}}, "agents"))
	if ds := c.diagnostics(uri, 2); len(ds) != 0 {
		t.Fatalf("diagnostics after the fix: %+v", ds)
	}
	// A burst of changes: the newest version wins and nothing older is published after it.
	c.change(uri, 3, rangeChange(protocol.Range{Start: protocol.Position{Line: 2, Character: 0}, End: protocol.Position{Line: 2, Character: 6}}, "agnets"))
	c.change(uri, 4, rangeChange(protocol.Range{Start: protocol.Position{Line: 2, Character: 0}, End: protocol.Position{Line: 2, Character: 6}}, "agents"))
	// A change on a line with non-ASCII text: the name's closing quote is at UTF-16 column
	// 27 ("    name: " is 10, the name 17 units incl. quotes minus one).
	line := `    name: "Planner — 계획"`
	col := uint32(len([]rune(line)) - 1)
	c.change(uri, 5, rangeChange(protocol.Range{Start: protocol.Position{Line: 4, Character: col}, End: protocol.Position{Line: 4, Character: col}}, "!"))
	if ds := c.diagnostics(uri, 5); len(ds) != 0 {
		t.Fatalf("diagnostics at version 5: %+v", ds)
	}
	// The server's text must now match ours: loadFlow reports the edited name.
	var lf struct {
		Version *int32 `json:"version"`
		Flow    struct {
			Agents []struct{ Name string } `json:"agents"`
		} `json:"flow"`
	}
	c.mustCall("agentcanvas/loadFlow", map[string]any{"uri": uri}, &lf)
	if lf.Version == nil || *lf.Version != 5 || lf.Flow.Agents[0].Name != "Planner — 계획!" {
		t.Fatalf("loadFlow after changes: version %v, agents %+v", lf.Version, lf.Flow.Agents)
	}
	// Publications for this file came in increasing version order, ending with 5.
	c.mu.Lock()
	last := int32(0)
	for _, m := range c.log {
		var d clientPublishDiagnostics
		_ = json.Unmarshal(m.Params, &d)
		if m.Method != "textDocument/publishDiagnostics" || d.URI != uri {
			continue
		}
		if d.Version == nil || *d.Version <= last {
			t.Errorf("diagnostics for version %v published after version %d", d.Version, last)
			continue
		}
		last = *d.Version
	}
	c.mu.Unlock()
	if last != 5 {
		t.Errorf("last published version %d, want 5", last)
	}
	// Closing clears the file's diagnostics.
	c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	c.waitNote("textDocument/publishDiagnostics", func(p json.RawMessage) bool {
		var d clientPublishDiagnostics
		_ = json.Unmarshal(p, &d)
		return d.URI == uri && len(d.Diagnostics) == 0 && d.Version == nil
	})
	c.shutdownExit()
}

func TestMalformedInput(t *testing.T) {
	c := startBinary(t, "--max-message-bytes", "4096")
	c.initialize("")
	expect := func(what string, code int) {
		t.Helper()
		m := c.waitNullID()
		if m.Error == nil || m.Error.Code != code || string(m.ID) != "null" {
			t.Errorf("%s: got %+v (id %s), want error %d with id null", what, m.Error, m.ID, code)
		}
	}
	alive := func(what string) {
		t.Helper()
		if err := c.ping(); err != nil {
			t.Fatalf("after %s the server does not answer normally: %v", what, err)
		}
	}
	c.writeRaw([]byte("Content-Length: abc\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"shutdown\"}"))
	expect("a non-numeric Content-Length", -32700)
	alive("a bad Content-Length")

	c.writeRaw([]byte("Content-Type: text/plain\r\n\r\n{}"))
	expect("a frame without Content-Length", -32700)
	alive("a missing Content-Length")

	c.writeRaw(frame([]byte(`{"jsonrpc":"2.0","id":1,"method":`)))
	expect("invalid JSON", -32700)
	alive("invalid JSON")

	c.writeRaw(frame([]byte(`{"jsonrpc":"2.0","id":7,"method":"x","params":"` + strings.Repeat("x", 8000) + `"}`)))
	expect("a frame over the size limit", -32700)
	alive("a huge frame")

	c.writeRaw([]byte("Content-Length: 99999999999999\r\n\r\n{}"))
	expect("a Content-Length over 1 GiB", -32700)
	alive("an absurd Content-Length")

	c.writeRaw(frame([]byte(`[{"jsonrpc":"2.0","id":1,"method":"shutdown"}]`)))
	expect("a batch", -32600)
	alive("a batch")

	// An invalid request whose id can be read is answered with that id.
	ch := c.expect(41)
	c.writeRaw(frame([]byte(`{"jsonrpc":"1.0","id":41,"method":"shutdown"}`)))
	if m := c.await(ch, "invalid version"); m.Error == nil || m.Error.Code != -32600 {
		t.Errorf("jsonrpc 1.0 request: %+v, want -32600 with id 41", m.Error)
	}
	_, err := c.call("no/such/method", map[string]any{})
	if err == nil || err.Code != -32601 {
		t.Errorf("unknown method: %v, want -32601", err)
	}
	_, err = c.call("agentcanvas/loadFlow", []int{1, 2})
	if err == nil || err.Code != -32602 {
		t.Errorf("params of the wrong shape: %v, want -32602", err)
	}
	c.notify("no/such/notification", nil)
	alive("unknown methods")
	c.shutdownExit()
	if code := c.waitExit(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

func TestCancelRequest(t *testing.T) {
	c := startBinary(t)
	c.initialize("")
	for _, id := range []any{7, int64(1) << 40, "cancel-me", "42"} {
		ch := c.send(id, "agentcanvas/test/block", nil)
		// Cancel with the id exactly as the request carried it (a JSON number or string).
		c.notify("$/cancelRequest", map[string]any{"id": id})
		m := c.await(ch, fmt.Sprintf("cancelled request %v", id))
		if m.Error == nil || m.Error.Code != int(CodeRequestCancelled) {
			t.Errorf("id %v (%T): got %+v, want error -32800", id, id, m.Error)
		}
		if got, _ := json.Marshal(id); string(m.ID) != string(got) {
			t.Errorf("response id %s, want %s", m.ID, got)
		}
	}
	// Cancelling an id that is not running, or with a malformed id, is harmless.
	c.notify("$/cancelRequest", map[string]any{"id": 12345})
	c.notify("$/cancelRequest", map[string]any{"id": map[string]any{}})
	c.notify("$/cancelRequest", nil)
	if err := c.ping(); err != nil {
		t.Fatalf("server after odd cancellations: %v", err)
	}
	c.shutdownExit()
}

// designMethods are the custom requests DESIGN.md names.
var designMethods = []string{"listPatterns", "loadFlow", "editFlow", "validateFlow", "instantiatePattern",
	"prepareSandbox", "createProposal", "listProposals", "getProposal", "applyProposal", "rejectProposal",
	"startRun", "stopRun", "listRuns", "answerQuestion", "provideDependency", "rejectDependency", "queryLogs"}

// The server ends when the client process named in initialize's processId dies, so a
// crashed editor leaves no sidecar behind.
func TestExitWhenTheClientProcessDies(t *testing.T) {
	client := exec.Command("sleep", "0.5")
	if err := client.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	go client.Wait() // reap it, so it is really gone
	c := startBinary(t)
	c.mustCall("initialize", map[string]any{"processId": client.Process.Pid, "capabilities": map[string]any{}}, nil)
	if code := c.waitExit(); code != 1 {
		t.Errorf("exit code %d after the client died, want 1", code)
	}
	if !strings.Contains(c.stderr.String(), "is gone") {
		t.Errorf("stderr does not say why: %s", c.stderr.String())
	}
}

// A change the server cannot apply is reported (status warning, logMessage) without ending
// the session, and reopening the document repairs it.
func TestBadChangeIsReportedAndRepaired(t *testing.T) {
	root, uri := workspace(t, "team.yaml", goodFlow)
	c := startBinary(t)
	c.initialize(root)
	c.open(uri, goodFlow, 1)
	c.diagnostics(uri, 1)
	c.change(uri, 2, rangeChange(protocol.Range{Start: protocol.Position{Line: 500, Character: 0}, End: protocol.Position{Line: 500, Character: 1}}, "x"))
	c.waitNote("agentcanvas/status", func(p json.RawMessage) bool { return strings.Contains(string(p), `"health":"warning"`) })
	c.waitNote("window/logMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "past the end") })
	c.open(uri, goodFlow, 3)
	c.waitNote("agentcanvas/status", func(p json.RawMessage) bool { return strings.Contains(string(p), `"health":"ok"`) })
	c.diagnostics(uri, 3)
	c.shutdownExit()
}

// The server ends when the process that started it dies, even with its input still open.
func TestExitWhenTheParentDies(t *testing.T) {
	bin := binary(t)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The shell starts the server and waits; the server shares our pipes.
	sh := exec.Command("sh", "-c", `exec 3<&0; "$0" serve <&3 3<&- & wait`, bin)
	var stderr bytes.Buffer
	sh.Stdin, sh.Stdout, sh.Stderr = inR, outW, &lockedWriter{w: &stderr}
	if err := sh.Start(); err != nil {
		t.Skip("no sh:", err)
	}
	inR.Close()
	outW.Close()
	// The server is up when it answers.
	c := newClient(t, outR, inW)
	c.initialize("")
	if err := sh.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	go sh.Wait() // returns once the server has closed the stderr it shares
	// Our stdin pipe is still open; the server must notice its parent is gone and exit,
	// which closes the last writer of its stdout.
	select {
	case <-c.readDone:
	case <-time.After(deadline):
		t.Fatalf("the server outlived its parent; stderr:\n%s", stderr.String())
	}
}

// didSave validates again (workspace rules read the disk, which a save changes).
func TestDidSaveRevalidates(t *testing.T) {
	root, uri := workspace(t, "team.yaml", goodFlow)
	c := startBinary(t)
	c.initialize(root)
	c.open(uri, goodFlow, 1)
	c.diagnostics(uri, 1)
	c.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
	c.diagnostics(uri, 1) // published again for the same version
	c.shutdownExit()
}
