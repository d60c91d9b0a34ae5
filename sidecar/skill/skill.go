// Package skill reads the skills of .agentcanvas/skills/<name>/SKILL.md (spec §7.2): YAML
// front matter (name, description, user-invocable, disable-model-invocation) and the
// instructions after it. The validator, the engine's prompts and a person's invocation of a
// skill all read them here, so they agree on what a valid skill is.
package skill

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Skill is one SKILL.md.
type Skill struct {
	Name        string
	Description string
	// UserInvocable only decides whether the editor's menu offers the skill (default true).
	UserInvocable bool
	// DisableModelInvocation keeps models from choosing the skill on their own; a person may
	// still invoke it.
	DisableModelInvocation bool
	// Instructions is the text after the front matter, trimmed.
	Instructions string
}

// nameRE is a skill folder name: no separators, no dot-files, no "..".
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_\-]*$`)

// File is the workspace-relative SKILL.md of the skill name.
func File(name string) string { return ".agentcanvas/skills/" + name + "/SKILL.md" }

// Error says what is wrong with a skill, naming its file and how to fix it.
type Error struct {
	Name string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Load reads and checks the skill name inside the workspace root: its folder name, that
// SKILL.md exists and has front matter with a name equal to the folder and a description.
// Errors are *Error.
func Load(root *os.Root, name string) (*Skill, error) {
	bad := func(format string, args ...any) (*Skill, error) {
		return nil, &Error{Name: name, Msg: fmt.Sprintf(format, args...)}
	}
	if !nameRE.MatchString(name) {
		return bad("skill name %q is not a folder name (letters, digits, _ and -); name a folder under .agentcanvas/skills/", name)
	}
	file := File(name)
	data, err := root.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return bad("skill %q not found: create %s with YAML frontmatter (---, name: %s, description: …, ---), or remove the skill from the agent", name, file, name)
	}
	if err != nil {
		return bad("skill %q: %s cannot be read: %v", name, file, err)
	}
	front, body, ok := split(data)
	if !ok {
		return bad("skill %q: %s has no YAML frontmatter; start the file with ---, name: %s, description: …, ---", name, file, name)
	}
	var meta map[string]any
	if err := yaml.Unmarshal(front, &meta); err != nil {
		return bad("skill %q: the frontmatter of %s is not valid YAML; fix it", name, file)
	}
	s := &Skill{Instructions: strings.TrimSpace(body), UserInvocable: true}
	s.Name, _ = meta["name"].(string)
	s.Description, _ = meta["description"].(string)
	if v, ok := flag(meta["user-invocable"]); ok {
		s.UserInvocable = v
	}
	s.DisableModelInvocation, _ = flag(meta["disable-model-invocation"])
	switch {
	case strings.TrimSpace(s.Name) == "":
		return bad("skill %q: the frontmatter of %s has no name; add name: %s", name, file, name)
	case strings.TrimSpace(s.Description) == "":
		return bad("skill %q: the frontmatter of %s has no description; add description: what the skill does and when to use it", name, file)
	case s.Name != name:
		return bad("skill %q: the frontmatter of %s says name: %s, but the folder is %s; make the two equal", name, file, s.Name, name)
	}
	return s, nil
}

// flag reads a boolean written as true/false or as a string.
func flag(v any) (value, ok bool) {
	switch v := v.(type) {
	case bool:
		return v, true
	case string:
		return strings.EqualFold(v, "true"), true
	}
	return false, false
}

// split returns the YAML between a leading "---" line and the next "---" line, and the text
// after that line.
func split(data []byte) (front []byte, body string, ok bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return nil, "", false
	}
	rest := s[4:]
	if after, ok := strings.CutPrefix(rest, "---\n"); ok {
		return []byte{}, after, true
	}
	if rest == "---" {
		return []byte{}, "", true
	}
	if end := strings.Index(rest, "\n---\n"); end >= 0 {
		return []byte(rest[:end]), rest[end+len("\n---\n"):], true
	}
	if strings.HasSuffix(rest, "\n---") {
		return []byte(rest[:len(rest)-4]), "", true
	}
	return nil, "", false
}
