package index

import (
	"io/fs"
	"syscall"

	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// stampOf is what tells a later reading whether the file info describes
// changed.
func stampOf(info fs.FileInfo) snap.Stamp {
	ino, ct := inodeCTime(info)
	return snap.Stamp{Size: info.Size(), ModTime: info.ModTime().UnixNano(), Inode: ino, CTime: ct}
}

// unchanged reports whether info shows the file as e was read from it:
// size, modification time, inode and change time.
func unchanged(e *snap.Entry, info fs.FileInfo) bool {
	return stampOf(info) == e.Stamp
}

func inodeCTime(info fs.FileInfo) (uint64, int64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), ctimeOf(st)
	}
	return 0, 0
}
