package fileread

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/pathguard"
	"golang.org/x/sys/unix"
)

// Reader reads files for one worker beneath the folder it read last:
// a search reads files folder by folder, and a file opened by its name
// beneath its folder's descriptor costs one system call where a path
// opened beneath the root costs one for each of its folders (and one to
// close each). The folder is opened through the guard, and a file name
// has no slash and is opened without following a link, so nothing
// outside the root is read; a file that is not plainly a regular file
// (a link, a pipe, a device, gone) goes the guard's way, which says why.
type Reader struct {
	g   *pathguard.Guard
	dir string
	fd  *os.File
	dfd int // fd's descriptor
}

// Close closes the folder the reader holds open.
func (r *Reader) Close() {
	if r.fd != nil {
		r.fd.Close()
		r.fd, r.g, r.dir = nil, nil, ""
	}
}

// Read reads the file at path into buf, refusing one that grew past
// limit (size is what a stat said, to size buf), and returns what the open
// descriptor said about the file before the read.
func (r *Reader) Read(buf []byte, g *pathguard.Guard, path string, size, limit int64) ([]byte, fs.FileInfo, error) {
	if out, info, ok := r.fast(buf, g, path, size, limit); ok {
		return out, info, nil
	}
	return readInto(buf, g, path, size, limit)
}

func (r *Reader) fast(buf []byte, g *pathguard.Guard, path string, size, limit int64) ([]byte, fs.FileInfo, bool) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	if base == "." || base == ".." || strings.ContainsRune(base, '/') {
		return nil, nil, false
	}
	if r.fd == nil || r.g != g || r.dir != dir {
		r.Close()
		d, err := g.OpenDir(dir)
		if err != nil {
			return nil, nil, false
		}
		r.g, r.dir, r.fd, r.dfd = g, dir, d, int(d.Fd())
	}
	dfd := r.dfd
	// Checked before the open, as the guard does: opening a device can
	// have effects.
	var pre unix.Stat_t
	if unix.Fstatat(dfd, base, &pre, unix.AT_SYMLINK_NOFOLLOW) != nil || pre.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, nil, false
	}
	fd, err := syscall.Openat(dfd, base, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, false
	}
	defer syscall.Close(fd)
	info := &statInfo{name: base}
	if syscall.Fstat(fd, &info.st) != nil || info.st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, nil, false
	}
	if size < info.st.Size {
		size = info.st.Size
	}
	if int64(cap(buf)) < size+1 {
		buf = make([]byte, 0, size+size/4+512)
	}
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, nil, false // the guard's way says it grew
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, nil, false
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	if int64(len(buf)) > limit {
		return nil, nil, false
	}
	return buf, info, true
}

// statInfo is a regular file's fs.FileInfo from fstat.
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) Mode() fs.FileMode  { return fs.FileMode(s.st.Mode & 0o777) }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return false }
func (s *statInfo) Sys() any           { return &s.st }
