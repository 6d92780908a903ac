package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"golang.org/x/sys/unix"
)

// staleAge is how old a dead process's temporary file must be before a
// sweep removes it.
const staleAge = time.Minute

// oldNameAge is how old a temporary file named the earlier way (a pid but
// no boot or PID namespace) must be before a sweep removes it: its maker
// cannot be checked from here (it may run in another PID namespace), but
// no write keeps its temporary file for a day.
const oldNameAge = 24 * time.Hour

var swept sync.Map // folder (device, inode) -> true, once per process

// A folder is known by its path and its inode: inodes of removed folders
// are reused.
type dirKey struct {
	path     string
	dev, ino uint64
}

// tempName is a fresh name beside base, carrying base and this process's
// owner name (proc.Owner: boot, PID namespace, pid) so whoever finds one
// left by a crash can tell whether its maker still runs.
func tempName(base string) string {
	var b [6]byte
	rand.Read(b[:])
	prefix := "." + base
	if len(prefix) > 200 {
		prefix = ".atomicfile"
	}
	return fmt.Sprintf("%s.tmp-%s-%s", prefix, proc.Owner(), hex.EncodeToString(b[:]))
}

// IsTemp reports whether name is a temporary file of this package, named
// either way.
func IsTemp(name string) bool {
	_, _, ok := tempOwner(name)
	return ok
}

// tempOwner reads the owner from a temporary file's name: ".NAME.tmp-
// BOOT-NS-PID-HEX12" (an owner from proc.Owner), or, named the earlier way,
// ".NAME.tmp-PID-HEX12" (old is true and owner is the pid).
func tempOwner(name string) (owner string, old, ok bool) {
	i := strings.LastIndex(name, ".tmp-")
	if !strings.HasPrefix(name, ".") || i < 0 {
		return "", false, false
	}
	parts := strings.Split(name[i+len(".tmp-"):], "-")
	suffix := parts[len(parts)-1]
	if len(suffix) != 12 {
		return "", false, false
	}
	if _, err := hex.DecodeString(suffix); err != nil {
		return "", false, false
	}
	digits := func(s string) bool {
		_, err := strconv.ParseUint(s, 10, 64)
		return err == nil
	}
	switch {
	case len(parts) == 2 && digits(parts[0]):
		return parts[0], true, true
	case len(parts) == 4 && parts[0] != "" && strings.Trim(parts[0], "abcdefghijklmnopqrstuvwxyz0123456789") == "" &&
		digits(parts[1]) && digits(parts[2]):
		return strings.Join(parts[:3], "-"), false, true
	}
	return "", false, false
}

// sweepOnce removes, the first time this process writes in a folder, the
// temporary files that processes which no longer run left there (a SIGKILL
// mid-write leaves one; the target itself is intact). A file is removed
// only when proc.OwnerGone says its maker is gone, which it never says of a
// process in another PID namespace or boot.
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
		owner, old, ok := tempOwner(name)
		if !ok {
			continue
		}
		age := staleAge
		if old {
			pid, _ := strconv.Atoi(owner)
			if pid == os.Getpid() || proc.Running(pid) {
				continue
			}
			age = oldNameAge
		} else if !proc.OwnerGone(owner) {
			continue
		}
		var fst unix.Stat_t
		if unix.Fstatat(dfd, name, &fst, unix.AT_SYMLINK_NOFOLLOW) != nil || fst.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		if time.Since(time.Unix(fst.Mtim.Unix())) < age {
			continue
		}
		unix.Unlinkat(dfd, name, 0)
	}
}
