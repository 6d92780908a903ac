// Package ondisk is a root's files as the operating system gives them to
// the code graph's index (graph/index), below its snapshots: a file's stamp
// (size, modification time, inode, change time) that says whether it
// changed since it was read, the inotify watcher of the root's folders that
// says which files and folders changed (Linux; elsewhere none, and every
// stamp is checked), and the scan of files' bytes for names, each opened
// beneath its folder without following links. It knows no record,
// snapshot builder or language.
package ondisk

import (
	"io/fs"
	"syscall"

	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Stamp is what tells a later reading whether the file info describes
// changed.
func Stamp(info fs.FileInfo) snap.Stamp {
	ino, ct := inodeCTime(info)
	return snap.Stamp{Size: info.Size(), ModTime: info.ModTime().UnixNano(), Inode: ino, CTime: ct}
}

// Unchanged reports whether info shows the file as e was read from it:
// size, modification time, inode and change time.
func Unchanged(e *snap.Entry, info fs.FileInfo) bool {
	return Stamp(info) == e.Stamp
}

func inodeCTime(info fs.FileInfo) (uint64, int64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), ctimeOf(st)
	}
	return 0, 0
}
