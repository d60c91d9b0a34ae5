package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// encoderAllowed are the files that may make a JSON encoder of their own, and why.
var encoderAllowed = map[string]string{
	"jsonout.go": "jsonOut itself: every stream of JSON a command prints",
	"cmd_mcp.go": "the MCP server's JSON-RPC on stdio, read by the client program, never a terminal",
}

// A stream of JSON a command prints goes through jsonOut (termsafe.JSONWriter): an encoder
// of its own would print an agent's C1 controls and bidi characters raw (run --json did).
func TestJSONStreamsGoThroughJSONOut(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || encoderAllowed[name] != "" {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewEncoder" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "json" {
					t.Errorf("%s makes a JSON encoder of its own: print JSON through jsonOut (or printJSON)", name)
				}
			}
			return true
		})
	}
}
