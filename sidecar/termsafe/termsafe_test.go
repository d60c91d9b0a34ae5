package termsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestTextMakesEveryTerminalControlVisible(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "hello, world", "hello, world"},
		{"ordinary non-ASCII", "café 設計 ✓ 🚀", "café 設計 ✓ 🚀"},
		{"newline and tab kept", "a\n\tb", "a\n\tb"},
		{"OSC 52 clipboard", "\x1b]52;c;ZWNobyBoaQ==\x07", `\x1b]52;c;ZWNobyBoaQ==\x07`},
		{"window title", "\x1b]0;pwned\x1b\\", `\x1b]0;pwned\x1b\`},
		{"cursor up and erase", "ok\x1b[1A\x1b[2K", `ok\x1b[1A\x1b[2K`},
		{"conceal", "\x1b[8mhidden\x1b[0m", `\x1b[8mhidden\x1b[0m`},
		{"carriage return overwrite", "safe\rEVIL", `safe\rEVIL`},
		{"8-bit CSI as a raw byte", "a\x9b31mb", `a\x9b31mb`},
		{"C1 CSI as a code point", "a\u009b31mb", `a\u009b31mb`},
		{"C1 OSC", "\u009d0;t\u009c", `\u009d0;t\u009c`},
		{"bidi override", "abc\u202edef", `abc\u202edef`},
		{"bidi isolate", "\u2066x\u2069", `\u2066x\u2069`},
		{"zero-width space", "a\u200bb", `a\u200bb`},
		{"BOM", "\ufeffx", `\ufeffx`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"DEL and BEL and backspace", "a\x7fb\x07c\x08d", `a\x7fb\x07c\x08d`},
		{"invalid UTF-8", "a\xff\xfeb", `a\xff\xfeb`},
		{"NUL", "a\x00b", `a\x00b`},
		{"private use", "a\ue000b", `a\ue000b`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Text(c.in)
			if got != c.want {
				t.Fatalf("Text(%q) = %q, want %q", c.in, got, c.want)
			}
			if !Safe(got) {
				t.Fatalf("Text's output %q is not safe", got)
			}
		})
	}
}

func TestLineEscapesNewlinesAndTabs(t *testing.T) {
	if got := Line("a\nb\tc"); got != `a\nb\tc` {
		t.Fatalf("Line = %q", got)
	}
}

func TestWriterCleansEachWrite(t *testing.T) {
	var b bytes.Buffer
	w := Writer(&b)
	if Writer(w) != w {
		t.Fatal("a wrapped writer is wrapped again")
	}
	n, err := w.Write([]byte("error: \x1b]52;c;eA==\x07 in a.txt\n"))
	if err != nil || n != len("error: \x1b]52;c;eA==\x07 in a.txt\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got := b.String(); got != "error: \\x1b]52;c;eA==\\x07 in a.txt\n" {
		t.Fatalf("wrote %q", got)
	}
}

func TestJSONKeepsTheMeaning(t *testing.T) {
	v := map[string]string{"reply": "a\u009b31m\u202eb\U000e0001 café"}
	raw, _ := json.Marshal(v)
	safe := JSON(raw)
	if !Safe(string(safe)) {
		t.Fatalf("JSON output %q is not safe", safe)
	}
	var back map[string]string
	if err := json.Unmarshal(safe, &back); err != nil || back["reply"] != v["reply"] {
		t.Fatalf("JSON changed the meaning: %q → %v, %v", safe, back, err)
	}
	if !strings.Contains(string(safe), "café") {
		t.Fatalf("ordinary text escaped: %s", safe)
	}
}

func TestJSONWriterCleansEachValue(t *testing.T) {
	var b strings.Builder
	enc := json.NewEncoder(JSONWriter(&b))
	if err := enc.Encode(map[string]string{"reply": "a\u009b31m\u202eb"}); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != `{"reply":"a\u009b31m\u202eb"}`+"\n" {
		t.Fatalf("wrote %q", got)
	}
}
