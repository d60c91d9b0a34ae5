//go:build linux

package proposal

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

func stampOf(fi fs.FileInfo) fileStamp {
	switch st := fi.Sys().(type) {
	case *unix.Stat_t:
		return fileStamp{ok: true, dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mode: uint32(st.Mode),
			mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
	case *syscall.Stat_t:
		return fileStamp{ok: true, dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mode: uint32(st.Mode),
			mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
	}
	return fileStamp{}
}
