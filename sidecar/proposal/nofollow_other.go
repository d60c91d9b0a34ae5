//go:build !unix

package proposal

// noFollow: elsewhere than Unix, os.Root keeps a path inside its root, and the callers check
// the kind with Lstat first.
const noFollow = 0
