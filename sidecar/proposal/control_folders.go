package proposal

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Held for where a file is, not for its name: a folder a tool reads as a whole by what it
// holds (a git repository's own folder, a Python virtual environment), and a folder reached
// through a symbolic link named like a held one (.vscode -> config/editor). Seen against the
// workspace and the plan together, so a proposal cannot make such a folder by adding its
// marks.

// markedFolder is a kind of folder known by the names in it.
type markedFolder struct {
	reason string
	marks  func(has func(name string) bool) bool
}

var markedFolders = []markedFolder{
	{"inside a folder git reads as a repository of its own (it has HEAD, and objects/, refs/ or commondir): its config and hooks run commands when git runs there, as a shell prompt does",
		func(has func(string) bool) bool {
			return has("HEAD") && (has("objects") || has("refs") || has("commondir"))
		}},
	{"inside a Python virtual environment (it has pyvenv.cfg): its scripts and .pth files run whenever Python starts in it",
		func(has func(string) bool) bool { return has("pyvenv.cfg") }},
}

// folderHolds are the holds of the touched paths that lie in a marked folder, or in a folder
// a held symbolic link at the workspace root leads to.
func folderHolds(d *dirs, pl *plan, cr controlRules, touched []string) []Hold {
	written := map[string]bool{} // folded paths the plan writes, and every folder above them
	for _, w := range pl.writes {
		for p := w.path; p != "."; p = path.Dir(p) {
			written[foldPath(p)] = true
		}
	}
	has := func(dir, name string) bool {
		p := path.Join(dir, name)
		if written[foldPath(p)] {
			return true
		}
		_, err := d.root.Lstat(p)
		return err == nil
	}
	marked := map[string]string{} // folder → why it is marked ("" none)
	markOf := func(dir string) string {
		if why, ok := marked[dir]; ok {
			return why
		}
		why := ""
		for _, m := range markedFolders {
			if m.marks(func(name string) bool { return has(dir, name) }) {
				why = m.reason
				break
			}
		}
		marked[dir] = why
		return why
	}
	aliases := rootAliases(d, pl, cr)
	var out []Hold
	for _, p := range touched {
		for dir := path.Dir(p); ; dir = path.Dir(dir) {
			if why := markOf(dir); why != "" {
				out = appendHold(out, Hold{Path: p, Kind: HoldControl, Reason: why})
				break
			}
			if dir == "." {
				break
			}
		}
		for target, why := range aliases {
			if inFolder(p, target) {
				out = appendHold(out, Hold{Path: p, Kind: HoldControl, Reason: why})
			}
		}
	}
	return out
}

// rootAliases are the folders and files that symbolic links at the workspace root, named
// like held ones, lead to (inside the workspace), with why a change there is held: VS Code
// reads .vscode/tasks.json through a link .vscode -> config/editor. The links are the
// workspace's and the ones the plan makes.
func rootAliases(d *dirs, pl *plan, cr controlRules) map[string]string {
	links := map[string]string{} // name → target
	if f, err := d.root.Open("."); err == nil {
		entries, _ := f.ReadDir(-1)
		f.Close()
		for _, e := range entries {
			if e.Type()&fs.ModeSymlink != 0 {
				if target, err := d.root.Readlink(e.Name()); err == nil {
					links[e.Name()] = target
				}
			}
		}
	}
	for _, w := range pl.writes {
		if w.kind == kindSymlink && !strings.Contains(w.path, "/") {
			links[w.path] = string(w.data)
		}
	}
	out := map[string]string{}
	for name, target := range links {
		why := cr.byName(name)
		if why == "" {
			continue
		}
		if t := linkTargetPath(name, target); t != "" {
			out[t] = fmt.Sprintf("reached through the symbolic link %s, which is held: %s", name, why)
		}
	}
	return out
}

// inFolder: p is dir or inside it, as file systems compare names.
func inFolder(p, dir string) bool {
	fp, fd := foldPath(p), foldPath(dir)
	return fp == fd || strings.HasPrefix(fp, fd+"/")
}

// foldPath is p with each component folded (safepath.Fold).
func foldPath(p string) string { return strings.Join(foldedComponents(p), "/") }
