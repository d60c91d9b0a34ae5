package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestServeUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"serve", "-h"}, strings.NewReader(""), &out, &errOut); code != exitOK {
		t.Errorf("serve -h: exit %d", code)
	}
	if !strings.HasPrefix(out.String(), "usage: agentcanvas serve") || errOut.Len() != 0 {
		t.Errorf("serve -h wrote %q to stdout and %q to stderr", out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"serve", "extra"}, strings.NewReader(""), &out, &errOut); code != exitUsage {
		t.Errorf("serve extra: exit %d", code)
	}
	// End of input at once: a clean exit, and nothing but JSON-RPC ever goes to stdout.
	errOut.Reset()
	if code := run([]string{"serve", "--stdio"}, strings.NewReader(""), &out, &errOut); code != exitOK {
		t.Errorf("serve with empty input: exit %d: %s", code, errOut.String())
	}
	if out.Len() != 0 {
		t.Errorf("serve wrote %q to stdout", out.String())
	}
}
