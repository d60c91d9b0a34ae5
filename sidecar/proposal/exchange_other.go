//go:build !linux

package proposal

// exchange is Linux's renameat2(RENAME_EXCHANGE); elsewhere apply renames over the target.
func (d *dirs) exchange(from, p string) error { return errNoExchange }
