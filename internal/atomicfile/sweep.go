package atomicfile

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// staleAge is how old a dead process's temporary file must be before a
// sweep removes it.
const staleAge = time.Minute

var swept sync.Map // folder (device, inode) -> true, once per process

// A folder is known by its path and its inode: inodes of removed folders
// are reused.
type dirKey struct {
	path     string
	dev, ino uint64
}

// sweepOnce removes, the first time this process writes in a folder, the
// temporary files that processes which no longer run left there (a SIGKILL
// mid-write leaves one; the target itself is intact).
func sweepOnce(dir *os.File, dfd int, path string) {
	var st unix.Stat_t
	if unix.Fstat(dfd, &st) != nil {
		return
	}
	if _, done := swept.LoadOrStore(dirKey{path, uint64(st.Dev), uint64(st.Ino)}, true); done {
		return
	}
	names, _ := dir.Readdirnames(-1)
	for _, name := range names {
		pid, ok := tempOwner(name)
		if !ok || pid == os.Getpid() || processRuns(pid) {
			continue
		}
		var fst unix.Stat_t
		if unix.Fstatat(dfd, name, &fst, unix.AT_SYMLINK_NOFOLLOW) != nil || fst.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		if time.Since(time.Unix(fst.Mtim.Unix())) < staleAge {
			continue
		}
		unix.Unlinkat(dfd, name, 0)
	}
}

func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
