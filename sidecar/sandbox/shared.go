package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// Shared dependency folders (node_modules, .venv, vendor, target…) are not copied: work/
// gets a symlink to the workspace's folder, which a confined agent may read and not write
// (the runtime adds a read grant for it), and proposals leave it out. A folder that was
// copied anyway (not ignored, so part of the repository) stays a copy and is not linked.

// CleanShared checks one shared folder entry: workspace-relative, not climbing out, not in
// .git or .agentcanvas (node_modules and dist, blocked for copies, may be shared).
func CleanShared(p string) (string, error) {
	q, err := safepath.Clean(p, safepath.Lexical)
	if err != nil {
		return "", refuse(p, "shared folder: %s", err.(*safepath.Error).Reason)
	}
	if first, _, _ := strings.Cut(q, "/"); strings.EqualFold(first, ".agentcanvas") {
		return "", refuse(p, "shared folder: inside .agentcanvas")
	}
	return q, nil
}

// linkShared links each shared folder into the staging work/ and returns the ones linked.
// A folder of the workspace that is missing, a symlink, or reached through one is refused.
func linkShared(ws, st *os.Root, wsAbs string, shared []string, copied []entry) ([]string, error) {
	var linked []string
	for _, s := range shared {
		p, err := CleanShared(s)
		if err != nil {
			return nil, err
		}
		if err := checkPrefix(ws, p); err != nil {
			return nil, err
		}
		fi, err := ws.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, refuse(p, "shared folder does not exist in the workspace")
		} else if err != nil {
			return nil, refuse(p, "%v", err)
		}
		if !fi.IsDir() {
			return nil, refuse(p, "shared folder is not a folder (a symlink or a file)")
		}
		if holds(copied, p) {
			continue
		}
		w := path.Join("work", p)
		if err := st.MkdirAll(path.Dir(w), 0o755); err != nil {
			return nil, fmt.Errorf("shared folder %s: %w", p, err)
		}
		if err := st.Symlink(filepath.Join(wsAbs, filepath.FromSlash(p)), w); err != nil {
			return nil, fmt.Errorf("shared folder %s: %w", p, err)
		}
		linked = append(linked, p)
	}
	return linked, nil
}

// holds reports whether a copied entry is the folder p or lies in it.
func holds(copied []entry, p string) bool {
	for _, e := range copied {
		if e.path == p || strings.HasPrefix(e.path, p+"/") {
			return true
		}
	}
	return false
}
