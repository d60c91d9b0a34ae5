package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/agentproto"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

func init() {
	register(&command{
		name:    "protocol",
		summary: "scan agent output for protocol blocks: protocol scan [--json] [FILE]",
		run:     runProtocol,
	})
}

func runProtocol(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	const usage = "usage: agentcanvas protocol scan [--json] [FILE]"
	if len(args) == 0 || args[0] != "scan" {
		return groupHelp("protocol", usage, args, stdout, stderr)
	}
	fs := newCmdFlags("protocol scan", usage+`
Reads agent output from FILE or stdin and prints one line per protocol block.
Exit status: 0, 2 usage or a FILE that does not read.`, stdout, stderr)
	asJSON := fs.Bool("json", false, "one JSON object per block: {kind,line,fields,error?}")
	if code, ok := fs.parse(args[1:]); !ok {
		return code
	}
	if fs.NArg() > 1 {
		return fs.usageError("one FILE at most, got %d", fs.NArg())
	}
	in, name := stdin, "stdin"
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "agentcanvas protocol scan: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		in, name = f, fs.Arg(0)
	}
	return scan(in, name, *asJSON, stdout, stderr)
}

// scan streams in through the parser, printing blocks as they complete.
func scan(in io.Reader, name string, asJSON bool, stdout, stderr io.Writer) int {
	p := agentproto.NewParser(agentproto.Options{})
	enc := jsonOut(stdout)
	enc.SetEscapeHTML(false)
	print := func(blocks []agentproto.Block) {
		for _, b := range blocks {
			if asJSON {
				enc.Encode(b)
			} else {
				fmt.Fprintln(stdout, termsafe.Line(formatBlock(name, b))) // the agent's text
			}
		}
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := in.Read(buf)
		print(p.Write(buf[:n]))
		if err == io.EOF {
			break
		}
		if err != nil {
			print(p.Flush())
			fmt.Fprintf(stderr, "agentcanvas protocol scan: %s: %v\n", name, err)
			return exitUsage
		}
	}
	print(p.Flush())
	return exitOK
}

// formatBlock is the readable form: NAME:LINE: kind key=value … [error: …].
func formatBlock(name string, b agentproto.Block) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s:%d: %s", name, b.Line, b.Kind)
	if b.Kind == agentproto.KindInvalid && b.Of != "" {
		fmt.Fprintf(&sb, " (%s)", b.Of)
	}
	for _, k := range b.Keys {
		v, ok := b.Fields[k]
		if !ok {
			continue
		}
		k = quoteIfNeeded(k)
		switch v := v.(type) {
		case []string:
			fmt.Fprintf(&sb, " %s=[%s]", k, strings.Join(quoteAll(v), ", "))
		case string:
			fmt.Fprintf(&sb, " %s=%s", k, quoteIfNeeded(v))
		default:
			fmt.Fprintf(&sb, " %s=%v", k, v)
		}
	}
	if b.Error != "" {
		fmt.Fprintf(&sb, " error: %s", b.Error)
	}
	return sb.String()
}

func quoteAll(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = quoteIfNeeded(s)
	}
	return out
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"=,[]") {
		return fmt.Sprintf("%q", s)
	}
	return s
}
