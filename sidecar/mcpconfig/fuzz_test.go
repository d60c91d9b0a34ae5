package mcpconfig

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary .mcp.json and allowlist bytes through the parsers: no panic, and
// whatever resolves holds references only (no literal env or header value gets through).
func FuzzParse(f *testing.F) {
	f.Add([]byte(defs), []byte(`{"servers": ["github", "docs", "leaky"]}`))
	f.Add([]byte(`{"mcpServers": {"s": {"type": "http", "url": "https://x", "headers": {"A": "Bearer ${T}"}}}}`), []byte(`{"servers": ["s"]}`))
	f.Add([]byte(`{"mcpServers": {"s": {"command": "x", "env": {"K": "${K"}}}}`), []byte(`{"servers": ["s"]}`))
	f.Add([]byte(`{"mcpServers": null}`), []byte(`{"servers": null}`))
	f.Add([]byte("{\n,"), []byte("["))
	f.Fuzz(func(t *testing.T, config, allow []byte) {
		c := &Config{defs: map[string]Server{}, problems: map[string]string{}}
		if err := c.parseConfig(config); err != nil {
			if !strings.HasPrefix(err.Error(), ConfigFile+": ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		allowed, err := parseAllowlist(allow)
		if err != nil {
			if !strings.HasPrefix(err.Error(), AllowlistFile+": ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		c.allowed = allowed
		names := append([]string{}, allowed...)
		for n := range c.defs {
			names = append(names, n)
		}
		got, _ := c.Resolve(names)
		for _, s := range got {
			if !NameRE.MatchString(s.Name) {
				t.Fatalf("server name %q resolved", s.Name)
			}
			for k, v := range s.Env {
				if refName(v) == "" {
					t.Fatalf("%s env %s = %q is not a reference", s.Name, k, v)
				}
			}
			for h := range s.Headers {
				if n, _ := s.HeaderRef(h); n == "" {
					t.Fatalf("%s header %s = %q is not a reference", s.Name, h, s.Headers[h])
				}
			}
		}
	})
}
