package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Manifest edits keep every other byte of the file (the proposal shows one added line), and
// never add a package twice.
func TestManifestEdits(t *testing.T) {
	for _, c := range []struct {
		name, doc, pkg, want string
		add                  func([]byte, string) ([]byte, bool, error)
	}{
		{"npm, dependencies there", "{\n  \"name\": \"app\",\n  \"dependencies\": {\n    \"react\": \"^18.0.0\"\n  },\n  \"scripts\": {}\n}\n", "@supabase/supabase-js",
			"{\n  \"name\": \"app\",\n  \"dependencies\": {\n    \"react\": \"^18.0.0\",\n    \"@supabase/supabase-js\": \"*\"\n  },\n  \"scripts\": {}\n}\n", manifests["npm"].add},
		{"npm, dependencies empty", "{\n  \"name\": \"app\",\n  \"dependencies\": {}\n}\n", "left-pad",
			"{\n  \"name\": \"app\",\n  \"dependencies\": {\n    \"left-pad\": \"*\"\n  }\n}\n", manifests["npm"].add},
		{"npm, no dependencies", "{\n  \"name\": \"app\"\n}\n", "left-pad",
			"{\n  \"name\": \"app\",\n  \"dependencies\": {\n    \"left-pad\": \"*\"\n  }\n}\n", manifests["npm"].add},
		{"npm, no file", "", "left-pad", "{\n  \"dependencies\": {\n    \"left-pad\": \"*\"\n  }\n}\n", manifests["npm"].add},
		{"npm, there already", "{\"dependencies\": {\"left-pad\": \"1.0.0\"}}", "left-pad", "", manifests["npm"].add},
		{"pypi", "flask==3.0\n", "requests", "flask==3.0\nrequests\n", manifests["pypi"].add},
		{"pypi, there already", "Requests>=2\n", "requests", "", manifests["pypi"].add},
		{"cargo", "[package]\nname = \"x\"\n\n[dependencies]\nserde = \"1\"\n\n[dev-dependencies]\n", "tokio",
			"[package]\nname = \"x\"\n\n[dependencies]\nserde = \"1\"\ntokio = \"*\"\n\n[dev-dependencies]\n", cargoAdd},
		{"gem", "source \"https://rubygems.org\"\n", "rails", "source \"https://rubygems.org\"\ngem \"rails\"\n", manifests["gem"].add},
	} {
		out, added, err := c.add([]byte(c.doc), c.pkg)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if added != (c.want != "") || added && string(out) != c.want {
			t.Errorf("%s: added %v\n%s\nwant\n%s", c.name, added, out, c.want)
		}
		if added && (c.name[:3] == "npm") && !json.Valid(out) {
			t.Errorf("%s: not JSON any more", c.name)
		}
	}
}

// The spec's package example: an approved @supabase/supabase-js is added to package.json in
// the worker's sandbox, so the manifest change is part of its proposal, reviewed with the
// rest of its work; the workspace's own package.json is untouched until it is applied.
func TestApprovedPackageChangesTheManifestInTheSandbox(t *testing.T) {
	dir := t.TempDir()
	agent := script(t, dir, "agent.sh", `cat >/dev/null
case "$AGENTCANVAS_TURN" in
1) printf '[DEPENDENCY_REQUEST]\ntype: package\nname: @supabase/supabase-js\ndescription: Supabase client library\nrequired: true\n[/DEPENDENCY_REQUEST]\n';;
*) echo "// uses supabase" > client.js; echo "ANSWER: wired the client";;
esac
`)
	ws, f := workspace(t, `version: 0.2
agents:
  - {id: coder, role: worker, files: [package.json], runtime: {backendId: command, command: [bash, `+agent+`]}}
systemNodes:
  - {id: bridge, type: bridge}
interactions:
  - id: i1
    patternId: protocol_bridge
    edges:
      - source: bridge
        target: coder
        data: {termination: {type: max_rounds, rounds: 1}, params: {rate_limit_per_min: 10}}
`)
	pkg := "{\n  \"name\": \"app\",\n  \"dependencies\": {\n    \"react\": \"^18.0.0\"\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(ws, "package.json"), []byte(pkg), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Human: NonInteractive{Answers: map[string]string{"@supabase/supabase-js": "yes"}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted || len(out.Proposals) != 1 {
		t.Fatalf("run %s (%s), proposals %v", out.Status, out.Reason, out.Proposals)
	}
	patch, err := os.ReadFile(filepath.Join(ws, filepath.Dir(filepath.FromSlash(out.Proposals[0])), "changes.patch"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(patch), "+    \"@supabase/supabase-js\": \"*\"") || !strings.Contains(string(patch), "client.js") {
		t.Errorf("the proposal does not carry the manifest change:\n%s", patch)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "package.json")); string(b) != pkg {
		t.Errorf("the workspace's package.json changed before review:\n%s", b)
	}
	m := eventsNamed(events(t, ws, f.Name), "dependency_manifest")
	if len(m) != 1 || fld(m[0], "added") != true || fld(m[0], "manifest") != "package.json" {
		t.Errorf("dependency_manifest %v", m)
	}
}
