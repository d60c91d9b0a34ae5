package runtime

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// A command agent's argv (runtime.command) is written in the flow, so its relative paths mean
// what they mean there: relative to the workspace root, not to the folder the agent happens to
// run in (a worker runs in its sandbox's work/, where agents/review.py is not).
// ResolveCommand makes them absolute before the agent starts:
//
//   - the program (argv[0]) when it is a relative path (it has a slash: ./run.sh,
//     agents/run.sh); a bare name (bash, python3) is looked up on PATH as usual;
//   - an argument that is an explicit relative path (./x, ../x), or that has a slash and
//     names a file or folder under the workspace root (agents/review.py);
//   - never an option (-x, --flag=a/b), a name=value pair, a URL, an absolute or ~ path, or
//     a word without a slash (a bare name may be anything: a model id, a subcommand).
//
// The program and ./ ../ arguments must exist, and so must a slashed argument that names a
// script (ScriptExtensions): each is an error naming its index (runtime.command[1]). Anything
// else that does not exist is left as written (an output path, a glob, "openai/gpt-4o").
func ResolveCommand(workspace string, argv []string) ([]string, error) {
	if len(argv) == 0 || workspace == "" {
		return argv, nil
	}
	out := slices.Clone(argv)
	for i, arg := range argv {
		if !workspaceArg(arg) {
			continue // a bare program is found on PATH; a bare argument may be anything
		}
		full := filepath.Join(workspace, filepath.FromSlash(arg))
		st, err := os.Stat(full)
		explicit := i == 0 || strings.HasPrefix(arg, "./") || strings.HasPrefix(arg, "../")
		switch {
		case err == nil && i == 0 && (st.IsDir() || st.Mode()&0o111 == 0):
			return nil, &CommandPathError{Index: i, Arg: arg, Full: full, Reason: "is not an executable file; make it executable (chmod +x) or run it through its interpreter, e.g. [bash, " + arg + "]"}
		case err == nil:
			out[i] = full
		case explicit || IsScript(arg):
			return nil, &CommandPathError{Index: i, Arg: arg, Full: full, Reason: "does not exist in the workspace"}
		}
	}
	return out, nil
}

// workspaceArg: ResolveCommand takes arg from the workspace root (a relative path with a
// slash), whether it exists yet or not.
func workspaceArg(arg string) bool { return relativePath(arg) && strings.Contains(arg, "/") }

// CommandFiles are the workspace paths argv names, as ResolveCommand takes them (existing or
// not: a file the command would run once someone makes it counts too), workspace-relative and
// slash-separated: the program and the scripts a command agent or a setup runs.
func CommandFiles(argv []string) []string {
	var out []string
	for _, arg := range argv {
		if !workspaceArg(arg) {
			continue
		}
		if p := path.Clean(arg); p != "." && p != ".." && !strings.HasPrefix(p, "../") && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// CommandPathError is a relative path in runtime.command that cannot be resolved.
type CommandPathError struct {
	Index  int    // its index in runtime.command
	Arg    string // as written
	Full   string // where it was looked for
	Reason string
}

func (e *CommandPathError) Error() string { return e.Problem() + " (" + e.Full + ")" }

// Problem is the error without the absolute path: relative paths in a command are taken
// from the workspace root.
func (e *CommandPathError) Problem() string {
	return fmt.Sprintf("runtime.command[%d]: %s %s; relative paths in a command are taken from the workspace root", e.Index, e.Arg, e.Reason)
}

// ScriptExtensions mark an argument as a script the command runs, which must exist.
var ScriptExtensions = []string{".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".lua", ".ps1"}

// IsScript: the argument names a script file (by its extension).
func IsScript(arg string) bool {
	return slices.Contains(ScriptExtensions, strings.ToLower(filepath.Ext(arg)))
}

// relativePath: arg is written as a relative file path, not an option, an assignment, a URL,
// or an absolute or home path.
func relativePath(arg string) bool {
	switch {
	case arg == "" || arg == "." || arg == "..",
		strings.HasPrefix(arg, "-"),
		strings.HasPrefix(arg, "~"),
		filepath.IsAbs(arg) || strings.HasPrefix(arg, "/"),
		strings.Contains(arg, "="),
		strings.Contains(arg, "://"),
		strings.ContainsAny(arg, "*?[\n$`"):
		return false
	}
	return true
}
