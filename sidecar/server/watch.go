package server

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watcher turns file-system events into agentcanvas/flowChanged and
// agentcanvas/proposalChanged notifications. It watches only the folders that matter
// (the root, .agentcanvas, the two flows folders, and the sandbox tree down to each
// proposal folder), adds watches when those folders appear later, and debounces: events
// for a path are collected and, when quiet, the path's state on disk decides what is
// reported. So an editor that saves by writing a temporary file and renaming it over the
// flow produces one "changed", not a delete and a create.
type watcher struct {
	s    *Server
	root string
	fw   *fsnotify.Watcher

	mu        sync.Mutex
	flows     map[string]bool    // pending flow paths (absolute)
	proposals map[[2]string]bool // pending (runId, agentId)
	known     map[string]bool    // flow files that exist, to tell created from changed
	timer     *time.Timer
	closed    bool
	done      chan struct{}
}

func newWatcher(s *Server, root string) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{s: s, root: root, fw: fw, flows: map[string]bool{}, proposals: map[[2]string]bool{},
		known: map[string]bool{}, done: make(chan struct{})}
	if err := w.addTree(""); err != nil {
		fw.Close()
		return nil, err
	}
	w.scan("", false) // the flows that exist now are known, not "created"
	go w.loop()
	return w, nil
}

func (w *watcher) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	w.fw.Close()
	<-w.done
}

// wanted says whether a folder (slash-separated, relative to the root) is watched.
func wanted(rel string) bool {
	parts := strings.Split(rel, "/")
	switch {
	case rel == "", rel == ".agentcanvas", rel == "flows", rel == ".agentcanvas/flows", rel == ".agentcanvas/sandboxes":
		return true
	case len(parts) == 3 && parts[0] == ".agentcanvas" && parts[1] == "sandboxes": // <run>
		return true
	case len(parts) == 4 && parts[0] == ".agentcanvas" && parts[1] == "sandboxes": // <run>/<agent>
		return true
	case len(parts) == 5 && parts[0] == ".agentcanvas" && parts[1] == "sandboxes" && parts[4] == "proposal":
		return true
	}
	return false
}

// addTree watches rel and every wanted folder below it, and notes the flow files and
// proposals already there (reported when a folder appears after startup).
func (w *watcher) addTree(rel string) error {
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	if err := w.fw.Add(abs); err != nil {
		if rel == "" {
			return err
		}
		return nil // gone again already
	}
	entries, _ := os.ReadDir(abs)
	for _, e := range entries {
		child := e.Name()
		if rel != "" {
			child = rel + "/" + e.Name()
		}
		if e.IsDir() && wanted(child) {
			_ = w.addTree(child)
		}
	}
	return nil
}

// scan records the flows and proposals under a folder that just appeared, and the flows
// that exist at startup.
func (w *watcher) scan(rel string, report bool) {
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	_ = filepath.WalkDir(abs, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		r, _ := filepath.Rel(w.root, p)
		r = filepath.ToSlash(r)
		if d.IsDir() && r != "." && !wanted(r) {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			w.classify(p, report)
		}
		return nil
	})
}

func (w *watcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.event(ev)
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.s.logMessage(msgWarning, "file watching: "+err.Error())
		}
	}
}

func (w *watcher) event(ev fsnotify.Event) {
	rel, err := filepath.Rel(w.root, ev.Name)
	if err != nil {
		return
	}
	rel = filepath.ToSlash(rel)
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() && wanted(rel) {
			_ = w.addTree(rel)
			w.scan(rel, true)
			return
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A watched folder that moved away keeps its inotify watch, and fsnotify would go on
		// reporting its events under the old name (the sandbox package prepares a sandbox in
		// a staging folder and renames it into place). Drop those watches; the folder's new
		// name arrives as a Create and is watched afresh.
		for _, p := range w.fw.WatchList() {
			if p == ev.Name || strings.HasPrefix(p, ev.Name+string(filepath.Separator)) {
				_ = w.fw.Remove(p)
			}
		}
		// A removed folder takes its flows with it.
		w.mu.Lock()
		for p := range w.known {
			if strings.HasPrefix(p, ev.Name+string(filepath.Separator)) {
				w.flows[p] = true
			}
		}
		w.mu.Unlock()
	}
	w.classify(ev.Name, true)
}

// classify queues a path if it is a flow file or inside a proposal folder.
func (w *watcher) classify(abs string, report bool) {
	rel, err := filepath.Rel(w.root, abs)
	if err != nil {
		return
	}
	rel = filepath.ToSlash(rel)
	parts := strings.Split(rel, "/")
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	switch {
	case (len(parts) == 2 && parts[0] == "flows" || len(parts) == 3 && parts[0] == ".agentcanvas" && parts[1] == "flows") && isFlowPath(abs):
		if !report {
			w.known[abs] = true
			return
		}
		w.flows[abs] = true
	case len(parts) >= 5 && parts[0] == ".agentcanvas" && parts[1] == "sandboxes" && parts[4] == "proposal",
		len(parts) == 4 && parts[0] == ".agentcanvas" && parts[1] == "sandboxes":
		if !report {
			return
		}
		w.proposals[[2]string{parts[2], parts[3]}] = true
	default:
		return
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timer = time.AfterFunc(w.s.opts.WatchDelay, w.flush)
}

type flowChangedParams struct {
	URI  string `json:"uri"`
	Kind string `json:"kind"` // created, changed, deleted
}

type proposalChangedParams struct {
	RunID   string `json:"runId"`
	AgentID string `json:"agentId"`
	Exists  bool   `json:"exists"` // proposal.json is present
}

// flush reports the quiet paths, deciding each by what is on disk now.
func (w *watcher) flush() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	flows, props := w.flows, w.proposals
	w.flows, w.proposals = map[string]bool{}, map[[2]string]bool{}
	var fl []flowChangedParams
	paths := make([]string, 0, len(flows))
	for p := range flows {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		_, err := os.Stat(p)
		switch {
		case err == nil && w.known[p]:
			fl = append(fl, flowChangedParams{pathURI(p), "changed"})
		case err == nil:
			w.known[p] = true
			fl = append(fl, flowChangedParams{pathURI(p), "created"})
		case w.known[p]:
			delete(w.known, p)
			fl = append(fl, flowChangedParams{pathURI(p), "deleted"})
		}
	}
	w.mu.Unlock()
	for _, f := range fl {
		w.s.notify("agentcanvas/flowChanged", f)
	}
	keys := make([][2]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"/"+keys[i][1] < keys[j][0]+"/"+keys[j][1] })
	for _, k := range keys {
		_, err := os.Stat(filepath.Join(w.root, ".agentcanvas", "sandboxes", k[0], k[1], "proposal", "proposal.json"))
		w.s.notify("agentcanvas/proposalChanged", proposalChangedParams{RunID: k[0], AgentID: k[1], Exists: err == nil})
	}
}
