//go:build !unix

package proposal

// moveInto renames from (a temporary file under .agentcanvas/tmp) to p.
func (d *dirs) moveInto(from, p string) error { return d.root.Rename(from, p) }
