package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
	"github.com/agentcanvas/agentcanvas/sidecar/procalive"
)

func init() {
	register("initialize", method{handle: initializeHandler, beforeInit: true})
	register("initialized", method{handle: (*Server).initialized})
	register("shutdown", method{handle: (*Server).shutdown, beforeInit: false})
	register("exit", method{handle: (*Server).exit, beforeInit: true})
}

// initOptions are initialize's initializationOptions: AgentCanvas's own, so decoded with
// encoding/json from protocol's raw LSPAny.
type initOptions struct {
	// DiagnosticsDelayMs overrides the diagnostics debounce (tests use 0 → default).
	DiagnosticsDelayMs int `json:"diagnosticsDelayMs"`
	// The agentcanvas.* settings at start (settings.go); later changes come as
	// workspace/didChangeConfiguration.
	settingsParams
}

func (s *Server) initialize(ctx context.Context, p *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	var opts initOptions
	if len(p.InitializationOptions) > 0 {
		if err := decode(json.RawMessage(p.InitializationOptions), &opts); err != nil {
			return nil, badParams("initializationOptions: %v", err)
		}
	}
	s.mu.Lock()
	if s.state != stateNew {
		s.mu.Unlock()
		return nil, badParams("initialize was already sent")
	}
	root := ""
	folders, _ := p.WorkspaceFolders.Get()
	rootPath, _ := p.RootPath.Get()
	switch {
	case len(folders) > 0:
		root, _ = uriPath(string(folders[0].URI))
	case p.RootURI != nil && *p.RootURI != "":
		root, _ = uriPath(string(*p.RootURI))
	case rootPath != "":
		root = rootPath
	}
	if root != "" {
		if abs, err := filepath.Abs(root); err == nil {
			root = abs
		}
	}
	s.root = root
	s.progressCap = p.Capabilities.Window != nil && p.Capabilities.Window.WorkDoneProgress != nil && *p.Capabilities.Window.WorkDoneProgress
	if p.ProcessID != nil {
		s.clientPID = int(*p.ProcessID)
	}
	if ms := opts.DiagnosticsDelayMs; ms > 0 {
		s.opts.DiagnosticsDelay = time.Duration(ms) * time.Millisecond
	}
	s.state = stateInitialized
	s.mu.Unlock()
	s.applySettings(opts.settingsParams, "initializationOptions")

	caps, err := s.capabilities()
	if err != nil {
		return nil, err
	}
	r := &protocol.InitializeResult{Capabilities: caps,
		ServerInfo: protocol.ServerInfo{Name: "agentcanvas", Version: protocol.NewOptional(s.opts.Version)}}
	if s.clientPID > 0 {
		go s.watchClientProcess(s.clientPID)
	}
	return r, nil
}

func (s *Server) initialized(ctx context.Context, _ json.RawMessage) (any, error) {
	if err := pattern.Err(); err != nil {
		// A broken embedded library is a bug in the binary; the patterns that loaded still work.
		s.status.set(s, healthError, "the pattern library is broken: "+err.Error())
		s.logMessage(msgError, "the pattern library is broken: "+err.Error())
	}
	root := s.workspaceRoot()
	if root != "" {
		go s.recoverWorkspace(root)
		w, err := newWatcher(s, root)
		if err != nil {
			s.status.set(s, healthWarning, fmt.Sprintf("not watching %s for changes: %v", root, err))
			s.logMessage(msgWarning, fmt.Sprintf("file watching is off: %v", err))
		} else {
			s.mu.Lock()
			s.watch = w
			s.mu.Unlock()
		}
	} else {
		s.status.set(s, healthWarning, "no workspace folder: workspace features (patterns on disk, sandboxes, proposals, logs) are off")
	}
	s.status.publish(s)
	return nil, nil
}

func (s *Server) shutdown(ctx context.Context, _ json.RawMessage) (any, error) {
	s.mu.Lock()
	s.state = stateShutdown
	s.mu.Unlock()
	return nil, nil
}

func (s *Server) exit(ctx context.Context, _ json.RawMessage) (any, error) {
	s.mu.Lock()
	code := int32(1)
	if s.state == stateShutdown {
		code = 0
	}
	s.mu.Unlock()
	s.finish(code)
	return nil, nil
}

// finish ends Run with code (once).
func (s *Server) finish(code int32) {
	s.exitOnce.Do(func() {
		s.exitCode.Store(code)
		close(s.exited)
	})
}

// watchClientProcess ends the session when the client process named in initialize dies,
// so an editor crash never leaves an orphaned sidecar.
func (s *Server) watchClientProcess(pid int) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.exited:
			return
		case <-t.C:
			if !procalive.Alive(pid) {
				s.logf("client process %d is gone; exiting", pid)
				s.finish(1)
				return
			}
		}
	}
}

func (s *Server) workspaceRoot() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.root
}

// uriPath turns a file:// URI into a local path.
func uriPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", badParams("uri %q: %v", uri, err)
	}
	if u.Scheme != "file" {
		return "", badParams("uri %q: only file:// URIs are supported", uri)
	}
	p := u.Path
	if p == "" {
		p = u.Opaque
	}
	return filepath.FromSlash(p), nil
}

// pathURI turns a local path into a file:// URI.
func pathURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}
