// Package patterns holds the 20 interaction-pattern templates (P01…P20), each a
// <id>-<patternId>.md document and a .json template, and embeds them into the binary.
// The Go file lives here because go:embed only reaches files in or below its own
// directory; the library that parses and instantiates them is sidecar/pattern.
package patterns

import (
	"embed"
	"io/fs"
)

//go:embed *.md *.json
var files embed.FS

// FS returns the embedded pattern files (flat: "P05-debate_judge.md", "P05-debate_judge.json", …).
func FS() fs.FS { return files }
