package runtime

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// homeSnapshot is the content digest of each watched file (a folder: of every file in it),
// by path relative to the home.
func (c *confinement) homeSnapshot() map[string]string {
	if c == nil || c.agent.Home == "" {
		return nil
	}
	snap := map[string]string{}
	for _, rel := range homeWatched[c.agent.Backend] {
		_ = filepath.WalkDir(filepath.Join(c.agent.Home, rel), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			r, _ := filepath.Rel(c.agent.Home, p)
			snap[r] = fmt.Sprintf("%x", sha256.Sum256(b))
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
