package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
)

func frames(msgs ...string) []byte {
	var b bytes.Buffer
	for _, m := range msgs {
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(m), m)
	}
	return b.Bytes()
}

// FuzzServe feeds arbitrary bytes, after a valid initialize, to a server: framing, decoding
// and dispatch of every method must never panic, never report a bug, and end when the
// input ends.
func FuzzServe(f *testing.F) {
	uri := `"file:///w/flows/f.yaml"`
	f.Add(frames(`{"jsonrpc":"2.0","method":"initialized","params":{}}`,
		`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":`+uri+`,"version":1,"text":"agents:\n  - id: a1\n    runtime:\n      backendId: \n"}}}`,
		`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":`+uri+`,"version":2},"contentChanges":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":6}},"text":"agnets"}]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"textDocument/completion","params":{"textDocument":{"uri":`+uri+`},"position":{"line":3,"character":17}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":`+uri+`},"position":{"line":1,"character":5}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"textDocument/codeAction","params":{"textDocument":{"uri":`+uri+`},"range":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"agentcanvas/loadFlow","params":{"uri":`+uri+`}}`,
		`{"jsonrpc":"2.0","id":6,"method":"agentcanvas/editFlow","params":{"uri":`+uri+`,"version":2,"ops":[{"op":"moveNode","id":"a1","position":{"x":1,"y":2}}]}}`,
		`{"jsonrpc":"2.0","id":"c","method":"agentcanvas/test/block"}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"c"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"shutdown"}`,
		`{"jsonrpc":"2.0","method":"exit"}`))
	f.Add([]byte("Content-Length: abc\r\n\r\n{}Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 99999999999999999999\r\n\r\n"))
	f.Add(frames(`[]`, `[1]`, `{"jsonrpc":"2.0","id":{},"method":"x"}`, `{"jsonrpc":"2.0","id":1,"result":1}`, `nul`))
	f.Add(frames(`{"jsonrpc":"2.0","id":1,"method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///x","version":-1},"contentChanges":[{"range":{"start":{"line":4294967295,"character":4294967295},"end":{"line":0,"character":0}},"text":""}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		bugMu.Lock()
		before := len(bugSeen)
		bugMu.Unlock()
		in := append(frames(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`), data...)
		s := New(Options{Log: io.Discard, TestHooks: true, MaxFrame: 1 << 16})
		var out bytes.Buffer
		s.Run(context.Background(), io.NopCloser(bytes.NewReader(in)), &lockedWriter{w: &out})
		bugMu.Lock()
		after := bugSeen[before:]
		bugMu.Unlock()
		if len(after) > 0 {
			t.Fatalf("bug reported: %v", after)
		}
		// Everything written is well-framed JSON-RPC.
		r := bytes.NewReader(out.Bytes())
		br := newFrameReader(r)
		for {
			body, err := br()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("server output is not framed: %v", err)
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Fatalf("server wrote %q", body)
			}
		}
	})
}
