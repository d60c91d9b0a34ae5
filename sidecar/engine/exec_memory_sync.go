// P19 memory_sync, and the memory notes other executors append to.

package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
)

// P19 — the curator merges the members' logs into the shared memory: each member's notes
// from this run's step events (a member with none is asked for its log), plus MEMORY.md.
// The reply's ## MEMORY lines not yet in MEMORY.md are appended to it (what a person wrote
// there stays), its ## NOTES go to today's notes, and dated notes older than keep_last_days
// are deleted.
func memorySync(c *ictx) (string, error) {
	// Members are who reports to the curator; the memory store is the engine's.
	curator, members := c.cast.one("curator"), c.cast.all("member")
	store := ""
	if mem := c.cast.all("memory"); len(mem) > 0 {
		store = mem[len(mem)-1]
	}
	if curator == "" {
		return "", fmt.Errorf("memory_sync needs a curator")
	}
	notes := c.stepNotes()
	var silent []string
	for _, m := range members {
		if len(notes[m]) == 0 {
			silent = append(silent, m)
		}
	}
	if len(silent) > 0 {
		logs, err := c.askAll("", silent, func(a string) string {
			return c.prompt(a, message{Intent: "Summarise what you learned and decided this session", Plan: []string{"Only durable facts"}, Actions: []string{"Up to 5 bullet points"}})
		}, needText)
		if err != nil {
			return "", err
		}
		for _, l := range logs {
			notes[l.Node] = append(notes[l.Node], truncate(l.Text, 2000))
		}
	}
	var in []string
	for _, m := range members {
		in = append(in, quote("Log of "+m, strings.Join(notes[m], "\n")))
		c.send(m, curator, "private_log", map[string]any{"notes": len(notes[m])}, "")
		if c.board != nil {
			c.board.Post(m, "private_log", truncate(strings.Join(notes[m], "\n"), 2000))
		}
	}
	in = append(in, quote("Current MEMORY.md", firstNonEmpty(c.r.files.memory(), "(empty)")))
	s, err := c.ask("", curator, c.prompt(curator, message{Intent: "Merge the members' logs into the shared memory", Inputs: in, Plan: []string{"Deduplicate", "Keep durable decisions"}, Actions: []string{"## MEMORY (durable decisions to add to MEMORY.md; what it already says is kept, do not repeat it)", "## NOTES (today's notes)"}}),
		need{line: "## MEMORY or ## NOTES (a section heading, then its lines)", has: func(t string) bool {
			return mdSection(t, "MEMORY", "NOTES") != "" || mdSection(t, "NOTES", "MEMORY") != ""
		}})
	if err != nil {
		return "", err
	}
	mem, dayNotes := mdSection(s.Text, "MEMORY", "NOTES"), mdSection(s.Text, "NOTES", "MEMORY")
	removed, err := writeCurated(c.r, mem, dayNotes, c.retentionDays())
	if err != nil {
		return "", err
	}
	if store != "" {
		c.send(curator, store, "memory_update", map[string]any{}, "")
	}
	c.note("memory_updated", map[string]any{"by": curator, "memory": mem != "", "notes": dayNotes != "", "deleted": removed})
	c.endRound()
	return firstNonEmpty(dayNotes, mem), nil
}

func (c *ictx) retentionDays() int {
	if r := c.retention(); r != nil {
		return r.KeepLastDays
	}
	return 0
}

// stepNotes collects the note of every step each node took in this run, from the log.
func (c *ictx) stepNotes() map[string][]string {
	out := map[string][]string{}
	c.r.flushLog()
	evs, err := eventlog.ReadAll(c.r.o.Workspace, c.r.f.Name)
	if err != nil && !eventlog.Skipped(err) {
		return out
	}
	for _, e := range evs {
		if e.RunID != c.r.id || e.Event != "step" || e.InteractionID == c.in.ID {
			continue
		}
		// Read back from the log, fields are raw JSON: eventlog.Str decodes them.
		to := eventlog.Str(e.Fields["to"])
		if n := eventlog.Str(e.Fields["note"]); to != "" && n != "" && len(out[to]) < 20 {
			out[to] = append(out[to], "- "+n)
		}
	}
	return out
}

// writeCurated appends the curated memory's new lines to MEMORY.md, appends today's notes, and
// deletes dated notes older than keepDays.
func writeCurated(r *run, mem, notes string, keepDays int) ([]string, error) {
	root, err := os.OpenRoot(r.o.Workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if err := root.MkdirAll(MemoryDir, 0o755); err != nil {
		return nil, err
	}
	if mem != "" {
		if err := appendCurated(root, r.secrets.str(mem)); err != nil {
			return nil, err
		}
	}
	if notes != "" {
		if err := appendNotes(r, "Curated notes ("+r.id+")", notes); err != nil {
			return nil, err
		}
	}
	var removed []string
	if keepDays > 0 {
		cut := r.now().UTC().AddDate(0, 0, -keepDays).Format("2006-01-02")
		ents, _ := fs.ReadDir(root.FS(), MemoryDir)
		for _, ent := range ents {
			name := ent.Name()
			day := strings.TrimSuffix(name, ".md")
			if len(day) == 10 && day != name && day < cut && datePattern(day) {
				if root.Remove(filepath.Join(MemoryDir, name)) == nil {
					removed = append(removed, name)
				}
			}
		}
	}
	return removed, nil
}

// appendCurated appends to MEMORY.md the lines of mem it does not hold yet (a curator that
// repeats the whole file adds nothing twice); blank lines are not counted.
func appendCurated(root *os.Root, mem string) error {
	file := filepath.Join(MemoryDir, "MEMORY.md")
	old, err := root.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, l := range strings.Split(mem, "\n") {
		if t := strings.TrimSpace(l); t != "" && !have[t] {
			have[t] = true
			add = append(add, strings.TrimRight(l, " \t\r"))
		}
	}
	if len(add) == 0 {
		return nil
	}
	f, err := root.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	sep := ""
	if len(old) > 0 && !strings.HasSuffix(string(old), "\n") {
		sep = "\n"
	}
	_, err = f.WriteString(sep + strings.Join(add, "\n") + "\n")
	return err
}

func datePattern(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// appendNotes adds a titled block to today's memory notes (memory/<date>.md).
func appendNotes(r *run, title, text string) error {
	root, err := os.OpenRoot(r.o.Workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(MemoryDir, 0o755); err != nil {
		return err
	}
	f, err := root.OpenFile(filepath.Join(MemoryDir, r.now().UTC().Format("2006-01-02")+".md"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "\n## %s\n\n%s\n", title, strings.TrimSpace(truncate(r.secrets.str(text), 4000)))
	return err
}
