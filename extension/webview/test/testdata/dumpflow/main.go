// Command dumpflow writes what the sidecar's loader makes of flow YAML fixtures, as the JSON of
// agentcanvas/loadFlow ({flow, diagnostics}), next to each fixture: the canvas tests read the
// real model shape, not a hand-written imitation of it. It lives under testdata so `go ./...`
// leaves it alone; regenerate after a change to the flow model with
//
//	go run ./extension/webview/test/testdata/dumpflow extension/webview/test/testdata/*.yaml
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/validate"
)

func main() {
	for _, file := range os.Args[1:] {
		src, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		name := filepath.Base(file)
		f := flow.Parse(name, src)
		out := map[string]any{"flow": f, "diagnostics": validate.Flow(f, validate.Workspace{})}
		b, err := json.MarshalIndent(out, "", " ")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		dst := strings.TrimSuffix(file, filepath.Ext(file)) + ".json"
		if err := os.WriteFile(dst, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
