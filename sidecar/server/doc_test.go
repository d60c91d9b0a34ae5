package server

import (
	"os"
	"strings"
	"testing"
)

// Every method and notification is documented in docs/protocol.md with a heading and at
// least one example.
func TestProtocolDocCoversEveryMethod(t *testing.T) {
	doc, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	sent := []string{"textDocument/publishDiagnostics", "agentcanvas/status", "agentcanvas/flowChanged",
		"agentcanvas/proposalChanged", "agentcanvas/runEvent", "$/progress", "window/logMessage", "$/cancelRequest"}
	for _, m := range append(MethodNames(), sent...) {
		i := strings.Index(string(doc), "### `"+m+"`")
		if i < 0 {
			t.Errorf("docs/protocol.md has no section for %s", m)
			continue
		}
		rest := string(doc[i:])
		if j := strings.Index(rest[4:], "\n### "); j >= 0 {
			rest = rest[:j+4]
		}
		if !strings.Contains(rest, "```json") {
			t.Errorf("docs/protocol.md: %s has no example", m)
		}
	}
}
