package main

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// commandPaths are every command and subcommand a person can type ("run", "run show",
// "proposal apply"), read from the top-level help and each command's usage lines, so a
// subcommand added later is checked without being listed here.
func commandPaths(t *testing.T) []string {
	t.Helper()
	var paths []string
	sub := regexp.MustCompile(`^(?:usage:|\s+)\s*agentcanvas ([a-z]+) ([a-z][a-z-]*)\b`)
	for name := range commands {
		paths = append(paths, name)
		_, out, _ := runCmd(t, name, "--help")
		if name == "proposal" || name == "sandbox" || name == "protocol" {
			_, out, _ = runCmd(t, name, "help")
		}
		seen := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			if m := sub.FindStringSubmatch(l); m != nil && m[1] == name && !seen[m[2]] {
				seen[m[2]] = true
				paths = append(paths, name+" "+m[2])
			}
		}
	}
	sort.Strings(paths)
	return paths
}

// Every --help (and -h, and help CMD) prints on stdout, exits 0, in one format: the usage
// lines once, what the command does, its exit status, then its flags as --name; nothing on
// stderr. `agentcanvas --help | less` shows the help.
func TestEveryHelpIsOnStdoutAndExitsZero(t *testing.T) {
	groups := map[string]bool{"proposal": true, "sandbox": true, "protocol": true}
	paths := commandPaths(t)
	for _, want := range []string{"run show", "proposal list", "proposal request-changes", "proposal interdiff", "sandbox prepare", "protocol scan", "version", "mcp"} {
		if !contains(paths, want) {
			t.Fatalf("the command paths lack %q: %v", want, paths)
		}
	}
	for _, top := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, e := runCmd(t, top...)
		if code != exitOK || e != "" || !strings.HasPrefix(out, "usage: agentcanvas <command>") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", top, code, out, e)
		}
	}
	for _, p := range paths {
		words := strings.Fields(p)
		asks := [][]string{append(append([]string{}, words...), "--help"), append(append([]string{}, words...), "-h")}
		if len(words) == 1 {
			asks = append(asks, []string{"help", p})
		}
		for _, args := range asks {
			code, out, e := runCmd(t, args...)
			if groups[p] {
				if code != exitOK || e != "" || !strings.HasPrefix(out, "usage: agentcanvas "+p) {
					t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s", args, code, out, e)
				}
				continue
			}
			switch {
			case code != exitOK || e != "":
				t.Errorf("%v: exit %d, stderr %q", args, code, e)
			case !strings.HasPrefix(out, "usage: agentcanvas "+p):
				t.Errorf("%v: the help does not start with its usage:\n%s", args, out)
			case strings.Count(out, "usage: ") != 1:
				t.Errorf("%v: the usage is printed %d times:\n%s", args, strings.Count(out, "usage: "), out)
			case !strings.Contains(out, "\nExit status: "):
				t.Errorf("%v: the help does not give the exit status:\n%s", args, out)
			case regexp.MustCompile(`\n\s+-[a-z]`).MatchString(out) || strings.Contains(out, "Usage of"):
				t.Errorf("%v: flags are not listed as --name under flags:\n%s", args, out)
			}
		}
	}
}

// A mistake in the arguments says what is wrong in one line, then the usage lines, on
// stderr, exit 2; nothing on stdout.
func TestEveryUsageMistakeIsOnStderrAndExitsTwo(t *testing.T) {
	for _, p := range commandPaths(t) {
		if p == "proposal" || p == "sandbox" || p == "protocol" {
			continue
		}
		args := append(strings.Fields(p), "--no-such-flag")
		code, out, e := runCmd(t, args...)
		if code != exitUsage || out != "" || !strings.HasPrefix(e, "agentcanvas "+p+": flag provided but not defined: -no-such-flag\nusage: agentcanvas "+p) || strings.Count(e, "usage: ") != 1 {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s", args, code, out, e)
		}
	}
	for _, args := range [][]string{{"proposal", "nope"}, {"proposal"}, {"nope"}} {
		if code, out, e := runCmd(t, args...); code != exitUsage || out != "" || !strings.Contains(e, "usage: agentcanvas") {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s", args, code, out, e)
		}
	}
}

// The README's command table lists every command and subcommand with every flag it takes,
// and the exit codes its help gives.
func TestReadmeCommandTableIsComplete(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(l, "| `agentcanvas ") {
			rows = append(rows, l)
		}
	}
	flagRE := regexp.MustCompile(`(?m)^  (--[a-z-]+)`)
	exitRE := regexp.MustCompile(`\b[0-2]\b`)
	for _, p := range commandPaths(t) {
		if p == "proposal" || p == "sandbox" || p == "protocol" {
			continue
		}
		var mine []string
		for _, r := range rows {
			cell := strings.SplitN(r, "|", 3)[1]
			if strings.HasPrefix(cell, " `agentcanvas "+p+" ") || strings.HasPrefix(cell, " `agentcanvas "+p+"`") {
				mine = append(mine, r)
			}
		}
		if p == "run" {
			mine = slicesWithout(mine, "agentcanvas run show")
		}
		if len(mine) == 0 {
			t.Errorf("the README's command table has no row for %q", p)
			continue
		}
		_, help, _ := runCmd(t, append(strings.Fields(p), "--help")...)
		all := strings.Join(mine, "\n")
		for _, m := range flagRE.FindAllStringSubmatch(help, -1) {
			if !regexp.MustCompile(regexp.QuoteMeta(m[1]) + `\b`).MatchString(all) {
				t.Errorf("the README's row for %q lacks %s", p, m[1])
			}
		}
		status := help[strings.Index(help, "\nExit status: "):]
		status = status[:strings.IndexByte(status[1:], '\n')+1]
		exitCell := func(r string) string { c := strings.Split(r, "|"); return c[len(c)-2] }
		for _, code := range exitRE.FindAllString(status, -1) {
			found := false
			for _, r := range mine {
				found = found || contains(exitRE.FindAllString(exitCell(r), -1), code)
			}
			if !found {
				t.Errorf("the README's row for %q does not give exit %s (its help: %s)", p, code, strings.TrimSpace(status))
			}
		}
	}
}

func slicesWithout(rows []string, sub string) []string {
	var out []string
	for _, r := range rows {
		if !strings.Contains(r, sub) {
			out = append(out, r)
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
