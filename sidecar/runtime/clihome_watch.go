package runtime

import (
	"crypto/sha256"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/safefile"
)

// What an agent wrote in its private CLI home that its CLI runs or reads as instructions
// (hooks and MCP servers in settings, notify programs, instruction files) affects its own later
// turns in the run. The review must show it: each turn that changed one of these files ends
// with a warning naming them.

// homeWatched are, per backend, the files of its private home that hold such things (not
// Claude Code's plugins/: it writes its plugin store there itself; plugins are enabled in
// settings.json).
var homeWatched = map[string][]string{
	BackendClaude: {"settings.json", "settings.local.json", "CLAUDE.md", "agents", "commands", "hooks"},
	BackendCodex:  {"config.toml", "AGENTS.md", "AGENTS.override.md", "prompts"},
	BackendGemini: {".gemini/settings.json", ".gemini/GEMINI.md", ".gemini/commands", ".gemini/extensions"},
}

// homeSnapshot is the content digest of each watched file (a folder: of every regular file
// in it), by path relative to the home. The files are the agent's: read through safefile,
// and each digest covers at most maxHomeFile bytes and the size (a file of a terabyte is not
// read through; a FIFO or a link is not a file and is not opened).
func (c *confinement) homeSnapshot() map[string]string {
	if c == nil || c.agent.Home == "" {
		return nil
	}
	home, err := safefile.Open(c.agent.Home)
	if err != nil {
		return nil
	}
	defer home.Close()
	snap := map[string]string{}
	for _, rel := range homeWatched[c.agent.Backend] {
		_ = home.Walk(rel, func(name string) error {
			f, st, err := home.OpenFile(name)
			if err != nil {
				return nil
			}
			defer f.Close()
			h := sha256.New()
			fmt.Fprintf(h, "%d\n", st.Size())
			if _, err := io.Copy(h, io.LimitReader(f, maxHomeFile)); err == nil {
				snap[filepath.FromSlash(name)] = fmt.Sprintf("%x", h.Sum(nil))
			}
			return nil
		})
	}
	return snap
}

// homeChanges says which watched files differ between two snapshots ("" when none).
func (c *confinement) homeChanges(before, after map[string]string) string {
	if c == nil {
		return ""
	}
	var changed []string
	for rel, h := range after {
		if before[rel] != h {
			changed = append(changed, rel)
		}
	}
	for rel := range before {
		if _, ok := after[rel]; !ok {
			changed = append(changed, rel+" (removed)")
		}
	}
	if len(changed) == 0 {
		return ""
	}
	sort.Strings(changed)
	return fmt.Sprintf("the agent changed its private %s home (%s): %s. Hooks, MCP servers, programs and instructions there affect its own later turns in this run, never your own runs of %s",
		c.agent.Backend, c.agent.Home, strings.Join(changed, ", "), c.agent.Backend)
}
