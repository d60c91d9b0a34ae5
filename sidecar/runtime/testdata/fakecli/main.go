// Command fakecli stands in for the claude, codex and gemini CLIs in tests (it is built by the
// runtime tests and installed on PATH under those names). It checks its command line the way
// the real CLI would, then replays a recorded stream from FAKECLI_DIR/<cli>/<scenario>.jsonl
// (FAKECLI_SCENARIO, default "ok"); a resumed session replays <scenario>.resume.jsonl when
// it exists. In a stream:
//
//	{{PROMPT}}   the prompt, JSON-string-escaped      {{SESSION}}  the resumed id, or FAKECLI default
//	{{CWD}}      the working folder, JSON-escaped
//	#stderr TEXT  writes TEXT to stderr               #exit N  exits with N
//
// When FAKECLI_LOG is set, each invocation appends {"cli","args","cwd","stdin","env"} to that
// file; env holds the variables named in FAKECLI_LOG_ENV (comma-separated) that are set.
//
// MCP flags are checked as the CLIs parse them: claude --mcp-config takes one or more JSON
// strings of the .mcp.json shape; codex -c mcp_servers.<name>.<key>=<TOML value> must name a
// known key with a well-formed value, and a server needs a command or a url; gemini
// --allowed-mcp-server-names takes a value.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

func main() {
	cli := filepath.Base(os.Args[0])
	args := os.Args[1:]
	prompt, resume, err := parseArgs(cli, args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stdin, _ := io.ReadAll(os.Stdin)
	switch {
	case cli == "claude" && prompt == "" || cli == "codex" && prompt == "-":
		prompt = string(stdin) // as the real CLIs do without a prompt argument
	case cli == "gemini" && len(stdin) > 0 && prompt == "":
		prompt = string(stdin)
	case cli == "gemini" && len(stdin) > 0: // gemini puts stdin before the -p prompt
		prompt = string(stdin) + "\n\n" + prompt
	}
	cwd, _ := os.Getwd()
	if log := os.Getenv("FAKECLI_LOG"); log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			env := map[string]string{}
			for _, n := range strings.Split(os.Getenv("FAKECLI_LOG_ENV"), ",") {
				if v, ok := os.LookupEnv(n); ok && n != "" {
					env[n] = v
				}
			}
			b, _ := json.Marshal(map[string]any{"cli": cli, "args": args, "cwd": cwd, "stdin": string(stdin), "env": env})
			f.Write(append(b, '\n'))
			f.Close()
		}
	}
	scenario := os.Getenv("FAKECLI_SCENARIO")
	if scenario == "" {
		scenario = "ok"
	}
	path := filepath.Join(os.Getenv("FAKECLI_DIR"), cli, scenario+".jsonl")
	if resume != "" {
		if p := filepath.Join(os.Getenv("FAKECLI_DIR"), cli, scenario+".resume.jsonl"); exists(p) {
			path = p
		}
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakecli:", err)
		os.Exit(2)
	}
	defer f.Close()
	session := resume
	if session == "" {
		session = "5e0c1a4e-8d2b-4c39-9f0e-6f1d2b7a9c11"
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }
	repl := strings.NewReplacer("{{PROMPT}}", q(prompt), "{{SESSION}}", session, "{{CWD}}", q(cwd))
	out := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#stderr "):
			out.Flush()
			fmt.Fprintln(os.Stderr, line[len("#stderr "):])
		case strings.HasPrefix(line, "#exit "):
			out.Flush()
			n, _ := strconv.Atoi(line[len("#exit "):])
			os.Exit(n)
		case line == "":
		default:
			out.WriteString(repl.Replace(line) + "\n")
			out.Flush() // one event a line, as the real CLIs stream them
		}
	}
	out.Flush()
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// parseArgs checks the flags the runtime relies on, with the real CLIs' own refusals.
func parseArgs(cli string, args []string) (prompt, resume string, err error) {
	val := func(i int) (string, error) {
		if i+1 >= len(args) {
			return "", fmt.Errorf("error: option '%s' argument missing", args[i])
		}
		return args[i+1], nil
	}
	switch cli {
	case "claude":
		var print, verbose bool
		format := "text"
		for i := 0; i < len(args); i++ {
			switch args[i] {
			case "-p", "--print":
				print = true
				if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
					prompt = args[i+1]
					i++
				}
			case "--verbose":
				verbose = true
			case "--output-format":
				if format, err = val(i); err != nil {
					return
				}
				i++
			case "--resume", "-r":
				if resume, err = val(i); err != nil {
					return
				}
				i++
			case "--mcp-config":
				// Variadic, as in the real CLI: every following argument up to the next option.
				n := 0
				for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
					i++
					n++
					if err = checkClaudeMCPConfig(args[i]); err != nil {
						return
					}
				}
				if n == 0 {
					return "", "", fmt.Errorf("error: option '--mcp-config <configs...>' argument missing")
				}
			case "--strict-mcp-config":
			case "--model", "--max-turns", "--allowedTools", "--permission-mode", "--append-system-prompt":
				if _, err = val(i); err != nil {
					return
				}
				i++
			default:
				return "", "", fmt.Errorf("error: unknown option '%s'", args[i])
			}
		}
		if print && format == "stream-json" && !verbose {
			return "", "", fmt.Errorf("Error: When using --print, --output-format=stream-json requires --verbose")
		}
		if !print || format != "stream-json" {
			return "", "", fmt.Errorf("fakecli: only claude -p --output-format stream-json is recorded")
		}
	case "codex":
		if len(args) < 2 || args[0] != "exec" {
			return "", "", fmt.Errorf("fakecli: only codex exec is recorded")
		}
		jsonOut := false
		rest := []string{}
		mcp := map[string]map[string]bool{} // server -> keys set
		for i := 1; i < len(args); i++ {
			switch args[i] {
			case "--json":
				jsonOut = true
			case "--skip-git-repo-check":
			case "-c", "--config":
				var kv string
				if kv, err = val(i); err != nil {
					return
				}
				i++
				if err = checkCodexOverride(kv, mcp); err != nil {
					return
				}
			case "--sandbox", "-s", "-m", "--model", "-C", "--cd":
				if _, err = val(i); err != nil {
					return
				}
				i++
			default:
				if strings.HasPrefix(args[i], "-") && args[i] != "-" {
					return "", "", fmt.Errorf("error: unexpected argument '%s' found", args[i])
				}
				rest = append(rest, args[i])
			}
		}
		if !jsonOut {
			return "", "", fmt.Errorf("fakecli: only codex exec --json is recorded")
		}
		for name, keys := range mcp {
			if keys["command"] == keys["url"] {
				return "", "", fmt.Errorf("Error loading config.toml: invalid transport in `mcp_servers.%s`", name)
			}
			for k := range keys {
				if keys["url"] && stdioOnly[k] || keys["command"] && httpOnly[k] {
					return "", "", fmt.Errorf("Error loading config.toml: %s is not supported for this transport in `mcp_servers.%s`", k, name)
				}
			}
		}
		if len(rest) > 0 && rest[0] == "resume" {
			if len(rest) != 3 {
				return "", "", fmt.Errorf("error: codex exec resume needs SESSION_ID and PROMPT")
			}
			return rest[2], rest[1], nil
		}
		if len(rest) != 1 {
			return "", "", fmt.Errorf("error: codex exec takes one PROMPT, got %d", len(rest))
		}
		prompt = rest[0]
	case "gemini":
		format := "text"
		for i := 0; i < len(args); i++ {
			switch args[i] {
			case "-p", "--prompt":
				if prompt, err = val(i); err != nil {
					return
				}
				i++
			case "-o", "--output-format":
				if format, err = val(i); err != nil {
					return
				}
				i++
			case "--resume", "-r":
				if resume, err = val(i); err != nil {
					return
				}
				i++
			case "-m", "--model", "--approval-mode", "--allowed-mcp-server-names":
				if _, err = val(i); err != nil {
					return
				}
				i++
			default:
				return "", "", fmt.Errorf("Unknown argument: %s", args[i])
			}
		}
		if format != "stream-json" {
			return "", "", fmt.Errorf("fakecli: only gemini --output-format stream-json is recorded")
		}
	default:
		return "", "", fmt.Errorf("fakecli: unknown CLI name %q", cli)
	}
	return prompt, resume, nil
}

// checkClaudeMCPConfig checks one --mcp-config value the way claude loads it: a JSON object
// with mcpServers, each server a stdio command or an http/sse url.
func checkClaudeMCPConfig(v string) error {
	var doc struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			URL     string            `json:"url"`
			Env     map[string]string `json:"env"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(v), &doc); err != nil || doc.MCPServers == nil {
		return fmt.Errorf("Error: Invalid MCP configuration: %q is not a JSON {\"mcpServers\": …} string", v)
	}
	for name, s := range doc.MCPServers {
		switch s.Type {
		case "", "stdio":
			if s.Command == "" {
				return fmt.Errorf("Error: Invalid MCP configuration: mcpServers.%s: command: Required", name)
			}
		case "http", "sse":
			if s.URL == "" {
				return fmt.Errorf("Error: Invalid MCP configuration: mcpServers.%s: url: Required", name)
			}
		default:
			return fmt.Errorf("Error: Invalid MCP configuration: mcpServers.%s: type: Invalid input", name)
		}
	}
	return nil
}

var (
	stdioOnly = map[string]bool{"command": true, "args": true, "env": true, "env_vars": true, "cwd": true}
	httpOnly  = map[string]bool{"url": true, "bearer_token_env_var": true, "http_headers": true, "env_http_headers": true}
	// tomlInlineTable is the inline table of strings the runtime writes: { "k" = "v", … }.
	tomlInlineTable = regexp.MustCompile(`^\{ "(?:[^"\\]|\\.)*" = "(?:[^"\\]|\\.)*"(?:, "(?:[^"\\]|\\.)*" = "(?:[^"\\]|\\.)*")* \}$`)
	mcpKeyRE        = regexp.MustCompile(`^mcp_servers\.([A-Za-z0-9_-]+)\.([a-z_]+)$`)
)

// checkCodexOverride checks one -c key=value. Keys under mcp_servers must be codex's server
// keys, with values TOML strings, arrays of strings or inline tables of strings.
func checkCodexOverride(kv string, mcp map[string]map[string]bool) error {
	key, value, ok := strings.Cut(kv, "=")
	if !ok {
		return fmt.Errorf("error: Invalid override (missing '='): %s", kv)
	}
	if !strings.HasPrefix(key, "mcp_servers") {
		return nil
	}
	m := mcpKeyRE.FindStringSubmatch(key)
	if m == nil || !stdioOnly[m[2]] && !httpOnly[m[2]] {
		return fmt.Errorf("error: unknown MCP server key in override %q", key)
	}
	switch {
	case strings.HasPrefix(value, "\""):
		var s string
		if json.Unmarshal([]byte(value), &s) != nil || s == "" {
			return fmt.Errorf("error: %s: not a TOML string: %s", key, value)
		}
	case strings.HasPrefix(value, "["):
		var ss []string
		if json.Unmarshal([]byte(value), &ss) != nil {
			return fmt.Errorf("error: %s: not a TOML array of strings: %s", key, value)
		}
	case tomlInlineTable.MatchString(value):
	default:
		return fmt.Errorf("error: %s: value %s is not quoted TOML (codex would take it as a bare string)", key, value)
	}
	if mcp[m[1]] == nil {
		mcp[m[1]] = map[string]bool{}
	}
	mcp[m[1]][m[2]] = true
	return nil
}
