package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MemoryDir holds the workspace's memory files (spec §7.1): MEMORY.md for durable decisions
// and preferences, <YYYY-MM-DD>.md for daily run notes.
const MemoryDir = ".agentcanvas/memory"

// writeMemory appends the run's outcome to today's notes (and creates MEMORY.md once, so
// curators and people have a place for durable rules).
func writeMemory(r *run, out *Outcome) error {
	root, err := os.OpenRoot(r.o.Workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(MemoryDir, 0o755); err != nil {
		return err
	}
	mem := filepath.Join(MemoryDir, "MEMORY.md")
	if _, err := root.Stat(mem); os.IsNotExist(err) {
		if err := root.WriteFile(mem, []byte("# Memory\n\nDurable decisions and preferences for this workspace's agents. Agents of a memory_sync interaction and people add to it; every agent's prompt carries it.\n"), 0o644); err != nil {
			return err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## %s %s — %s\n\n", r.now().UTC().Format("15:04:05Z"), r.f.Name, out.Status)
	fmt.Fprintf(&b, "- run `%s`%s\n", r.id, map[bool]string{true: " (dry run)", false: ""}[r.o.DryRun])
	for _, in := range out.Interactions {
		fmt.Fprintf(&b, "- %s `%s`: %s after %d round(s)", in.ID, in.PatternID, firstNonEmpty(in.Reason, in.Status), in.Rounds)
		if in.Result != "" {
			fmt.Fprintf(&b, " — %s", truncate(firstLine(in.Result), 160))
		}
		b.WriteString("\n")
	}
	for _, p := range out.Proposals {
		fmt.Fprintf(&b, "- proposal waiting for review: `%s`\n", p)
	}
	day := filepath.Join(MemoryDir, r.now().UTC().Format("2006-01-02")+".md")
	f, err := root.OpenFile(day, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(b.String())
	return err
}

// appendMemory adds curated lines to MEMORY.md (P19).
func appendMemory(workspace string, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(MemoryDir, 0o755); err != nil {
		return err
	}
	f, err := root.OpenFile(filepath.Join(MemoryDir, "MEMORY.md"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
	return err
}
