//go:build unix

package pathguard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// ErrNotRegular is wrapped when a file to read or change is a named pipe,
// a device or a socket: opening one can block forever or never end.
var ErrNotRegular = errors.New("not a regular file")

// ErrPathChanged is returned when a path changed while it was being opened
// (a link or folder swapped between the check and the use): the call is
// refused rather than followed, and trying again sees the new state.
var ErrPathChanged = errors.New("the path changed while it was opened (a link or folder was replaced); try again")

// rootEscape is the error os.Root gives for a name that leads out of it
// (unexported in package os), taken from a lookup that must fail so.
var rootEscape = sync.OnceValue(func() error {
	r, err := os.OpenRoot("/")
	if err != nil {
		return nil
	}
	defer r.Close()
	_, err = r.Lstat("..")
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return nil
})

// raced turns what a path swapped between Resolve and the use gives —
// os.Root refusing a link that now leads out, a folder that is now a link
// or a file — into ErrPathChanged. Paths reach the I/O methods resolved,
// so these cannot come from the path as it was checked.
func raced(err error) error {
	if err == nil {
		return nil
	}
	if esc := rootEscape(); esc != nil && errors.Is(err, esc) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) {
		return ErrPathChanged
	}
	return err
}

// ErrTooLarge is wrapped by ReadFile when a file is over its limit.
var ErrTooLarge = errors.New("file is over the size limit")

// Name returns abs (a path Resolve returned) as a name relative to the
// root, for the os.Root from FS: "." for the root itself. A path outside
// the root is refused.
func (g *Guard) Name(abs string) (string, error) {
	if abs == g.root {
		return ".", nil
	}
	if !g.inside(abs) {
		return "", g.refuse(abs, abs)
	}
	return abs[len(g.root)+1:], nil
}

// FS returns the os.Root every method here goes through, for packages that
// walk or open files themselves; its names are relative to Root.
func (g *Guard) FS() *os.Root { return g.fsys }

// Stat describes abs, following links that stay inside the root.
func (g *Guard) Stat(abs string) (fs.FileInfo, error) { return g.stat(abs, g.fsys.Stat) }

// Lstat describes abs itself, a link not followed.
func (g *Guard) Lstat(abs string) (fs.FileInfo, error) { return g.stat(abs, g.fsys.Lstat) }

// stat is Stat or Lstat (the root's stat) on abs's name in the root.
func (g *Guard) stat(abs string, stat func(name string) (fs.FileInfo, error)) (fs.FileInfo, error) {
	name, err := g.Name(abs)
	if err != nil {
		return nil, err
	}
	info, err := stat(name)
	return info, raced(err)
}

// Open opens abs for reading if it is a regular file. The file is checked
// before it is opened and again, on the descriptor, after a non-blocking
// open, so neither a pipe in place of the file nor one swapped in between
// can block the call.
func (g *Guard) Open(abs string) (*os.File, fs.FileInfo, error) {
	name, err := g.Name(abs)
	if err != nil {
		return nil, nil, err
	}
	return OpenRegular(g.fsys, name)
}

// OpenRegular opens name beneath root for reading if it is a regular
// file, as Guard.Open does.
func OpenRegular(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	info, err := root.Stat(name)
	if err != nil {
		return nil, nil, raced(err)
	}
	if !info.Mode().IsRegular() {
		return nil, info, notRegular(info)
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, raced(err)
	}
	info, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, info, notRegular(info)
	}
	return f, info, nil
}

func notRegular(info fs.FileInfo) error {
	if info.Mode()&fs.ModeSymlink != 0 {
		return ErrPathChanged // links are followed, so one seen here was swapped in
	}
	what := "a folder"
	if !info.IsDir() {
		what = FileKind(info.Mode())
	}
	return fmt.Errorf("%w: it is %s", ErrNotRegular, what)
}

// FileKind names a file type that is neither a folder nor a regular file,
// for the message that refuses it.
func FileKind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	default:
		return "a special file (" + t.String() + ")"
	}
}

// ReadFile reads abs, a regular file of at most limit bytes (0: no limit).
func (g *Guard) ReadFile(abs string, limit int64) ([]byte, fs.FileInfo, error) {
	f, info, err := g.Open(abs)
	if err != nil {
		return nil, info, err
	}
	defer f.Close()
	if limit > 0 && info.Size() > limit {
		return nil, info, fmt.Errorf("%w: %d bytes, over the %d-byte limit", ErrTooLarge, info.Size(), limit)
	}
	r := io.Reader(f)
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	var buf bytes.Buffer
	buf.Grow(int(info.Size()) + bytes.MinRead) // one allocation: ReadFrom wants MinRead free to see EOF
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, info, err
	}
	data := buf.Bytes()
	if limit > 0 && int64(len(data)) > limit {
		return nil, info, fmt.Errorf("%w: it grew past %d bytes while being read", ErrTooLarge, limit)
	}
	return data, info, nil
}

// ReadDir lists the folder abs.
func (g *Guard) ReadDir(abs string) ([]fs.DirEntry, error) {
	d, err := g.OpenDir(abs)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadDir(-1)
}

// OpenDir opens the folder abs; its descriptor is a stable handle for
// *at system calls (atomic writes create and rename within it).
func (g *Guard) OpenDir(abs string) (*os.File, error) {
	name, err := g.Name(abs)
	if err != nil {
		return nil, err
	}
	f, err := g.fsys.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	return f, raced(err)
}
