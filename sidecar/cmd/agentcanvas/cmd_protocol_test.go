package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// protocol scan --json prints exactly the blocks of the parser's golden files.
func TestProtocolScanJSONMatchesGoldens(t *testing.T) {
	files, _ := filepath.Glob("../../agentproto/testdata/scan/*.txt")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, f := range files {
		golden, err := os.ReadFile(strings.TrimSuffix(f, ".txt") + ".golden")
		if err != nil {
			t.Fatal(err)
		}
		want := string(golden[:bytes.LastIndex(golden, []byte("# log lines:"))])
		var out, errb bytes.Buffer
		if code := run([]string{"protocol", "scan", "--json", f}, nil, &out, &errb); code != exitOK {
			t.Fatalf("%s: exit %d: %s", f, code, errb.String())
		}
		if out.String() != want {
			t.Errorf("%s: scan --json output differs from the golden:\n%s\nwant:\n%s", f, out.String(), want)
		}
	}
}

func TestProtocolScanStdinText(t *testing.T) {
	in := "log line\r\n\x1b[33m[USER_QUESTION]\x1b[0m\r\ncategory: choice\r\nquestion: Which DB?\r\noptions:\r\n  - PostgreSQL\r\n  - SQLite (simple)\r\nrequired: true\r\n[/USER_QUESTION]\r\n" +
		"[ERROR]\ntype: fatal\nmessage: m\n"
	var out, errb bytes.Buffer
	if code := run([]string{"protocol", "scan"}, strings.NewReader(in), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := `stdin:2: user_question category=choice question="Which DB?" options=[PostgreSQL, "SQLite (simple)"] required=true
stdin:10: invalid (error) type=fatal message=m error: ERROR: missing closing tag [/ERROR] before end of output
`
	if out.String() != want {
		t.Errorf("got:\n%swant:\n%s", out.String(), want)
	}
}

func TestProtocolScanUsage(t *testing.T) {
	for _, args := range [][]string{
		{"protocol"},
		{"protocol", "list"},
		{"protocol", "scan", "a", "b"},
		{"protocol", "scan", "--nope"},
		{"protocol", "scan", filepath.Join(t.TempDir(), "missing.txt")},
	} {
		var out, errb bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errb); code != exitUsage || errb.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q; want %d and a message", args, code, errb.String(), exitUsage)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"protocol", "scan", "--json", "-"}, strings.NewReader("nothing here\n"), &out, &errb); code != exitOK || out.Len() != 0 {
		t.Errorf("empty scan: exit %d, out %q", code, out.String())
	}
}
