// Package mcpconfig decides which MCP servers an agent gets (agentcanvas-protocol.md §7.3):
// server definitions come from the workspace's .mcp.json (Claude Code's project MCP file), and
// an agent gets exactly the servers its flow names that are both defined there and listed in
// .agentcanvas/mcp-allowlist.json. Definitions hold environment variable NAMES only
// ("env": {"TOKEN": "${TOKEN}"}); values are never read, resolved or written here.
package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
)

const (
	// ConfigFile holds the server definitions: {"mcpServers": {"<name>": {…}}}.
	ConfigFile = ".mcp.json"
	// AllowlistFile lists the servers agents may use: {"servers": ["github", …]}.
	AllowlistFile = ".agentcanvas/mcp-allowlist.json"
)

// Transport types of a definition ("type"; absent means stdio, as in Claude Code).
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// Server is one resolved definition, as the agent CLI is given it. Env and Headers keep the
// file's ${NAME} references; the agent's own environment supplies the values.
type Server struct {
	Name    string            `json:"-"`
	Type    string            `json:"type"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	URL     string            `json:"url,omitempty"`
	Env     map[string]string `json:"env,omitempty"`     // KEY -> "${NAME}"
	Headers map[string]string `json:"headers,omitempty"` // header -> "${NAME}" or "Bearer ${NAME}"
}

// EnvRefs maps each env KEY of the server process to the variable NAME it takes its value from.
func (s Server) EnvRefs() map[string]string {
	out := make(map[string]string, len(s.Env))
	for k, v := range s.Env {
		out[k] = refName(v)
	}
	return out
}

// HeaderRef returns the variable a header takes its value from and whether the value is
// "Bearer ${NAME}" (rather than the whole value "${NAME}").
func (s Server) HeaderRef(header string) (name string, bearer bool) {
	v := s.Headers[header]
	if rest, ok := strings.CutPrefix(v, "Bearer "); ok {
		return refName(rest), true
	}
	return refName(v), false
}

// Names lists, sorted, the environment variables the server's definition refers to: the
// values the agent's environment must supply.
func (s Server) Names() []string {
	var out []string
	for _, v := range s.Env {
		out = append(out, refName(v))
	}
	for h := range s.Headers {
		n, _ := s.HeaderRef(h)
		out = append(out, n)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// Skip is a server an agent names but does not get, and why.
type Skip struct {
	Name   string
	Reason string
}

// Config is a workspace's MCP definitions and allowlist.
type Config struct {
	defs     map[string]Server
	problems map[string]string // server name -> what is wrong with its definition
	allowed  []string
	noConfig bool // .mcp.json does not exist
	noAllow  bool // the allowlist does not exist
}

// NameRE is a server name usable on every CLI (codex config keys, claude tool names mcp__<name>__…).
var NameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

var (
	refRE    = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)
	envKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func refName(v string) string {
	if m := refRE.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	return ""
}

// Load reads ConfigFile and AllowlistFile from the workspace root. A missing file is not an
// error (no definitions, nothing allowed); a file that cannot be read or parsed is, and the
// error names the file and the field. A definition that is wrong on its own only makes
// that server unusable (Resolve says why).
func Load(root *os.Root) (*Config, error) {
	c := &Config{defs: map[string]Server{}, problems: map[string]string{}}
	data, err := root.ReadFile(ConfigFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.noConfig = true
	case err != nil:
		return nil, fmt.Errorf("%s: %w", ConfigFile, err)
	default:
		if err := c.parseConfig(data); err != nil {
			return nil, err
		}
	}
	var found bool
	if c.allowed, found, err = LoadAllowlist(root); err != nil {
		return nil, err
	}
	c.noAllow = !found
	return c, nil
}

// LoadAllowlist reads AllowlistFile from the workspace root: the servers it lists, and
// whether it exists (a missing file allows nothing and is no error). An error names the file
// and the field, or the line and column of a JSON syntax error. validate reads the file
// through here too.
func LoadAllowlist(root *os.Root) (servers []string, found bool, err error) {
	data, err := root.ReadFile(AllowlistFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, true, fmt.Errorf("%s: %w", AllowlistFile, err)
	}
	servers, err = parseAllowlist(data)
	return servers, true, err
}

func (c *Config) parseConfig(data []byte) error {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: not valid JSON: %s", ConfigFile, jsonErr(data, err))
	}
	raw, ok := doc["mcpServers"]
	if !ok {
		return fmt.Errorf("%s: no \"mcpServers\" object (want {\"mcpServers\": {\"<name>\": {\"command\": …}}})", ConfigFile)
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &servers); err != nil || servers == nil {
		return fmt.Errorf("%s: mcpServers is not an object of server definitions", ConfigFile)
	}
	for name, def := range servers {
		s, problem := parseServer(name, def)
		if problem != "" {
			c.problems[name] = fmt.Sprintf("%s: mcpServers.%s%s", ConfigFile, name, problem)
			continue
		}
		c.defs[name] = s
	}
	return nil
}

// parseServer returns the definition, or what is wrong with it as ".field: message".
func parseServer(name string, def json.RawMessage) (Server, string) {
	if !NameRE.MatchString(name) {
		return Server{}, ": the name must be letters, digits, _ and - only"
	}
	var raw struct {
		Type    *string           `json:"type"`
		Command *string           `json:"command"`
		Args    []string          `json:"args"`
		URL     *string           `json:"url"`
		Env     map[string]string `json:"env"`
		Headers map[string]string `json:"headers"`
	}
	dec := json.NewDecoder(bytes.NewReader(def))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return Server{}, "." + strings.Trim(f, `"`) + ": not supported by AgentCanvas (supported: type, command, args, url, env, headers)"
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Server{}, "." + te.Field + ": must be a " + te.Type.String()
		}
		return Server{}, ": must be an object ({\"command\": …} or {\"type\": \"http\", \"url\": …})"
	}
	s := Server{Name: name, Args: raw.Args, Env: raw.Env, Headers: raw.Headers}
	if raw.Type != nil {
		s.Type = *raw.Type
	}
	if raw.Command != nil {
		s.Command = *raw.Command
	}
	if raw.URL != nil {
		s.URL = *raw.URL
	}
	if s.Type == "" {
		s.Type = TypeStdio
	}
	switch s.Type {
	case TypeStdio:
		if strings.TrimSpace(s.Command) == "" {
			return Server{}, ".command: a stdio server needs a command"
		}
		if s.URL != "" || len(s.Headers) > 0 {
			return Server{}, ".url: a stdio server has no url or headers (set \"type\": \"http\" or \"sse\")"
		}
	case TypeHTTP, TypeSSE:
		if !strings.HasPrefix(s.URL, "https://") && !strings.HasPrefix(s.URL, "http://") {
			return Server{}, ".url: an " + s.Type + " server needs an http:// or https:// url"
		}
		if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 {
			return Server{}, ".command: an " + s.Type + " server has no command, args or env"
		}
	default:
		return Server{}, fmt.Sprintf(".type: %q is not stdio, http or sse", s.Type)
	}
	// Spec §7.3: names only. A literal could be a token, and a ${…} in command, args or url
	// is expanded by some CLIs and not others, so secrets go through env and headers only.
	for i, a := range append([]string{s.Command, s.URL}, s.Args...) {
		if strings.Contains(a, "${") {
			field := [...]string{".command", ".url"}[min(i, 1)]
			if i >= 2 {
				field = fmt.Sprintf(".args[%d]", i-2)
			}
			return Server{}, field + ": variable references are only supported in env and headers; pass the value through env"
		}
	}
	for _, k := range sortedKeys(s.Env) {
		if !envKeyRE.MatchString(k) {
			return Server{}, fmt.Sprintf(".env.%s: not a valid environment variable name", k)
		}
		if refName(s.Env[k]) == "" {
			return Server{}, fmt.Sprintf(".env.%s: must be a variable reference such as \"${%s}\", not a value (secrets are stored by name only)", k, k)
		}
	}
	for _, h := range sortedKeys(s.Headers) {
		if n, _ := s.HeaderRef(h); n == "" {
			return Server{}, fmt.Sprintf(".headers.%s: must be \"${NAME}\" or \"Bearer ${NAME}\", not a value (secrets are stored by name only)", h)
		}
	}
	return s, ""
}

func parseAllowlist(data []byte) ([]string, error) {
	var doc struct {
		Servers []string `json:"servers"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return nil, fmt.Errorf("%s: %s: must be a list of server names ({\"servers\": [\"github\"]})", AllowlistFile, te.Field)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return nil, fmt.Errorf("%s: %s (the file has one field, servers)", AllowlistFile, strings.TrimPrefix(err.Error(), "json: "))
		}
		return nil, fmt.Errorf("%s: not valid JSON: %s", AllowlistFile, jsonErr(data, err))
	}
	return doc.Servers, nil
}

// Resolve returns the servers an agent naming names gets, in the order named, and the ones
// it does not get with the reason (for a warning: never skip silently). Duplicates count once.
func (c *Config) Resolve(names []string) ([]Server, []Skip) {
	var got []Server
	var skipped []Skip
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if reason := c.whyNot(n); reason != "" {
			skipped = append(skipped, Skip{n, reason})
			continue
		}
		got = append(got, c.defs[n])
	}
	return got, skipped
}

func (c *Config) whyNot(n string) string {
	switch {
	case c.noAllow:
		return fmt.Sprintf("not allowlisted: the workspace has no %s (create it with {\"servers\": [%q]} if the server is trusted)", AllowlistFile, n)
	case !slices.Contains(c.allowed, n):
		return fmt.Sprintf("not in the workspace allowlist %s", AllowlistFile)
	case c.problems[n] != "":
		return "its definition is not usable: " + c.problems[n]
	case c.noConfig:
		return fmt.Sprintf("not defined: the workspace has no %s (add {\"mcpServers\": {%q: {\"command\": …}}})", ConfigFile, n)
	}
	if _, ok := c.defs[n]; !ok {
		return fmt.Sprintf("not defined in %s (add it under mcpServers)", ConfigFile)
	}
	return ""
}

// jsonErr adds the line and column of a syntax error to its message.
func jsonErr(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := int(max(0, min(se.Offset-1, int64(len(data))))) // Offset counts the bad byte
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		col := off - bytes.LastIndexByte(data[:off], '\n')
		return fmt.Sprintf("line %d, column %d: %v", line, col, err)
	}
	return err.Error()
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Document is servers as a .mcp.json document, {"mcpServers": {"<name>": {…}}}: what
// claude --mcp-config takes and what command agents find in AGENTCANVAS_MCP_SERVERS. It
// holds the definitions' ${NAME} references, never values.
func Document(servers []Server) string {
	m := make(map[string]Server, len(servers))
	for _, s := range servers {
		m[s.Name] = s
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": m})
	return string(b)
}
