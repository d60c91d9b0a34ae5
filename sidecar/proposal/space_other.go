//go:build !unix

package proposal

import "os"

func freeSpace(root *os.Root) (free, block int64) { return -1, 4096 }

func syncDir(root *os.Root, dir string) error { return nil }
