package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestResolveCommand(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "agents"), 0o755)
	os.WriteFile(filepath.Join(ws, "agents", "review.py"), []byte("print(1)\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "agents", "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(ws, "plain.sh"), []byte("echo\n"), 0o644)
	os.MkdirAll(filepath.Join(ws, "data"), 0o755)
	abs := func(rel string) string { return filepath.Join(ws, rel) }
	for _, c := range []struct {
		name string
		argv []string
		want []string
		err  string // a substring of the error; "" for none
	}{
		{"interpreter and script", []string{"python3", "agents/review.py"}, []string{"python3", abs("agents/review.py")}, ""},
		{"dot slash script", []string{"bash", "./agents/run.sh", "--fast"}, []string{"bash", abs("agents/run.sh"), "--fast"}, ""},
		{"program path", []string{"agents/run.sh"}, []string{abs("agents/run.sh")}, ""},
		{"dot slash program", []string{"./agents/run.sh", "x"}, []string{abs("agents/run.sh"), "x"}, ""},
		{"bare program from PATH", []string{"bash", "-c", "echo hi"}, []string{"bash", "-c", "echo hi"}, ""},
		{"bare word argument", []string{"node", "plain.sh"}, []string{"node", "plain.sh"}, ""},
		{"folder argument", []string{"tool", "data/"}, []string{"tool", abs("data")}, ""},
		{"options, pairs and urls untouched", []string{"tool", "--out=a/b", "-o", "x=y/z", "https://x.example/a", "/abs/path", "~/x"}, []string{"tool", "--out=a/b", "-o", "x=y/z", "https://x.example/a", "/abs/path", "~/x"}, ""},
		{"a missing non-script path is left alone", []string{"tool", "openai/gpt-4o", "out/report.md"}, []string{"tool", "openai/gpt-4o", "out/report.md"}, ""},
		{"missing script", []string{"bash", "agents/missing.sh"}, nil, "runtime.command[1]: agents/missing.sh does not exist in the workspace"},
		{"missing dot slash argument", []string{"tool", "./nothing"}, nil, "runtime.command[1]: ./nothing does not exist"},
		{"missing program", []string{"./bin/agent"}, nil, "runtime.command[0]: ./bin/agent does not exist"},
		{"program not executable", []string{"./plain.sh"}, nil, "runtime.command[0]: ./plain.sh is not an executable file"},
		{"parent folder", []string{"bash", "../outside.sh"}, nil, "runtime.command[1]: ../outside.sh does not exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ResolveCommand(ws, c.argv)
			if c.err != "" {
				var pe *CommandPathError
				if err == nil || !strings.Contains(err.Error(), c.err) || !errors.As(err, &pe) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
	// The flow's argv is never changed in place.
	argv := []string{"python3", "agents/review.py"}
	ResolveCommand(ws, argv)
	if argv[1] != "agents/review.py" {
		t.Errorf("the argv given was changed: %v", argv)
	}
}
