package runtime

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecoders feeds arbitrary stdout lines to every stream decoder: no panic, and a turn
// that never reported success is never completed.
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
	f.Fuzz(func(t *testing.T, line []byte) {
		spec := &Spec{Access: AccessReadOnly}
		for _, d := range []decoder{claudeBackend{}.newDecoder(spec), codexBackend{}.newDecoder(spec), geminiBackend{}.newDecoder(spec), &textDecoder{name: "command"}} {
			d.line(line)
			out := d.end(0)
			if _, isText := d.(*textDecoder); !isText && !out.failed && !bytes.Contains(line, []byte("success")) && !bytes.Contains(line, []byte("turn.completed")) {
				t.Errorf("%T completed a turn from %q", d, line)
			}
		}
	})
}
