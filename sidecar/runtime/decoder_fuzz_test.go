package runtime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecoders feeds arbitrary stdout lines to every stream decoder, seeded with every line of
// the recorded streams (the real CLIs' among them): no panic; a turn that never reported
// success is never completed; a JSON object is never reported as a broken line; and a denial
// warning always names its tool and the field that allows it.
func FuzzDecoders(f *testing.F) {
	files, _ := filepath.Glob("testdata/streams/*/*.jsonl")
	for _, name := range files {
		b, _ := os.ReadFile(name)
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f.Add(append(sc.Bytes(), '\n'))
		}
	}
	f.Add([]byte(`{"type":"result","subtype":"success","is_error":"yes"}` + "\n"))
	f.Add([]byte(`{"type":"item.completed","item":null}` + "\n"))
	f.Add([]byte(`{"type":"message","role":"assistant","content":17}` + "\n"))
	f.Add([]byte(`{"type":"system","subtype":"permission_denied","tool_name":"Write","message":{"x":1}}` + "\n"))
	f.Add([]byte(`{"type":"result","subtype":"success","permission_denials":[{"tool_name":"Bash","tool_input":{"command":"  "}}]}` + "\n"))
	f.Add([]byte(`{"type":"tool_result","tool_id":"x","status":"error","error":{"type":"tool_not_registered"}}` + "\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		var obj map[string]any
		isObject := json.Unmarshal(line, &obj) == nil
		spec := &Spec{Access: AccessReadOnly}
		for _, d := range []decoder{claudeBackend{}.newDecoder(spec, turnInput{}), codexBackend{}.newDecoder(spec, turnInput{resume: "t"}), geminiBackend{}.newDecoder(spec, turnInput{}), &textDecoder{name: "command"}} {
			for _, ev := range d.line(line) {
				if ev.Kind != EventWarning {
					continue
				}
				if isObject && strings.Contains(ev.Reason, "non-JSON") {
					t.Errorf("%T reported a JSON object as broken: %s", d, ev.Reason)
				}
				if ev.Tool != "" && (ev.Field == "" || !strings.Contains(ev.Reason, ev.Tool)) {
					t.Errorf("%T: a denial without its tool or field: %+v", d, ev)
				}
			}
			out := d.end(0)
			if _, isText := d.(*textDecoder); !isText && !out.failed && !bytes.Contains(line, []byte("success")) && !bytes.Contains(line, []byte("turn.completed")) {
				t.Errorf("%T completed a turn from %q", d, line)
			}
		}
	})
}
