//go:build !unix

package proposal

import "os"

func freeSpace(root *os.Root) int64 { return -1 }

func syncDir(root *os.Root, dir string) error { return nil }
