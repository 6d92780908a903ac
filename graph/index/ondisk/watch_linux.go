package ondisk

import (
	"bytes"
	"errors"
	"path"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Watcher is an inotify instance over the index's folders. Draining it at
// query time costs one non-blocking read, and an event is queued by the
// kernel before the write that caused it returns, so a change made just
// before a query is seen by it.
type Watcher struct {
	mu   sync.Mutex
	fd   int
	byWD map[int32]string // watch → folder, relative to the root
	buf  []byte
}

const watchMask = unix.IN_CLOSE_WRITE | unix.IN_MODIFY | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// NewWatcher opens an inotify instance watching no folder yet.
func NewWatcher() (*Watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &Watcher{fd: fd, byWD: map[int32]string{}, buf: make([]byte, 64<<10)}, nil
}

// Add watches the folder abs (rel to the root). It fails when the
// system's watch limit is reached.
func (w *Watcher) Add(rel, abs string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return errors.New("watcher closed")
	}
	wd, err := unix.InotifyAddWatch(w.fd, abs, watchMask)
	if err != nil {
		return err
	}
	w.byWD[int32(wd)] = rel
	return nil
}

// Drain returns the files (relative to the root) and folders that changed
// since the last drain. lost is set when the kernel's queue overflowed:
// the caller must check everything.
func (w *Watcher) Drain() (files, dirs []string, lost bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	seenF, seenD := map[string]bool{}, map[string]bool{}
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err != nil || n <= 0 {
			break
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			nameBytes := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				lost = true
				continue
			}
			dir, ok := w.byWD[ev.Wd]
			if !ok {
				continue
			}
			if ev.Mask&unix.IN_IGNORED != 0 {
				delete(w.byWD, ev.Wd)
				continue
			}
			name := string(bytes.TrimRight(nameBytes, "\x00"))
			switch {
			case ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
				if !seenD[path.Dir(dir)] {
					seenD[path.Dir(dir)] = true
					dirs = append(dirs, path.Dir(dir))
				}
			case ev.Mask&unix.IN_ISDIR != 0 || ev.Mask&(unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_MOVED_TO) != 0 && name == "":
				if !seenD[dir] {
					seenD[dir] = true
					dirs = append(dirs, dir)
				}
			case name != "":
				rel := path.Join(dir, name)
				if !seenF[rel] {
					seenF[rel] = true
					files = append(files, rel)
				}
			}
		}
	}
	return files, dirs, lost
}

// Close ends the watcher; Add then fails.
func (w *Watcher) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
}
