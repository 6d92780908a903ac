// Package atomicfile is the one commit plan every tool that writes files
// uses: a set of changes under a run's root, applied all or nothing, each
// file replaced so that a reader sees the old bytes or the new ones, never
// half a file.
//
// Every change goes through the folder's descriptor, opened beneath the
// root by the path guard (pathguard.Guard.OpenDir): the temporary file is
// created in that folder, filled, given the old file's owner, group, mode
// (setuid, setgid and sticky bits included) and extended attributes,
// synced, checked against what the caller read (compare and swap), and
// renamed over the target with renameat in the same folder. A folder
// swapped for a link out of the root cannot redirect any of it.
//
// A file that cannot be replaced without losing something is refused
// unless the caller forces it: a read-only file, one with other hard links
// (they would keep the old content), one whose owner cannot be kept. What
// could not be kept under force is reported, not hidden. Temporary
// files left by a process that died are swept from a folder the first time
// the process writes there; a temporary file's name says which process
// (boot, PID namespace, pid) made it.
//
// Callers hold the files' locks (Lock) from before they read to after the
// commit, so parallel tools never lose an update, in one process or
// several: Lock also takes an advisory lock on each file's folder, and the
// rename's victim is compared with what was read, for programs that take
// no lock.
//
// A repository's metadata (.git/ and the like, see gitMetadata) is
// refused: git runs commands named there and a change there never shows in
// review. A guard that allows it (pathguard.Guard.AllowGitWrites) still has
// changes to what git executes approved at the exec tier
// (Options.ApproveExec).
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/builtin-tools/builtin-tools/pathguard"
	"golang.org/x/sys/unix"
)

// The kinds of failure a commit reports; errors.Is matches them on an
// *Error.
var (
	ErrReadOnly  = errors.New("the file is read-only")
	ErrHardLinks = errors.New("the file has other hard links")
	ErrOwner     = errors.New("the file's owner cannot be kept")
	ErrChanged   = errors.New("the file changed since it was read")
	ErrExists    = errors.New("the file already exists")
	// ErrUnchanged is matched by every *Error after which the files are
	// as they were: nothing was written, or what was written was put back.
	ErrUnchanged = errors.New("no file was changed")
)

// kinds are the failures an *Error names as its Kind.
var kinds = []error{ErrReadOnly, ErrHardLinks, ErrOwner, ErrChanged, ErrExists, ErrGitMetadata, ErrGitExec}

// Error is why a commit failed, naming the file. Its text is a sentence for
// the agent; errors.Is matches its Kind, ErrUnchanged when the files are as
// they were, and anything in the error it wraps.
type Error struct {
	// Kind is one of ErrReadOnly, ErrHardLinks, ErrOwner, ErrChanged,
	// ErrExists, ErrGitMetadata and ErrGitExec, or nil for another failure
	// (a full disk, a permission).
	Kind error
	// Path is the file that failed, relative to the root.
	Path string
	// Err is what failed.
	Err error
	// Restore is why putting back the files already replaced failed; when
	// it is set, some files may hold the new content.
	Restore error
	files   int // changes in the commit
}

// Error implements error.
func (e *Error) Error() string {
	if e.Restore != nil {
		return fmt.Sprintf("%s: %v (and restoring the files written before it failed: %v)", e.Path, e.Err, e.Restore)
	}
	unchanged := "no file was changed"
	if e.files == 1 {
		unchanged = "the file was not changed"
	}
	return fmt.Sprintf("%s: %v (%s)", e.Path, e.Err, unchanged)
}

// Unwrap returns what failed.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the error's kind, and ErrUnchanged when nothing is left changed.
func (e *Error) Is(target error) bool {
	return target != nil && target == e.Kind || target == ErrUnchanged && e.Restore == nil
}

func newError(rel string, err, restore error, files int) *Error {
	e := &Error{Path: rel, Err: err, Restore: restore, files: files}
	for _, k := range kinds {
		if errors.Is(err, k) {
			e.Kind = k
			break
		}
	}
	return e
}

// Change is one file's new content, or its removal.
type Change struct {
	// Path is absolute and inside the guard's root, as Guard.Resolve
	// returned it.
	Path string
	Data []byte
	// Delete removes the file instead of writing it.
	Delete bool
	// Perm is a new file's permission before the umask (0 means 0o666, as
	// for any program that creates a file).
	Perm fs.FileMode
	// Chmod, when non-zero, sets the permission bits of the file (a
	// patch's mode change); otherwise an existing file keeps its mode.
	Chmod fs.FileMode
	// Expect, when Expected is set, is what the caller read: the change
	// fails with ErrChanged if the file holds anything else, and with
	// ErrExists if Expect is nil and the file exists.
	Expect   []byte
	Expected bool
}

// Options tune a commit.
type Options struct {
	// Force replaces a read-only file, one with other hard links, and one
	// whose owner cannot be kept; the report says what was lost.
	Force bool
	// ApproveExec, when the guard allows changes to repositories' metadata
	// (pathguard.Guard.AllowGitWrites), is asked once, with the files
	// (relative to the root), for the changes that alter what git executes
	// (a repository's config, hooks, info/): a nil error approves them. A
	// caller that cannot ask (nil) has them refused.
	ApproveExec func(paths []string) error
}

// Report says what a commit could not keep, one note a line, naming the
// file relative to the root.
type Report struct {
	Notes []string
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Write applies one change.
func Write(g *pathguard.Guard, c Change, opts Options) (*Report, error) {
	return WriteAll(g, []Change{c}, opts)
}

// WriteAll applies every change or none. Every file is checked and its
// temporary file written before the first rename; if a rename fails, the
// files already replaced are put back as they were (or removed, if they
// were new) and the folders the commit created are removed. A failure is
// an *Error.
func WriteAll(g *pathguard.Guard, changes []Change, opts Options) (*Report, error) {
	rep := &Report{}
	if err := checkGitMetadata(g, changes, opts.ApproveExec); err != nil {
		return nil, err
	}
	plans := make([]*plan, 0, len(changes))
	cleanup := func() {
		for i := len(plans) - 1; i >= 0; i-- {
			plans[i].discard()
		}
	}
	for _, c := range changes {
		// The old bytes are kept only to check them or to put them back.
		p, err := prepare(g, c, opts, rep, c.Expected || len(changes) > 1)
		if p != nil {
			plans = append(plans, p)
		}
		if err != nil {
			cleanup()
			return nil, newError(g.Rel(c.Path), err, nil, len(changes))
		}
	}
	for i, p := range plans {
		if BeforeCommitForTest != nil {
			BeforeCommitForTest(i)
		}
		if err := p.commit(); err != nil {
			var restoreErrs []error
			for j := i - 1; j >= 0; j-- {
				if rerr := plans[j].rollback(); rerr != nil {
					restoreErrs = append(restoreErrs, rerr)
				}
			}
			cleanup()
			return nil, newError(p.rel, err, errors.Join(restoreErrs...), len(changes))
		}
	}
	for _, p := range plans {
		p.finish()
	}
	return rep, nil
}

// BeforeCommitForTest, when set by a test, runs before the i-th rename.
var BeforeCommitForTest func(i int)

// afterCheckForTest, when set by a test, runs between a commit's last check
// of the target and its rename, where only another program can interfere.
var afterCheckForTest func(base string)

// plan is one change, prepared: its folder open, its old state read, its
// temporary file written.
type plan struct {
	g      *pathguard.Guard
	c      Change
	rel    string
	dir    *os.File
	dfd    int
	base   string
	newDir string // topmost folder prepare created, "" if none

	existed bool
	old     []byte
	st      unix.Stat_t // of the old file
	xattrs  map[string][]byte

	tmp       string // temporary name in dir, "" once renamed or removed
	committed bool
}

func prepare(g *pathguard.Guard, c Change, opts Options, rep *Report, keepOld bool) (*plan, error) {
	p := &plan{g: g, c: c, rel: g.Rel(c.Path), base: filepath.Base(c.Path)}
	if _, err := g.Name(c.Path); err != nil || c.Path == g.Root() {
		return nil, fmt.Errorf("not a file inside the root")
	}
	dirAbs := filepath.Dir(c.Path)
	if !c.Delete {
		top, err := makeParents(g, dirAbs)
		if err != nil {
			return nil, err
		}
		p.newDir = top
	}
	dir, err := g.OpenDir(dirAbs)
	if err != nil {
		p.removeNewDirs()
		return nil, err
	}
	p.dir, p.dfd = dir, int(dir.Fd())
	// The folder opened must be the one checked (for repository metadata,
	// among others): a folder swapped for a link inside the root between
	// the two would otherwise be followed.
	if at, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", p.dfd)); err == nil && at != dirAbs {
		return p, pathguard.ErrPathChanged
	}
	if err := unix.Faccessat(p.dfd, ".", unix.W_OK|unix.X_OK, unix.AT_EACCESS); err != nil {
		return p, &fs.PathError{Op: "write in", Path: g.Rel(dirAbs) + "/", Err: err}
	}
	sweepOnce(p.dir, p.dfd, dirAbs)

	if err := p.readOld(keepOld); err != nil {
		return p, err
	}
	if c.Expected {
		switch {
		case c.Expect == nil && p.existed:
			return p, ErrExists
		case c.Expect != nil && !p.existed:
			return p, fmt.Errorf("%w: it no longer exists", ErrChanged)
		case c.Expect != nil && !bytes.Equal(c.Expect, p.old):
			return p, ErrChanged
		}
	}
	if p.existed {
		if err := p.checkReplaceable(opts, rep, c.Delete); err != nil {
			return p, err
		}
	}
	if c.Delete {
		if !p.existed {
			return p, fmt.Errorf("cannot delete it: %w", fs.ErrNotExist)
		}
		return p, nil
	}
	return p, p.writeTemp(c.Data, opts, rep)
}

// makeParents creates the missing folders above a new file (with the
// umask's say over their mode) and returns the topmost one it made.
func makeParents(g *pathguard.Guard, dir string) (string, error) {
	top := ""
	for d := dir; d != g.Root(); d = filepath.Dir(d) {
		if _, err := g.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		top = d
	}
	if top == "" {
		return "", nil
	}
	name, err := g.Name(dir)
	if err != nil {
		return "", err
	}
	if err := g.FS().MkdirAll(name, 0o777); err != nil {
		return "", err
	}
	return top, nil
}

// readOld opens the current file without following a link or blocking and
// keeps its status, extended attributes and, with keep, its bytes.
func (p *plan) readOld(keep bool) error {
	fd, err := unix.Openat(p.dfd, p.base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case errors.Is(err, unix.ELOOP):
		return pathguard.ErrPathChanged // it was resolved, so a link here was swapped in
	case err != nil:
		return err
	}
	f := os.NewFile(uintptr(fd), p.base)
	defer f.Close()
	if err := unix.Fstat(fd, &p.st); err != nil {
		return err
	}
	if p.st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%w: it is %s", pathguard.ErrNotRegular, kindOf(uint32(p.st.Mode)))
	}
	p.existed = true
	p.xattrs = listXattrs(fd)
	if !keep {
		return nil
	}
	var buf bytes.Buffer
	buf.Grow(int(p.st.Size) + bytes.MinRead) // ReadFrom wants MinRead free to read EOF
	if _, err := buf.ReadFrom(f); err != nil {
		return err // a partial read must not pass for the old content
	}
	p.old = buf.Bytes()
	return nil
}

func kindOf(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a named pipe"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFDIR:
		return "a folder"
	}
	return "not a regular file"
}

// checkReplaceable refuses, unless forced, a replacement that would lose
// something the user did not ask to lose.
func (p *plan) checkReplaceable(opts Options, rep *Report, deleting bool) error {
	perm := fs.FileMode(p.st.Mode & 0o777)
	if p.st.Nlink > 1 && !deleting {
		if !opts.Force {
			return fmt.Errorf("%w (%d names share it); replacing it would leave the other names with the old content. "+
				"Set force to replace it anyway", ErrHardLinks, p.st.Nlink)
		}
		rep.note("%s had %d hard links; the other names keep the old content", p.rel, p.st.Nlink)
	}
	readOnly := perm&0o222 == 0
	notMine := unix.Faccessat(p.dfd, p.base, unix.W_OK, unix.AT_EACCESS) != nil
	if readOnly || notMine {
		why := fmt.Sprintf("mode %04o", perm)
		if !readOnly {
			why = "you may not write it"
		}
		if !opts.Force {
			return fmt.Errorf("%w (%s); set force to replace it anyway (its mode is kept)", ErrReadOnly, why)
		}
		rep.note("%s was read-only (%s) and was replaced as asked", p.rel, why)
	}
	return nil
}

// writeTemp writes data to a new temporary file in the folder with the
// old file's metadata.
func (p *plan) writeTemp(data []byte, opts Options, rep *Report) error {
	perm := uint32(0o666)
	if p.c.Perm != 0 {
		perm = uint32(p.c.Perm.Perm())
	}
	if p.existed {
		perm = 0o600 // until the old mode is set below
	}
	name := tempName(p.base)
	fd, err := unix.Openat(p.dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return err
	}
	p.tmp = name
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if p.existed {
		if err := p.copyMetadata(fd, opts, rep); err != nil {
			return err
		}
	}
	if p.c.Chmod != 0 {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		if err := unix.Fchmod(fd, uint32(st.Mode)&^0o777|uint32(p.c.Chmod.Perm())); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// copyMetadata gives the temporary file the old file's owner and group,
// then its mode (a chown clears setuid and setgid, so the mode comes
// after), then its extended attributes.
func (p *plan) copyMetadata(fd int, opts Options, rep *Report) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Uid != p.st.Uid || st.Gid != p.st.Gid {
		if err := unix.Fchown(fd, int(p.st.Uid), int(p.st.Gid)); err != nil {
			if !opts.Force {
				return fmt.Errorf("%w: it belongs to uid %d, gid %d, and a replacement written by uid %d would not (%v); set force to replace it anyway",
					ErrOwner, p.st.Uid, p.st.Gid, os.Geteuid(), err)
			}
			rep.note("%s now belongs to uid %d (it belonged to uid %d, gid %d, which could not be kept)", p.rel, st.Uid, p.st.Uid, p.st.Gid)
		}
	}
	if err := unix.Fchmod(fd, uint32(p.st.Mode)&0o7777); err != nil {
		return err
	}
	for name, value := range p.xattrs {
		if err := setXattr(fd, name, value); err != nil {
			rep.note("%s: extended attribute %s could not be kept (%v)", p.rel, name, err)
		}
	}
	return nil
}

// commit renames the temporary file over the target (or removes the
// target), after checking the target is still the file that was read.
// Every builtin-tools process holds the folder's lock (Lock) from the read
// to here; another program does not, so the rename's victim itself is
// compared with what was read: the files are exchanged (renameat2
// RENAME_EXCHANGE) and, if the one taken out is not the file read, put back.
// A new file is put in place only if none has appeared (RENAME_NOREPLACE).
func (p *plan) commit() error {
	var st unix.Stat_t
	err := unix.Fstatat(p.dfd, p.base, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case p.existed && err != nil:
		return fmt.Errorf("%w: it was removed while being written", ErrChanged)
	case p.existed && (!p.same(&st) || st.Ctim != p.st.Ctim):
		return fmt.Errorf("%w while being written (by another program)", ErrChanged)
	case !p.existed && err == nil:
		return fmt.Errorf("%w: it was created while being written (by another program)", ErrExists)
	}
	if afterCheckForTest != nil {
		afterCheckForTest(p.base)
	}
	switch {
	case p.c.Delete:
		if err := p.remove(); err != nil {
			return err
		}
	case p.existed:
		if err := p.exchange(); err != nil {
			return err
		}
	default:
		err := renameNoReplace(p.dfd, p.tmp, p.base)
		if noRenameat2(err) {
			err = unix.Renameat(p.dfd, p.tmp, p.dfd, p.base)
		}
		if errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("%w: it was created while being written (by another program)", ErrExists)
		}
		if err != nil {
			return err
		}
		p.tmp = ""
	}
	p.committed = true
	return nil
}

// same reports whether st describes the file that was read: the same
// inode, size and modification time. (A rename changes the change time, so
// only the check before the rename compares it.)
func (p *plan) same(st *unix.Stat_t) bool {
	return st.Dev == p.st.Dev && st.Ino == p.st.Ino && st.Size == p.st.Size && st.Mtim == p.st.Mtim
}

// noRenameat2 reports a file system or kernel without renameat2's flags.
func noRenameat2(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)
}

// exchange swaps the temporary file and the target, then checks the file
// now under the temporary name: the file read is removed, anything else
// (another program replaced the target since the check) is put back.
func (p *plan) exchange() error {
	err := renameExchange(p.dfd, p.tmp, p.base)
	if noRenameat2(err) {
		if err := unix.Renameat(p.dfd, p.tmp, p.dfd, p.base); err != nil {
			return err
		}
		p.tmp = ""
		return nil
	}
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(p.dfd, p.tmp, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || !p.same(&st) {
		if renameExchange(p.dfd, p.tmp, p.base) != nil {
			// The other program's file stays under the temporary name, so
			// it is not removed with it.
			p.tmp = ""
			return fmt.Errorf("%w while being written (by another program), whose version could not be put back", ErrChanged)
		}
		return fmt.Errorf("%w while being written (by another program)", ErrChanged)
	}
	unix.Unlinkat(p.dfd, p.tmp, 0)
	p.tmp = ""
	return nil
}

// remove deletes the target, first moving it aside to check that it is the
// file that was read.
func (p *plan) remove() error {
	aside := tempName(p.base)
	err := renameNoReplace(p.dfd, p.base, aside)
	if noRenameat2(err) {
		return unix.Unlinkat(p.dfd, p.base, 0)
	}
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(p.dfd, aside, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || !p.same(&st) {
		renameNoReplace(p.dfd, aside, p.base)
		return fmt.Errorf("%w while being written (by another program)", ErrChanged)
	}
	return unix.Unlinkat(p.dfd, aside, 0)
}

// rollback undoes a commit: the old file back with its metadata, or a new
// file removed.
func (p *plan) rollback() error {
	if !p.committed {
		return nil
	}
	if !p.existed {
		return unix.Unlinkat(p.dfd, p.base, 0)
	}
	name := tempName(p.base)
	fd, err := unix.Openat(p.dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	_, err = f.Write(p.old)
	if err == nil {
		err = p.copyMetadata(fd, Options{Force: true}, &Report{})
	}
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	if err == nil {
		err = unix.Renameat(p.dfd, name, p.dfd, p.base)
	}
	if err != nil {
		unix.Unlinkat(p.dfd, name, 0)
		return fmt.Errorf("restoring %s: %w", p.rel, err)
	}
	return nil
}

// discard removes what prepare left: the temporary file, new folders, the
// folder's descriptor.
func (p *plan) discard() {
	if p.tmp != "" {
		unix.Unlinkat(p.dfd, p.tmp, 0)
		p.tmp = ""
	}
	if p.dir != nil {
		p.dir.Close()
		p.dir = nil
	}
	p.removeNewDirs()
}

func (p *plan) finish() {
	if p.dir != nil {
		p.dir.Close()
		p.dir = nil
	}
}

// removeNewDirs removes the folders prepare created, innermost first, as
// long as they are empty.
func (p *plan) removeNewDirs() {
	if p.newDir == "" {
		return
	}
	for d := filepath.Dir(p.c.Path); ; d = filepath.Dir(d) {
		name, err := p.g.Name(d)
		if err != nil || p.g.FS().Remove(name) != nil || d == p.newDir {
			break
		}
	}
	p.newDir = ""
}
