package skill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	ws := t.TempDir()
	write := func(folder, text string) {
		t.Helper()
		dir := filepath.Join(ws, ".agentcanvas", "skills", folder)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("notes", "\xef\xbb\xbf---\r\nname: notes\r\ndescription: \"Write notes: briefly\"\r\ndisable-model-invocation: true\r\nuser-invocable: false\r\n---\r\n\r\n# Notes\r\n\r\nWrite NOTES.md.\r\n")
	write("plain", "---\nname: plain\ndescription: d\n---\n")
	write("bare", "just text\n")
	write("badyaml", "---\nname: [\n---\nx\n")
	write("noname", "---\ndescription: d\n---\n")
	write("nodesc", "---\nname: nodesc\n---\n")
	write("other", "---\nname: mine\ndescription: d\n---\n")
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()

	s, err := Load(root, "notes")
	if err != nil {
		t.Fatal(err)
	}
	want := Skill{Name: "notes", Description: "Write notes: briefly", DisableModelInvocation: true, UserInvocable: false, Instructions: "# Notes\n\nWrite NOTES.md."}
	if *s != want {
		t.Errorf("Load(notes) = %+v, want %+v", *s, want)
	}
	if s, err := Load(root, "plain"); err != nil || !s.UserInvocable || s.DisableModelInvocation || s.Instructions != "" {
		t.Errorf("Load(plain) = %+v, %v: defaults are user-invocable, model-invocable", s, err)
	}
	for name, msg := range map[string]string{
		"missing": `skill "missing" not found: create .agentcanvas/skills/missing/SKILL.md`,
		"../x":    "is not a folder name",
		"bare":    "has no YAML frontmatter",
		"badyaml": "is not valid YAML",
		"noname":  "has no name; add name: noname",
		"nodesc":  "has no description",
		"other":   "says name: mine, but the folder is other",
	} {
		_, err := Load(root, name)
		e, ok := err.(*Error)
		if !ok || !strings.Contains(e.Msg, msg) {
			t.Errorf("Load(%q) = %v, want an *Error containing %q", name, err, msg)
		}
	}
}
