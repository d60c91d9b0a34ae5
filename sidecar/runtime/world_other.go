//go:build !linux

package runtime

import "github.com/agentcanvas/agentcanvas/sidecar/confine"

// worldSpec is Linux's only: no namespaces elsewhere.
type worldSpec struct{ key string }

func worldFor(confine.Policy) *worldSpec { return nil }

// WorldStatus says agents get no world of their own here.
func WorldStatus() string { return "no world of its own: namespaces are Linux's" }
