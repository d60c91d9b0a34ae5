//go:build !unix

package proposal

import "errors"

// moveInto renames from (a temporary file under .agentcanvas/tmp) to p.
func (d *dirs) moveInto(from, p string) error { return d.root.Rename(from, p) }

// linkAside: without hard links through folder handles, the rollback rewrites from the backup.
func (d *dirs) linkAside(p, tmp string) error { return errors.ErrUnsupported }
