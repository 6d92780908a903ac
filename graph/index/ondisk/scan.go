package ondisk

import (
	"bytes"
	"context"
	"path"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/builtin-tools/builtin-tools/internal/walk"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Scan says, for each file, whether its bytes hold one of names (with
// fold, names are lower case and ASCII letters match in any case). A file
// that cannot be read through g, or is not a regular file within limit
// bytes (0: no limit) when opened, counts as a hit, so the capture
// reports why.
//
// Each folder is opened once through the guard and its files are opened
// beneath it by their base name, without following links: one open, one
// fstat and the reads per file, where a guarded read resolves the whole
// path twice (stat, then open) component by component.
func Scan(ctx context.Context, g *pathguard.Guard, files []walk.Entry, names [][]byte, fold bool, limit int64) []bool {
	hit := make([]bool, len(files))
	if len(names) == 0 || len(files) == 0 {
		return hit
	}
	type folder struct {
		abs   string
		files []int
	}
	var dirs []*folder
	at := map[string]*folder{}
	for i, e := range files {
		d := path.Dir(e.Abs)
		f := at[d]
		if f == nil {
			f = &folder{abs: d}
			at[d] = f
			dirs = append(dirs, f)
		}
		f.files = append(f.files, i)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(4*runtime.GOMAXPROCS(0), len(dirs)) { // reads wait in system calls
		wg.Go(func() {
			var buf []byte
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(dirs) {
					return
				}
				d := dirs[i]
				buf = scanFolder(g, d.abs, d.files, files, names, fold, limit, hit, buf)
			}
		})
	}
	wg.Wait()
	return hit
}

// scanFolder reads the files of one folder (indexes into files) into buf,
// reused between files, and marks hit.
func scanFolder(g *pathguard.Guard, abs string, idx []int, files []walk.Entry, names [][]byte, fold bool, limit int64, hit []bool, buf []byte) []byte {
	all := func() {
		for _, i := range idx {
			hit[i] = true
		}
	}
	d, err := g.OpenDir(abs)
	if err != nil {
		all()
		return buf
	}
	defer d.Close()
	rc, err := d.SyscallConn()
	if err != nil {
		all()
		return buf
	}
	cerr := rc.Control(func(dfd uintptr) {
		for _, i := range idx {
			var ok bool
			buf, ok = readBeneath(int(dfd), path.Base(files[i].Abs), limit, buf)
			if ok && fold {
				lowerASCII(buf)
			}
			hit[i] = !ok || containsAny(buf, names)
		}
	})
	if cerr != nil {
		all()
	}
	return buf
}

// readBeneath reads the regular file name in the folder dfd into buf;
// false when it cannot be opened, is a link or not a regular file, or is
// over limit bytes.
func readBeneath(dfd int, name string, limit int64, buf []byte) ([]byte, bool) {
	buf = buf[:0]
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return buf, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || limit > 0 && st.Size > limit {
		return buf, false
	}
	if want := int(st.Size) + 1; cap(buf) < want { // one byte more sees the end
		buf = make([]byte, 0, want+want/4)
	}
	for {
		if len(buf) == cap(buf) {
			if limit > 0 && int64(len(buf)) > limit {
				return buf[:0], false // grew while being read
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf[:0], false
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	if limit > 0 && int64(len(buf)) > limit {
		return buf[:0], false
	}
	return buf, true
}

func containsAny(data []byte, names [][]byte) bool {
	for _, n := range names {
		if bytes.Contains(data, n) {
			return true
		}
	}
	return false
}

func lowerASCII(b []byte) {
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
}
