package confine

import (
	"strings"
	"testing"
)

// The refusals as the tools agents run word them.
func TestDeniedPath(t *testing.T) {
	for line, want := range map[string]string{
		"bash: /w/root.txt: Permission denied":                                     "/w/root.txt",
		"bash: line 3: ../../b/work/y: Permission denied":                          "../../b/work/y",
		"cat: /home/u/.ssh/id_test: Permission denied":                             "/home/u/.ssh/id_test",
		"touch: cannot touch '/etc/x': Permission denied":                          "/etc/x",
		"mkdir: cannot create directory ‘/opt/new’: Permission denied":             "/opt/new",
		"Error: EACCES: permission denied, open '/etc/hosts.new'":                  "/etc/hosts.new",
		"PermissionError: [Errno 13] Permission denied: '/usr/lib/x.py'":           "/usr/lib/x.py",
		"open /etc/x: permission denied":                                           "/etc/x",
		"ln: failed to create hard link '/w/a' => '/w/b': Operation not permitted": "/w/a",
		"bash: connect: Permission denied":                                         "",
		"bash: /dev/tcp/127.0.0.1/4000: Permission denied":                         "/dev/tcp/127.0.0.1/4000",
		`{"error":"EACCES: permission denied, mkdir \"/home/u/.npm\""}`:            "/home/u/.npm",
		"fatal: could not create work tree dir '/w/clone': Permission denied.":     "/w/clone",
	} {
		got, ok := DeniedPath(line)
		if !ok || got != want {
			t.Errorf("DeniedPath(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
	for _, line := range []string{"all tests passed", "see /etc/hosts", "permissions: 0644", ""} {
		if p, ok := DeniedPath(line); ok {
			t.Errorf("DeniedPath(%q) = %q: not a refusal", line, p)
		}
	}
}

// FuzzDeniedPath: any line is read without panicking, and a path it finds is in the line.
func FuzzDeniedPath(f *testing.F) {
	f.Add("bash: /w/x: Permission denied")
	f.Add("EACCES: permission denied, open '/etc/x'")
	f.Add("'/' EPERM")
	f.Fuzz(func(t *testing.T, line string) {
		p, ok := DeniedPath(line)
		if !ok && p != "" {
			t.Errorf("a path %q without a refusal", p)
		}
		if p != "" && !strings.Contains(line, p) {
			t.Errorf("path %q is not in %q", p, line)
		}
	})
}

// FuzzDecode: a guardian decoding any policy strings does not panic, and what it accepts
// encodes back to the same strings (flags first).
func FuzzDecode(f *testing.F) {
	f.Add("+network=none\x00r/usr\x00w/tmp/x")
	f.Add("l/\x00d/dev/null\x00+required")
	f.Add("+unix-sockets\x00w/tmp")
	f.Fuzz(func(t *testing.T, s string) {
		fields := strings.Split(s, "\x00")
		p, err := Decode(fields)
		if err != nil {
			return
		}
		back, err := Decode(p.Encode())
		if err != nil || back.String() != p.String() || back.Required != p.Required {
			t.Errorf("%q decodes to %+v, which re-encodes to %+v (%v)", fields, p, back, err)
		}
	})
}
