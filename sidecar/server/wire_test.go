package server

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/golden"
)

// TestWireFormat records the JSON of every standard LSP message the server sends (the
// initialize result, diagnostics, hover, completion, code actions, window messages, work-done
// progress) under testdata/wire/. The files were recorded before the server's LSP types moved
// to go.lsp.dev/protocol, so a field that changes from absent to null, or disappears, fails
// here: the extension (vscode-languageclient) and other editors read these messages. Each
// message is compared as JSON values (keys sorted), not byte for byte.
func TestWireFormat(t *testing.T) {
	root, uri := workspace(t, "fix.yaml", fixableFlow)
	hoverPath := filepath.Join(root, "flows", "hc.yaml")
	if err := os.WriteFile(hoverPath, []byte(hoverFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	hoverURI := pathURI(hoverPath)
	c, _ := startInProcess(t, Options{Version: "test"})
	check := func(name string, raw json.RawMessage) {
		t.Helper()
		golden.Check(t, "wire/"+name+".json", canonicalWire(t, raw, root))
	}

	res, rerr := c.call("initialize", map[string]any{
		"processId":             os.Getpid(),
		"rootUri":               pathURI(root),
		"workspaceFolders":      []any{map[string]any{"uri": pathURI(root), "name": "ws"}},
		"capabilities":          map[string]any{"window": map[string]any{"workDoneProgress": true}},
		"initializationOptions": map[string]any{"diagnosticsDelayMs": 5},
	})
	if rerr != nil {
		t.Fatal(rerr)
	}
	check("initialize-result", res)
	c.notify("initialized", map[string]any{})

	c.open(uri, fixableFlow, 1)
	diags := c.waitNote("textDocument/publishDiagnostics", func(p json.RawMessage) bool { return bytes.Contains(p, []byte(`"version":1`)) })
	check("publish-diagnostics", diags)

	var pd struct {
		Diagnostics []struct {
			Range json.RawMessage
			Data  *struct{ Fix string }
		}
	}
	if err := json.Unmarshal(diags, &pd); err != nil {
		t.Fatal(err)
	}
	var fixRange json.RawMessage
	for _, d := range pd.Diagnostics {
		if d.Data != nil && d.Data.Fix != "" {
			fixRange = d.Range
			break
		}
	}
	if fixRange == nil {
		t.Fatal("no fixable diagnostic in fixableFlow")
	}
	res, rerr = c.call("textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "range": fixRange,
		"context": map[string]any{"diagnostics": []any{}, "only": []string{"quickfix"}}})
	if rerr != nil {
		t.Fatal(rerr)
	}
	check("code-action", res)
	// LSP diagnostics inside a custom result.
	res, rerr = c.call("agentcanvas/validateFlow", map[string]any{"uri": uri})
	if rerr != nil {
		t.Fatal(rerr)
	}
	check("validate-flow", res)

	c.open(hoverURI, hoverFlow, 1)
	at := func(line, char int) map[string]any {
		return map[string]any{"textDocument": map[string]any{"uri": hoverURI}, "position": map[string]any{"line": line, "character": char}}
	}
	for name, req := range map[string]struct {
		method string
		params map[string]any
	}{
		"hover-name":        {"textDocument/hover", at(3, 14)}, // "Planner — 계획": UTF-16 columns
		"hover-none":        {"textDocument/hover", at(0, 0)},
		"completion-values": {"textDocument/completion", at(8, 17)},
		"completion-fields": {"textDocument/completion", at(9, 0)},
	} {
		res, rerr := c.call(req.method, req.params)
		if rerr != nil {
			t.Fatalf("%s: %v", name, rerr)
		}
		check(name, res)
	}

	c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	// The closed document's own notification: hc.yaml's (opened above, clean) may come later.
	check("publish-diagnostics-closed", c.waitNote("textDocument/publishDiagnostics", func(p json.RawMessage) bool {
		return bytes.Contains(p, []byte(`"diagnostics":[]`)) && bytes.Contains(p, []byte(`/fix.yaml"`))
	}))

	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"agentcanvas": map[string]any{"autoApply": "sometimes", "blockedFolders": []string{"private"}}}})
	check("show-message", c.waitNote("window/showMessage", nil))
	check("log-message", c.waitNote("window/logMessage", func(p json.RawMessage) bool { return bytes.Contains(p, []byte("settings: ")) }))

	c.mustCall("agentcanvas/prepareSandbox", map[string]any{"runId": "r1", "agentId": "w1", "files": []string{"flows/fix.yaml"}}, nil)
	c.mu.Lock()
	var create json.RawMessage
	for _, m := range c.serverCalls {
		if m.Method == "window/workDoneProgress/create" {
			create = m.Params
		}
	}
	c.mu.Unlock()
	check("progress-create", create)
	for _, kind := range []string{"begin", "report", "end"} {
		check("progress-"+kind, c.waitNote("$/progress", func(p json.RawMessage) bool { return bytes.Contains(p, []byte(`"kind":"`+kind+`"`)) }))
	}
	c.shutdownExit()
}

// canonicalWire is raw with its keys sorted and indented, the workspace folder written ROOT.
func canonicalWire(t *testing.T, raw json.RawMessage, root string) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(out), strings.TrimPrefix(pathURI(root), "file://"), "ROOT")
	return []byte(strings.ReplaceAll(s, root, "ROOT") + "\n")
}
