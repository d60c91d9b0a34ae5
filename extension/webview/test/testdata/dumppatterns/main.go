// Command dumppatterns writes the sidecar's real answer to agentcanvas/listPatterns (the 20
// patterns with their default termination, default params and docs) to a file, for the canvas
// tests: they draw edges with what the sidecar says, not with a hand-written imitation. It asks
// an in-process server over JSON-RPC, as the extension does. Regenerate after a change to the
// pattern library with
//
//	go run ./extension/webview/test/testdata/dumppatterns extension/webview/test/testdata/patterns.json
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/server"
)

func main() {
	if len(os.Args) != 2 {
		fail(fmt.Errorf("usage: dumppatterns OUT.json"))
	}
	toServer, fromClient := io.Pipe()
	fromServer, toClient := io.Pipe()
	go server.New(server.Options{Log: io.Discard}).Run(context.Background(), toServer, toClient)
	in := bufio.NewReader(fromServer)
	call := func(id int, method string, params any) json.RawMessage {
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err != nil {
			fail(err)
		}
		if _, err := fmt.Fprintf(fromClient, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			fail(err)
		}
		for {
			var msg struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(readFrame(in), &msg); err != nil {
				fail(err)
			}
			if msg.ID == nil || *msg.ID != id {
				continue // a notification (status) or another answer
			}
			if msg.Error != nil {
				fail(fmt.Errorf("%s: %s", method, msg.Error))
			}
			return msg.Result
		}
	}
	call(1, "initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}})
	var out bytes.Buffer
	if err := json.Indent(&out, call(2, "agentcanvas/listPatterns", nil), "", " "); err != nil {
		fail(err)
	}
	out.WriteByte('\n')
	if err := os.WriteFile(os.Args[1], out.Bytes(), 0o644); err != nil {
		fail(err)
	}
}

// readFrame reads one Content-Length framed message.
func readFrame(r *bufio.Reader) []byte {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			fail(err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			if n, err = strconv.Atoi(v); err != nil {
				fail(err)
			}
		}
	}
	if n < 0 {
		fail(fmt.Errorf("a frame without Content-Length"))
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		fail(err)
	}
	return b
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dumppatterns:", err)
	os.Exit(1)
}
