package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcanvas/agentcanvas/sidecar/agentproto"
)

// A package dependency approved by the person is added to the project's manifest in the
// agent's sandbox (agent-stdout-protocols.md: "설치 승인 시 package.json에 추가"): the agent's
// work folder changes like any other edit of the agent, so the manifest change is part of the
// agent's proposal and reviewed with it. Nothing is installed, and the workspace itself is
// never written: an agent that works in the workspace is told to add it itself.

// approvals are the answers that approve a package request as asked (the request's name).
var approvals = []string{"y", "yes", "true", "approve", "approved", "install", "ok"}

// packageValue is the package a value given for a package request names: the request's own
// name when the value approves it ("yes"), else the value (another package the person chose).
func packageValue(req Request, value string) string {
	v := strings.TrimSpace(value)
	for _, a := range approvals {
		if strings.EqualFold(v, a) {
			return req.Field("name")
		}
	}
	return v
}

// manifests say where each ecosystem's dependency goes.
var manifests = map[string]struct {
	file   string
	create bool // the file is made when the folder has none
	add    func(data []byte, pkg string) ([]byte, bool, error)
}{
	"npm":      {"package.json", true, func(d []byte, p string) ([]byte, bool, error) { return jsonAdd(d, "dependencies", p, `"*"`) }},
	"composer": {"composer.json", true, func(d []byte, p string) ([]byte, bool, error) { return jsonAdd(d, "require", p, `"*"`) }},
	"pypi":     {"requirements.txt", true, func(d []byte, p string) ([]byte, bool, error) { return lineAdd(d, p, p) }},
	"gem":      {"Gemfile", false, func(d []byte, p string) ([]byte, bool, error) { return lineAdd(d, p, fmt.Sprintf("gem %q", p)) }},
	"cargo":    {"Cargo.toml", false, cargoAdd},
}

// addToManifest adds an approved package to the manifest of its ecosystem in the agent's
// sandbox work folder, and says what it did (or why it did not).
func (c *ictx) addToManifest(node string, req Request, pkg string) {
	eco, name, err := agentproto.ParsePackage(pkg)
	if err != nil {
		return // refused before it got here
	}
	fields := map[string]any{"agent": node, "id": req.ID, "package": name, "ecosystem": eco}
	m, known := manifests[eco]
	work := ""
	if spec, err := c.spec(node); err == nil && spec.SandboxWork != "" {
		work = spec.SandboxWork
	}
	switch {
	case !known:
		fields["message"] = fmt.Sprintf("the %s package %s is approved; AgentCanvas adds %s packages to no manifest (a version is needed): the agent adds it", eco, name, eco)
	case work == "":
		fields["message"] = fmt.Sprintf("the %s package %s is approved; %s works in the workspace, which the engine never edits: the agent adds it to %s, and that edit is reviewed as any other", eco, name, node, m.file)
	default:
		added, err := editManifest(work, m.file, m.create, func(d []byte) ([]byte, bool, error) { return m.add(d, name) })
		fields["manifest"] = m.file
		switch {
		case err != nil:
			fields["message"] = fmt.Sprintf("%s could not be added to %s: %v", name, m.file, err)
		case !added:
			fields["message"] = fmt.Sprintf("%s is already in %s", name, m.file)
		default:
			fields["added"] = true
			fields["message"] = fmt.Sprintf("%s is added to %s in %s's sandbox; the change is part of its proposal", name, m.file, node)
		}
	}
	c.r.emit(c.in.ID, "", "dependency_manifest", fields)
	if fields["added"] != true && !strings.Contains(fields["message"].(string), "is already in") {
		// the agent (and you) must add it: said where warnings are seen
		c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "message": fields["message"]})
	}
}

// editManifest changes the file name in dir through edit (made empty first when create and it
// is missing), inside dir only, never through a link, by a temporary file renamed over it.
func editManifest(dir, name string, create bool, edit func([]byte) ([]byte, bool, error)) (bool, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false, err
	}
	defer root.Close()
	data, perm := []byte(nil), fs.FileMode(0o644)
	switch st, err := root.Lstat(name); {
	case errors.Is(err, fs.ErrNotExist):
		if !create {
			return false, fmt.Errorf("the sandbox has no %s", name)
		}
	case err != nil:
		return false, err
	case !st.Mode().IsRegular():
		return false, fmt.Errorf("%s is not a regular file", name)
	default:
		perm = st.Mode().Perm()
		if st.Size() > 4<<20 {
			return false, fmt.Errorf("%s is larger than 4 MiB", name)
		}
		if data, err = root.ReadFile(name); err != nil {
			return false, err
		}
	}
	out, added, err := edit(data)
	if err != nil || !added {
		return false, err
	}
	tmp := "." + name + ".agentcanvas.tmp"
	if err := root.WriteFile(tmp, out, perm); err != nil {
		root.Remove(tmp)
		return false, err
	}
	return true, root.Rename(tmp, name)
}

// jsonAdd adds "pkg": value to the object member of a JSON manifest (made when missing, as is
// the manifest itself when empty), keeping every other byte as it was; false when pkg is there.
func jsonAdd(doc []byte, object, pkg, value string) ([]byte, bool, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return []byte(fmt.Sprintf("{\n  %q: {\n    %s: %s\n  }\n}\n", object, strconv.Quote(pkg), value)), true, nil
	}
	d := jsontext.NewDecoder(bytes.NewReader(doc))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false, errors.New("not a JSON object")
	}
	last := d.InputOffset() // the end of the last member read (the object's brace at first)
	for d.PeekKind() != '}' {
		key, err := d.ReadToken()
		if err != nil {
			return nil, false, err
		}
		keyIndent := indentAt(doc, d.InputOffset())
		if key.String() != object || d.PeekKind() != '{' {
			if err := d.SkipValue(); err != nil {
				return nil, false, err
			}
			last = d.InputOffset()
			continue
		}
		d.ReadToken() // the member object's '{'
		inner, empty := d.InputOffset(), true
		for d.PeekKind() != '}' {
			k, err := d.ReadToken()
			if err != nil {
				return nil, false, err
			}
			if k.String() == pkg {
				return doc, false, nil
			}
			if err := d.SkipValue(); err != nil {
				return nil, false, err
			}
			inner, empty = d.InputOffset(), false
		}
		member := strconv.Quote(pkg) + ": " + value
		if empty { // {} becomes {\n<indent>"pkg": value\n<key's indent>}
			return insertMember(doc, int(inner), false, keyIndent+"  ", member+"\n"+keyIndent), true, nil
		}
		return insertMember(doc, int(inner), true, indentAt(doc, inner), member), true, nil
	}
	if d.PeekKind() == 0 {
		return nil, false, errors.New("not a complete JSON object")
	}
	indent := indentAt(doc, last)
	if last == 1 { // an empty object
		indent = "  "
	}
	member := fmt.Sprintf("%q: {\n%s  %s: %s\n%s}", object, indent, strconv.Quote(pkg), value, indent)
	return insertMember(doc, int(last), last > 1, indent, member), true, nil
}

// insertMember puts member after offset at, after a comma when the object has members before.
func insertMember(doc []byte, at int, comma bool, indent, member string) []byte {
	sep := "\n" + indent
	if comma {
		sep = "," + sep
	}
	out := append([]byte(nil), doc[:at]...)
	out = append(out, sep+member...)
	return append(out, doc[at:]...)
}

// indentAt is the leading white space of the line holding offset at.
func indentAt(doc []byte, at int64) string {
	start := bytes.LastIndexByte(doc[:at], '\n') + 1
	line := doc[start:at]
	return string(line[:len(line)-len(bytes.TrimLeft(line, " \t"))])
}

// lineAdd adds line to a line-based manifest unless a line already names pkg.
func lineAdd(doc []byte, pkg, line string) ([]byte, bool, error) {
	re := regexp.MustCompile(`(?im)^\s*(gem\s+["'])?` + regexp.QuoteMeta(pkg) + `(["'\s=<>!~\[;,]|$)`)
	if re.Match(doc) {
		return doc, false, nil
	}
	out := append([]byte(nil), doc...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, line+"\n"...), true, nil
}

// cargoAdd adds `pkg = "*"` under Cargo.toml's [dependencies] (the section made when missing).
func cargoAdd(doc []byte, pkg string) ([]byte, bool, error) {
	lines := strings.Split(string(doc), "\n")
	in := false
	at := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			if in {
				break
			}
			in = t == "[dependencies]"
			if in {
				at = i + 1
			}
			continue
		}
		if in {
			if k, _, ok := strings.Cut(t, "="); ok && strings.TrimSpace(k) == pkg {
				return doc, false, nil
			}
			if t != "" {
				at = i + 1
			}
		}
	}
	entry := fmt.Sprintf("%s = %q", pkg, "*")
	if at < 0 {
		out := strings.TrimRight(string(doc), "\n") + "\n\n[dependencies]\n" + entry + "\n"
		return []byte(out), true, nil
	}
	lines = append(lines[:at], append([]string{entry}, lines[at:]...)...)
	return []byte(strings.Join(lines, "\n")), true, nil
}
