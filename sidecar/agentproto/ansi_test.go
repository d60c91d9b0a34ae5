package agentproto

import "testing"

func TestStripANSI(t *testing.T) {
	cases := map[string]string{
		"plain":                                         "plain",
		"\x1b[1;31mred\x1b[0m":                          "red",
		"\x1b[38;5;208m[ERROR]\x1b[39m":                 "[ERROR]",
		"a\x1b[2Kb\x1b[10;20Hc":                         "abc",
		"\x1b]0;window title\x07text":                   "text",
		"\x1b]8;;https://x.dev\x1b\\link\x1b]8;;\x1b\\": "link",
		"\x1b(Bx\x1b=y":                                 "xy",
		"cut \x1b[1;3":                                  "cut ",
		"cut \x1b":                                      "cut ",
		"\x1bP1$r0m\x1b\\after":                         "after",
	}
	for in, want := range cases {
		if got := string(StripANSI([]byte(in))); got != want {
			t.Errorf("StripANSI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseAll(t *testing.T) {
	bs := ParseAll([]byte("x\n[ERROR]\ntype: fatal\nmessage: m\nrecovery: notify_user\n[/ERROR]\n=== PHASE 4 COMPLETE ==="), Options{})
	if len(bs) != 2 || bs[0].Kind != KindError || bs[1].Kind != KindPhaseComplete || bs[1].Line != 7 {
		t.Fatalf("ParseAll = %+v", bs)
	}
}
