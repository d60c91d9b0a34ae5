package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	lspuri "go.lsp.dev/uri"
)

// TestProtocolClient reads the server's answers as a Go client built on go.lsp.dev/protocol
// would: the initialize result, a publishDiagnostics, a code action, a hover and a completion
// list decode into protocol's types, hold what the server means, and encode back to the same
// JSON (nothing the server sent is lost on the way through protocol's types).
func TestProtocolClient(t *testing.T) {
	root, uri := workspace(t, "fix.yaml", fixableFlow)
	c, _ := startInProcess(t, Options{Version: "1.2.3"})
	roundTrip := func(name string, raw json.RawMessage, v any) {
		t.Helper()
		if err := protocol.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s does not decode with protocol's types: %v\n%s", name, err, raw)
		}
		back, err := protocol.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := canonicalWire(t, back, root), canonicalWire(t, raw, root); !bytes.Equal(got, want) {
			t.Errorf("%s changed on the way through protocol's types:\n--- got\n%s--- sent\n%s", name, got, want)
		}
	}

	res, rerr := c.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": pathURI(root), "capabilities": map[string]any{}})
	if rerr != nil {
		t.Fatal(rerr)
	}
	var ir protocol.InitializeResult
	roundTrip("the initialize result", res, &ir)
	caps := ir.Capabilities
	sync, ok := caps.TextDocumentSync.(*protocol.TextDocumentSyncOptions)
	if !ok || sync.OpenClose == nil || !*sync.OpenClose || sync.Change == nil || *sync.Change != protocol.TextDocumentSyncKindIncremental {
		t.Errorf("textDocumentSync %#v, want open/close and incremental changes", caps.TextDocumentSync)
	}
	if caps.PositionEncoding != protocol.PositionEncodingKindUTF16 || caps.HoverProvider != protocol.Boolean(true) {
		t.Errorf("positionEncoding %q, hoverProvider %#v", caps.PositionEncoding, caps.HoverProvider)
	}
	if ca, ok := caps.CodeActionProvider.(*protocol.CodeActionOptions); !ok || !slices.Equal(ca.CodeActionKinds, []protocol.CodeActionKind{protocol.CodeActionKindQuickFix}) {
		t.Errorf("codeActionProvider %#v", caps.CodeActionProvider)
	}
	if caps.CompletionProvider == nil || !slices.Contains(caps.CompletionProvider.TriggerCharacters, ":") {
		t.Errorf("completionProvider %#v", caps.CompletionProvider)
	}
	var exp agentCanvasCapabilities
	if err := json.Unmarshal(caps.Experimental, &exp); err != nil || !slices.Contains(exp.AgentCanvas.Methods, "agentcanvas/loadFlow") {
		t.Errorf("experimental %s: %v", caps.Experimental, err)
	}
	if v, _ := ir.ServerInfo.Version.Get(); ir.ServerInfo.Name != "agentcanvas" || v != "1.2.3" {
		t.Errorf("serverInfo %+v", ir.ServerInfo)
	}
	c.notify("initialized", map[string]any{})

	c.open(uri, fixableFlow, 1)
	var pd protocol.PublishDiagnosticsParams
	roundTrip("publishDiagnostics", c.waitNote("textDocument/publishDiagnostics", nil), &pd)
	if v, _ := pd.Version.Get(); string(pd.URI) != uri || v != 1 || len(pd.Diagnostics) == 0 {
		t.Fatalf("publishDiagnostics for %s version %d with %d diagnostics", pd.URI, v, len(pd.Diagnostics))
	}
	var fixable *protocol.Diagnostic
	for i, d := range pd.Diagnostics {
		src, _ := d.Source.Get()
		_, isCode := d.Code.(protocol.String)
		_, isMessage := d.Message.(protocol.String)
		if src != "agentcanvas" || !isCode || !isMessage || d.Severity < protocol.DiagnosticSeverityError || d.Severity > protocol.DiagnosticSeverityHint {
			t.Errorf("diagnostic %d: source %q, code %#v, message %#v, severity %d", i, src, d.Code, d.Message, d.Severity)
		}
		var data diagData
		if len(d.Data) > 0 && json.Unmarshal(d.Data, &data) == nil && data.Fix != "" && fixable == nil {
			fixable = &pd.Diagnostics[i]
		}
	}
	if fixable == nil {
		t.Fatal("no diagnostic with a quick fix in fixableFlow")
	}

	res, rerr = c.call("textDocument/codeAction", lspParams(t, &protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: pd.URI}, Range: fixable.Range,
		Context: protocol.CodeActionContext{Diagnostics: []protocol.Diagnostic{*fixable}}}))
	if rerr != nil {
		t.Fatal(rerr)
	}
	var actions []protocol.CodeAction
	roundTrip("the code actions", res, &actions)
	if len(actions) == 0 || actions[0].Edit == nil || len(actions[0].Edit.DocumentChanges) != 1 {
		t.Fatalf("code actions %s", res)
	}
	edit, ok := actions[0].Edit.DocumentChanges[0].(*protocol.TextDocumentEdit)
	if !ok || edit.TextDocument.Version == nil || *edit.TextDocument.Version != 1 || edit.TextDocument.URI != pd.URI || len(edit.Edits) == 0 {
		t.Fatalf("code action edit %#v", actions[0].Edit.DocumentChanges[0])
	}
	if _, ok := edit.Edits[0].(*protocol.TextEdit); !ok {
		t.Errorf("edit %#v, want a TextEdit", edit.Edits[0])
	}

	hoverPath := filepath.Join(root, "flows", "hc.yaml")
	if err := os.WriteFile(hoverPath, []byte(hoverFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	c.open(pathURI(hoverPath), hoverFlow, 1)
	at := protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: lspuri.URI(pathURI(hoverPath))}, Position: pos(3, 14)}
	res, rerr = c.call("textDocument/hover", lspParams(t, &protocol.HoverParams{TextDocumentPositionParams: at}))
	if rerr != nil {
		t.Fatal(rerr)
	}
	var h protocol.Hover
	roundTrip("the hover", res, &h)
	if mc, ok := h.Contents.(*protocol.MarkupContent); !ok || mc.Kind != protocol.MarkupKindMarkdown || mc.Value == "" || h.Range == nil {
		t.Errorf("hover %s", res)
	}
	at.Position = pos(8, 17)
	res, rerr = c.call("textDocument/completion", lspParams(t, &protocol.CompletionParams{TextDocumentPositionParams: at}))
	if rerr != nil {
		t.Fatal(rerr)
	}
	var cl protocol.CompletionList
	roundTrip("the completion list", res, &cl)
	if len(cl.Items) == 0 || cl.Items[0].Kind != protocol.CompletionItemKindEnumMember {
		t.Errorf("completion %s", res)
	}
	c.shutdownExit()
}

// lspParams is v written with protocol's codec, for the test client's encoding/json.
func lspParams(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := protocol.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A document URI is read in vscode-uri's canonical form (go.lsp.dev/protocol parses every
// URI): a client that spells a path with a '+' (as net/url does) gets its diagnostics under
// the canonical "%2B" spelling, which VS Code itself sends, and an agentcanvas/* request that
// names the document the client's way still finds the open document.
func TestDocumentURIsAreCanonical(t *testing.T) {
	root := filepath.Join(t.TempDir(), "team+ops")
	if err := os.MkdirAll(filepath.Join(root, "flows"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "flows", "x.yaml")
	if err := os.WriteFile(path, []byte(goodFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	spelled := pathURI(path) // file:///…/team+ops/flows/x.yaml
	canonical, err := lspuri.Parse(spelled)
	if err != nil || string(canonical) == spelled {
		t.Fatalf("canonical form of %s: %s, %v", spelled, canonical, err)
	}
	c, _ := startInProcess(t, Options{})
	c.initialize(root)
	c.open(spelled, strings.Replace(goodFlow, "role: worker", "role: reviewer", 1), 1)
	c.diagnostics(string(canonical), 1)
	var lf struct {
		Version *int32         `json:"version"`
		Flow    map[string]any `json:"flow"`
	}
	c.mustCall("agentcanvas/loadFlow", map[string]any{"uri": spelled}, &lf)
	if lf.Version == nil || *lf.Version != 1 || lf.Flow["agents"].([]any)[1].(map[string]any)["role"] != "reviewer" {
		t.Errorf("loadFlow by the client's spelling read version %v: %v", lf.Version, lf.Flow["agents"])
	}
	c.shutdownExit()
}

// A request's workDoneToken is LSP's ProgressToken: a string or a 32-bit integer is used as
// is; another token is refused with a warning, and the request still runs.
func TestWorkDoneTokens(t *testing.T) {
	root, _ := workspace(t, "x.yaml", goodFlow)
	c, _ := startInProcess(t, Options{})
	c.initialize(root)
	for i, tok := range []any{7, "mine", int64(1) << 40, map[string]any{"a": 1}} {
		raw, _ := json.Marshal(tok)
		c.mustCall("agentcanvas/prepareSandbox", map[string]any{"runId": "r1", "agentId": fmt.Sprintf("w%d", i), "files": []string{"flows/x.yaml"}, "workDoneToken": tok}, nil)
		if i < 2 {
			c.waitNote("$/progress", func(p json.RawMessage) bool {
				return bytes.Contains(p, []byte(`"token":`+string(raw)+`,`)) && bytes.Contains(p, []byte(`"kind":"end"`))
			})
			continue
		}
		c.waitNote("window/logMessage", func(p json.RawMessage) bool {
			return bytes.Contains(p, []byte("is neither a string nor a 32-bit integer"))
		})
	}
	c.mu.Lock()
	for _, m := range c.log {
		if m.Method == "$/progress" && (bytes.Contains(m.Params, []byte("1099511627776")) || bytes.Contains(m.Params, []byte(`"a":1`))) {
			t.Errorf("progress reported with an unusable token: %s", m.Params)
		}
	}
	c.mu.Unlock()
	c.shutdownExit()
}

// didChange's content changes are read strictly (decodeDidChange): a malformed range is
// refused, naming the field, and leaves the document as it was (go.lsp.dev/protocol alone would
// take the change for a whole new text); a null range replaces the document (protocol alone
// would insert the text at the start).
func TestContentChangesAreReadStrictly(t *testing.T) {
	root, uri := workspace(t, "x.yaml", goodFlow)
	c, _ := startInProcess(t, Options{})
	c.initialize(root)
	c.open(uri, goodFlow, 1)
	loadRole := func(want int32) any {
		t.Helper()
		var lf struct {
			Version *int32         `json:"version"`
			Flow    map[string]any `json:"flow"`
		}
		c.mustCall("agentcanvas/loadFlow", map[string]any{"uri": uri}, &lf)
		if lf.Version == nil || *lf.Version != want {
			t.Fatalf("loadFlow: version %v, want %d", lf.Version, want)
		}
		agents, _ := lf.Flow["agents"].([]any)
		if len(agents) != 2 {
			t.Fatalf("loadFlow: agents %v", lf.Flow["agents"])
		}
		return agents[1].(map[string]any)["role"]
	}
	change := func(version int, change string) {
		c.notify("textDocument/didChange", json.RawMessage(fmt.Sprintf(`{"textDocument":{"uri":%q,"version":%d},"contentChanges":[%s]}`, uri, version, change)))
	}
	change(2, `{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":"x"}},"text":"a"}`)
	c.waitNote("window/logMessage", func(p json.RawMessage) bool {
		return bytes.Contains(p, []byte("/contentChanges/0/range/end/character"))
	})
	c.waitNote("agentcanvas/status", func(p json.RawMessage) bool { return bytes.Contains(p, []byte("out of date; reopen")) })
	if role := loadRole(1); role != "worker" {
		t.Errorf("after a refused change the role is %v", role)
	}
	text, _ := json.Marshal(strings.Replace(goodFlow, "role: worker", "role: reviewer", 1))
	change(2, `{"range":null,"text":`+string(text)+`}`)
	if role := loadRole(2); role != "reviewer" {
		t.Errorf("after a whole-text change with a null range the role is %v", role)
	}
	c.shutdownExit()
}

// A client capability that protocol's types cannot hold does not refuse the session: the
// server goes on without the client's capabilities and says which field it could not read. A
// malformed field elsewhere is still refused.
func TestInitializeWithAnUndecodableCapability(t *testing.T) {
	c, _ := startInProcess(t, Options{})
	res, rerr := c.call("initialize", map[string]any{"processId": os.Getpid(), "capabilities": map[string]any{
		"window":       map[string]any{"workDoneProgress": true},
		"textDocument": map[string]any{"completion": map[string]any{"completionItem": map[string]any{"snippetSupport": "yes"}}}}})
	if rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	var ir protocol.InitializeResult
	if err := protocol.Unmarshal(res, &ir); err != nil || ir.ServerInfo.Name != "agentcanvas" {
		t.Fatalf("initialize result %s: %v", res, err)
	}
	c.waitNote("window/logMessage", func(p json.RawMessage) bool {
		return bytes.Contains(p, []byte("/capabilities/textDocument/completion/completionItem/snippetSupport"))
	})
	c.shutdownExit()

	c, _ = startInProcess(t, Options{})
	if _, rerr := c.call("initialize", map[string]any{"processId": "me", "capabilities": map[string]any{}}); rerr == nil || rerr.Code != -32602 || !strings.Contains(rerr.Message, "/processId") {
		t.Errorf("initialize with a malformed processId: %v, want -32602 naming /processId", rerr)
	}
}

// The client capabilities vscode-languageclient 11.0.0 (the extension's client) sends, as its
// computeClientCapabilities() builds them, decode with protocol's types: initialize keeps them
// (no warning) and sees the client's work-done progress support.
func TestInitializeWithVSCodeCapabilities(t *testing.T) {
	caps, err := os.ReadFile("testdata/vscode-languageclient-11.0.0-capabilities.json")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := workspace(t, "x.yaml", goodFlow)
	c, _ := startInProcess(t, Options{})
	c.mustCall("initialize", map[string]any{"processId": os.Getpid(), "clientInfo": map[string]any{"name": "Visual Studio Code", "version": "1.99.0"},
		"locale": "en", "rootPath": root, "rootUri": pathURI(root), "trace": "off",
		"workspaceFolders": []any{map[string]any{"uri": pathURI(root), "name": "ws"}},
		"capabilities":     json.RawMessage(caps), "initializationOptions": map[string]any{"diagnosticsDelayMs": 5}}, nil)
	c.notify("initialized", map[string]any{})
	c.mu.Lock()
	for _, m := range c.log { // a warning would have come before the answer
		if bytes.Contains(m.Params, []byte("capabilities do not decode")) {
			t.Errorf("%s", m.Params)
		}
	}
	c.mu.Unlock()
	c.mustCall("agentcanvas/prepareSandbox", map[string]any{"runId": "r1", "agentId": "w1", "files": []string{"flows/x.yaml"}}, nil)
	c.mu.Lock()
	asked := slices.ContainsFunc(c.serverCalls, func(m *wireMsg) bool { return m.Method == "window/workDoneProgress/create" })
	c.mu.Unlock()
	if !asked {
		t.Error("no window/workDoneProgress/create: the client's window.workDoneProgress was lost")
	}
	c.shutdownExit()
}
