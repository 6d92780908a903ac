package graph

import (
	"io/fs"
	"syscall"

	"github.com/builtin-tools/builtin-tools/graph/lang"
)

// Resolution classes: how sure an edge is (lang's edge vocabulary).
const (
	Exact          = lang.Exact
	ViaImport      = lang.ViaImport
	Candidate      = lang.Candidate
	Implementation = lang.Implementation
	Unresolved     = lang.Unresolved
)

// File is what the index knows of one file: where it is, how it was read,
// and its record.
type File struct {
	ID      lang.FileID
	Rel     string // slash-separated, relative to the root
	Dir     string // path.Dir(Rel)
	Lang    *lang.Language
	Size    int64
	ModTime int64 // Unix nanoseconds
	Inode   uint64
	// CTime is the inode's change time, which no program can set back: a
	// rewrite in place that restores the size and mtime still changes it
	// (N21).
	CTime int64
	Hash  [32]byte // SHA-256 of the bytes read
	// Host says whether the file is built on this system by its record's
	// build line (a Go //go:build line): HostAny without a say, HostYes or
	// HostNo. Names (x_linux.go) are read apart, as variants.
	Host uint8
	*lang.Record
}

// cost estimates the bytes f holds in memory.
func (f *File) cost() int64 { return f.Record.Cost() + int64(len(f.Rel)) }

// stamp records what tells a later reading whether the file changed.
func (f *File) stamp(info fs.FileInfo) {
	f.ModTime = info.ModTime().UnixNano()
	f.Inode, f.CTime = inodeCTime(info)
}

// unchanged reports whether info shows the file as it was read: size,
// modification time, inode and change time.
func (f *File) unchanged(info fs.FileInfo) bool {
	ino, ct := inodeCTime(info)
	return info.Size() == f.Size && info.ModTime().UnixNano() == f.ModTime && ino == f.Inode && ct == f.CTime
}

func inodeCTime(info fs.FileInfo) (uint64, int64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), ctimeOf(st)
	}
	return 0, 0
}
