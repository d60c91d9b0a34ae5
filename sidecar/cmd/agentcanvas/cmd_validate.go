package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
	"github.com/agentcanvas/agentcanvas/sidecar/validate"
)

func init() {
	register(&command{
		name:    "validate",
		summary: "check flow files: validate [--json] PATH… (a file, or a folder: every *.yaml under it)",
		run:     runValidate,
	})
}

// jsonDiagnostic is the --json shape (DESIGN.md, command line contract); 1-based.
type jsonDiagnostic struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	EndColumn int    `json:"endColumn"`
	Severity  string `json:"severity"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

func runValidate(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fl := newCmdFlags("validate", `usage: agentcanvas validate [--json] [--allow DIR]… [--block DIR]… PATH…
Checks flow files: each problem as FILE:LINE:COL: SEVERITY: CODE: MESSAGE. PATH is a flow file
or a folder (every *.yaml under it).
Exit status: 0 clean or warnings only, 1 errors, 2 usage or I/O error.`, stdout, stderr)
	asJSON := fl.Bool("json", false, "print one JSON array of {file,line,column,endLine,endColumn,severity,code,message}")
	rf := addRuleFlags(fl.FlagSet)
	if code, ok := fl.parse(args); !ok {
		return code
	}
	if fl.NArg() == 0 {
		return fl.usageError("no PATH given: name flow files or folders")
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas validate: %v\n", err)
		return exitUsage
	}
	rules, err := rf.rules(cwd)
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas validate: %v\n", err)
		return exitUsage
	}

	files, ioFailed := collectFlowFiles(fl.Args(), stderr)
	var all []diag.Diagnostic
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "agentcanvas validate: %v\n", err)
			ioFailed = true
			continue
		}
		root, ok := validate.FindRoot(filepath.Dir(file))
		if !ok {
			root = cwd
		}
		all = append(all, validate.Flow(flow.Parse(file, src), validate.Workspace{Root: root, Rules: rules})...)
	}

	if *asJSON {
		out := make([]jsonDiagnostic, 0, len(all))
		for _, d := range all {
			out = append(out, jsonDiagnostic{
				File: d.File, Line: d.Range.Start.Line, Column: d.Range.Start.Col,
				EndLine: d.Range.End.Line, EndColumn: d.Range.End.Col,
				Severity: string(d.Severity), Code: d.Code, Message: d.Message,
			})
		}
		enc := jsonOut(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return exitUsage
		}
	} else {
		for _, d := range all {
			fmt.Fprintln(stdout, termsafe.Line(d.String())) // a diagnostic quotes the flow's text
		}
		fmt.Fprintln(stderr, tally(len(files), all)) // stdout stays one diagnostic a line, for tools
	}
	switch {
	case ioFailed:
		return exitUsage
	case diag.HasErrors(all):
		return exitFail
	}
	return exitOK
}

// collectFlowFiles expands the arguments: a file is taken as is, a folder gives every *.yaml
// under it, in lexical order. Missing paths are reported and make the exit status 2.
func collectFlowFiles(args []string, stderr io.Writer) ([]string, bool) {
	var files []string
	failed := false
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil {
			fmt.Fprintf(stderr, "agentcanvas validate: %v\n", err)
			failed = true
			continue
		}
		if !st.IsDir() {
			files = append(files, arg)
			continue
		}
		var found []string
		err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != arg {
				switch d.Name() {
				case ".git", "node_modules":
					return filepath.SkipDir
				}
				// Inside .agentcanvas/ only flows/ holds flows; sandboxes/ holds copies of
				// the user's files, which may be any YAML.
				if parent := filepath.Base(filepath.Dir(p)); parent == ".agentcanvas" && d.Name() != "flows" {
					return filepath.SkipDir
				}
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".yaml") {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			fmt.Fprintf(stderr, "agentcanvas validate: %v\n", err)
			failed = true
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	return files, failed
}

// tally is the line that ends a human validate: how many files were read and what was found,
// so a clean run says so instead of printing nothing.
func tally(files int, ds []diag.Diagnostic) string {
	var errs, warns int
	for _, d := range ds {
		switch d.Severity {
		case diag.Error:
			errs++
		case diag.Warning:
			warns++
		}
	}
	what := plural(files, "flow file")
	if errs == 0 && warns == 0 {
		return "✓ " + what + " valid"
	}
	return fmt.Sprintf("%s: %s, %s", what, plural(errs, "error"), plural(warns, "warning"))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
