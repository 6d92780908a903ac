package atomicfile_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"golang.org/x/sys/unix"
)

// guarded returns a fresh root folder and its guard.
func guarded(t *testing.T) (string, *pathguard.Guard) {
	t.Helper()
	g, err := pathguard.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g.Root(), g
}

func write(g *pathguard.Guard, path, data string) error {
	_, err := atomicfile.Write(g, atomicfile.Change{Path: path, Data: []byte(data)}, atomicfile.Options{})
	return err
}

func put(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// wantFile fails unless the file at path holds content and, unless perm
// is 0, has those permissions.
func wantFile(t *testing.T, path, content string, perm fs.FileMode) {
	t.Helper()
	if got := testenv.ReadFile(t, path); got != content {
		t.Errorf("%s holds %q, want %q", filepath.Base(path), got, content)
	}
	if got := mode(t, path); perm != 0 && got != perm {
		t.Errorf("%s has mode %v, want %v", filepath.Base(path), got, perm)
	}
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && atomicfile.IsTemp(d.Name()) {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestWriteNewFileUsesPermAndUmask(t *testing.T) {
	dir, g := guarded(t)
	p := filepath.Join(dir, "new.txt")
	if _, err := atomicfile.Write(g, atomicfile.Change{Path: p, Data: []byte("hello\n"), Perm: 0o600}, atomicfile.Options{}); err != nil {
		t.Fatal(err)
	}
	wantFile(t, p, "hello\n", 0o600)
	// D11: a new file's mode is the umask's to decide.
	old := syscall.Umask(0o077)
	err := write(g, filepath.Join(dir, "private.txt"), "x")
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Join(dir, "private.txt")); m != 0o600 {
		t.Errorf("new file under umask 077 has mode %v, want 0600", m)
	}
	noTemps(t, dir)
}

func TestWriteKeepsExistingMode(t *testing.T) {
	dir, g := guarded(t)
	p := filepath.Join(dir, "tool.sh")
	put(t, p, "#!/bin/sh\n", 0o755)
	if _, err := atomicfile.Write(g, atomicfile.Change{Path: p, Data: []byte("#!/bin/sh\nexit 0\n"), Perm: 0o644}, atomicfile.Options{}); err != nil {
		t.Fatal(err)
	}
	if mode(t, p) != 0o755 {
		t.Errorf("mode %v, want the old 0755 kept over the 0644 given", mode(t, p))
	}
	wantFile(t, p, "#!/bin/sh\nexit 0\n", 0)
	noTemps(t, dir)
}

// D11: setuid, setgid and sticky bits, the owner and group, and extended
// attributes survive a replacement.
func TestWriteKeepsMetadata(t *testing.T) {
	dir, g := guarded(t)
	suid, sgid := filepath.Join(dir, "suid.sh"), filepath.Join(dir, "sgid.sh")
	put(t, suid, "a", 0o755)
	put(t, sgid, "a", 0o775)
	if err := os.Chmod(suid, 0o755|fs.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sgid, 0o775|fs.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	owned := filepath.Join(dir, "owned.txt")
	put(t, owned, "a", 0o640)
	chowned := os.Chown(owned, 65534, 65534) == nil
	tagged := filepath.Join(dir, "tagged.txt")
	put(t, tagged, "a", 0o644)
	if err := unix.Setxattr(tagged, "user.tag", []byte("kept"), 0); err != nil {
		testenv.Unavailable(t, "user extended attributes", err)
	}
	for _, p := range []string{suid, sgid, owned, tagged} {
		if err := write(g, p, "b"); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if info, _ := os.Stat(suid); info.Mode()&fs.ModeSetuid == 0 || info.Mode().Perm() != 0o755 {
		t.Errorf("setuid file now %v", info.Mode())
	}
	if info, _ := os.Stat(sgid); info.Mode()&fs.ModeSetgid == 0 || info.Mode().Perm() != 0o775 {
		t.Errorf("setgid file now %v", info.Mode())
	}
	if chowned {
		var st unix.Stat_t
		unix.Stat(owned, &st)
		if st.Uid != 65534 || st.Gid != 65534 {
			t.Errorf("owner now %d:%d, want 65534:65534 kept", st.Uid, st.Gid)
		}
	} else if os.Geteuid() == 0 {
		t.Error("root could not chown the fixture")
	}
	buf := make([]byte, 16)
	if n, err := unix.Getxattr(tagged, "user.tag", buf); err != nil || string(buf[:n]) != "kept" {
		t.Errorf("user.tag after the write: %q, %v", buf[:n], err)
	}
	noTemps(t, dir)
}

// D11: a hard-linked or read-only file is refused unless forced, and the
// forced write says what it did.
func TestWriteRefusesHardLinksAndReadOnly(t *testing.T) {
	dir, g := guarded(t)
	hard, other := filepath.Join(dir, "hard.txt"), filepath.Join(dir, "other-name.txt")
	put(t, hard, "old", 0o644)
	if err := os.Link(hard, other); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "ro.txt")
	put(t, ro, "old", 0o444)
	for _, c := range []struct {
		path string
		want error
		note string
	}{{hard, atomicfile.ErrHardLinks, "hard links"}, {ro, atomicfile.ErrReadOnly, "read-only"}} {
		err := write(g, c.path, "new")
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "force") {
			t.Errorf("%s: %v, want %v naming force", c.path, err, c.want)
		}
		if testenv.ReadFile(t, c.path) != "old" {
			t.Errorf("%s changed though refused", c.path)
		}
		rep, err := atomicfile.Write(g, atomicfile.Change{Path: c.path, Data: []byte("new")}, atomicfile.Options{Force: true})
		if err != nil {
			t.Fatalf("%s forced: %v", c.path, err)
		}
		if testenv.ReadFile(t, c.path) != "new" || len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], c.note) {
			t.Errorf("%s forced: content %q, notes %q", c.path, testenv.ReadFile(t, c.path), rep.Notes)
		}
	}
	if mode(t, ro) != 0o444 {
		t.Errorf("forced read-only file lost its mode: %v", mode(t, ro))
	}
	if testenv.ReadFile(t, other) != "old" {
		t.Errorf("the other hard link changed; it should keep the old content as the note says")
	}
}

// Compare and swap: a file that holds something other than what the caller
// read is not replaced.
func TestWriteExpect(t *testing.T) {
	dir, g := guarded(t)
	p := filepath.Join(dir, "f.txt")
	put(t, p, "now", 0o644)
	_, err := atomicfile.Write(g, atomicfile.Change{Path: p, Data: []byte("x"), Expect: []byte("then"), Expected: true}, atomicfile.Options{})
	if !errors.Is(err, atomicfile.ErrChanged) || testenv.ReadFile(t, p) != "now" {
		t.Errorf("stale expectation: %v, content %q", err, testenv.ReadFile(t, p))
	}
	_, err = atomicfile.Write(g, atomicfile.Change{Path: p, Data: []byte("x"), Expected: true}, atomicfile.Options{})
	if !errors.Is(err, atomicfile.ErrExists) {
		t.Errorf("expected missing, file exists: %v", err)
	}
	if _, err := atomicfile.Write(g, atomicfile.Change{Path: p, Data: []byte("x"), Expect: []byte("now"), Expected: true}, atomicfile.Options{}); err != nil || testenv.ReadFile(t, p) != "x" {
		t.Errorf("matching expectation: %v, content %q", err, testenv.ReadFile(t, p))
	}
}

// D13: a temporary file a dead process left is swept the first time this
// process writes in its folder; a live process's is left alone. Item 26:
// a name carries its owner's boot and PID namespace (proc.Owner), and only
// files whose owner proc.OwnerGone says is gone are swept, so another
// namespace's live file (its pid not running here) is kept; a file named
// the old way (pid only) is kept unless it is a day old.
func TestStaleTempFilesAreSwept(t *testing.T) {
	dir, g := guarded(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	here := strings.TrimSuffix(proc.Owner(), "-"+strconv.Itoa(os.Getpid())) // boot-namespace
	stale := filepath.Join(dir, fmt.Sprintf(".big.txt.tmp-%s-%d-0123456789ab", here, dead))
	live := filepath.Join(dir, fmt.Sprintf(".big.txt.tmp-%s-%d-0123456789ab", here, os.Getppid()))
	otherNS := filepath.Join(dir, fmt.Sprintf(".big.txt.tmp-%s-%d-0123456789ab", here+"1", dead))
	oldName := filepath.Join(dir, fmt.Sprintf(".big.txt.tmp-%d-0123456789ab", dead))
	oldNameDayOld := filepath.Join(dir, fmt.Sprintf(".old.txt.tmp-%d-0123456789ab", dead))
	user := filepath.Join(dir, ".notes.tmp-draft")
	for _, p := range []string{stale, live, otherNS, oldName, oldNameDayOld, user} {
		put(t, p, "partial", 0o600)
		old := time.Now().Add(-time.Hour)
		if p == oldNameDayOld {
			old = time.Now().Add(-25 * time.Hour)
		}
		os.Chtimes(p, old, old)
		if p != user && !atomicfile.IsTemp(filepath.Base(p)) {
			t.Errorf("%s is not recognised as a temporary file", filepath.Base(p))
		}
	}
	if err := write(g, filepath.Join(dir, "a.txt"), "a"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{stale, oldNameDayOld} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: a dead process's temporary file was not swept", filepath.Base(p))
		}
	}
	for _, p := range []string{live, otherNS, oldName, user} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}

// A reader holding the old file sees the old bytes: the new content arrives
// by rename, never by rewriting in place.
func TestWriteReplacesByRename(t *testing.T) {
	dir, g := guarded(t)
	p := filepath.Join(dir, "f")
	put(t, p, "old", 0o644)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := write(g, p, "new"); err != nil {
		t.Fatal(err)
	}
	if old, _ := io.ReadAll(f); string(old) != "old" {
		t.Errorf("open handle reads %q, want old", old)
	}
	wantFile(t, p, "new", 0)
}

// A link inside the root is written through once resolved; an unresolved
// link (the folder changed under the caller) is refused, never followed.
func TestWriteThroughSymlink(t *testing.T) {
	dir, g := guarded(t)
	target := filepath.Join(dir, "real", "target.txt")
	put(t, target, "old\n", 0o640)
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink("real/target.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := write(g, link, "new\n"); !errors.Is(err, pathguard.ErrPathChanged) {
		t.Errorf("writing an unresolved link: %v", err)
	}
	resolved, err := g.Resolve("link.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := write(g, resolved, "new\n"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a file")
	}
	wantFile(t, target, "new\n", 0o640)
	noTemps(t, dir)
}

func TestWriteMakesParents(t *testing.T) {
	dir, g := guarded(t)
	p := filepath.Join(dir, "a", "b", "c.txt")
	if err := write(g, p, "x"); err != nil {
		t.Fatal(err)
	}
	wantFile(t, p, "x", 0)
}

func TestWriteFailuresLeaveNothing(t *testing.T) {
	dir, g := guarded(t)
	put(t, filepath.Join(dir, "file"), "f", 0o644)
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		testenv.Unavailable(t, "FIFOs", err)
	}
	before := testenv.Snapshot(t, dir)
	for _, p := range []string{
		filepath.Join(dir, "folder"),             // a folder
		filepath.Join(dir, "file", "under", "x"), // parent is a file
		filepath.Join(dir, "file", "x"),
		filepath.Join(dir, "pipe"), // D14: a named pipe is not replaced
		dir,                        // the root itself
		filepath.Join(filepath.Dir(dir), "outside.txt"),
	} {
		if err := write(g, p, "x"); err == nil {
			t.Errorf("Write(%s) succeeded", p)
		}
	}
	if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, dir)); d != "" {
		t.Errorf("failed writes changed the folder: %s", d)
	}
}

// A failure after the temporary file exists (here: the data is over the
// process's file size limit) removes it and keeps the old content.
func TestWriteFailingMidwayRemovesTemp(t *testing.T) {
	dir, g := guarded(t)
	p := filepath.Join(dir, "data.bin")
	put(t, p, "old", 0o644)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		testenv.Unavailable(t, "getrlimit", err)
	}
	limited := syscall.Rlimit{Cur: 1 << 20, Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limited); err != nil {
		testenv.Unavailable(t, "setrlimit", err)
	}
	err := write(g, p, string(make([]byte, 2<<20)))
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatalf("restoring the file size limit: %v", rerr)
	}
	if err == nil {
		t.Fatalf("a write over the file size limit succeeded")
	}
	if testenv.ReadFile(t, p) != "old" {
		t.Errorf("old content lost")
	}
	noTemps(t, dir)
}

func TestWriteAllAppliesEverything(t *testing.T) {
	dir, g := guarded(t)
	a, gone := filepath.Join(dir, "a.txt"), filepath.Join(dir, "gone.txt")
	put(t, a, "a", 0o600)
	put(t, gone, "g", 0o644)
	created := filepath.Join(dir, "new", "sub", "n.txt")
	_, err := atomicfile.WriteAll(g, []atomicfile.Change{
		{Path: a, Data: []byte("A")},
		{Path: created, Data: []byte("N"), Perm: 0o640},
		{Path: gone, Delete: true},
	}, atomicfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantFile(t, a, "A", 0o600)
	wantFile(t, created, "N", 0o640)
	if _, err := os.Stat(gone); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("gone.txt not deleted")
	}
	noTemps(t, dir)
}

// When a later change fails, earlier files are restored byte for byte (and
// mode), deleted files come back, new files and the folders made for them
// go away.
func TestWriteAllAllOrNothing(t *testing.T) {
	dir, g := guarded(t)
	a := filepath.Join(dir, "a.txt")
	b := filepath.Join(dir, "sub", "b.sh")
	del := filepath.Join(dir, "del.txt")
	put(t, a, "alpha\r\nwith \x00 bytes\xff", 0o640)
	put(t, b, "#!/bin/sh\n", 0o755)
	put(t, del, "keep me", 0o600)
	if err := os.Symlink("a.txt", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	before := testenv.Snapshot(t, dir)

	_, err := atomicfile.WriteAll(g, []atomicfile.Change{
		{Path: a, Data: []byte("changed")},
		{Path: filepath.Join(dir, "fresh", "deep", "new.txt"), Data: []byte("new")},
		{Path: b, Data: []byte("#!/bin/sh\nrm -rf /\n")},
		{Path: del, Delete: true},
		{Path: filepath.Join(dir, "blocker"), Data: []byte("a regular file")},
		{Path: filepath.Join(dir, "blocker", "x.txt"), Data: []byte("cannot")}, // parent is now a file
		{Path: filepath.Join(dir, "never.txt"), Data: []byte("n")},
	}, atomicfile.Options{})
	if err == nil {
		t.Fatal("WriteAll succeeded with a change under a regular file")
	}
	if !strings.Contains(err.Error(), "blocker") || !strings.Contains(err.Error(), "no file was changed") {
		t.Errorf("error %q should name the failing path and say nothing changed", err)
	}
	if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, dir)); d != "" {
		t.Errorf("a failed WriteAll changed the folder: %s", d)
	}
	noTemps(t, dir)
}

// A rename that fails after earlier ones succeeded puts them back. Here the
// second target is replaced by a folder between prepare and commit, as a
// racing program might.
func TestWriteAllRollsBackAfterAFailedRename(t *testing.T) {
	dir, g := guarded(t)
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	put(t, a, "a", 0o640)
	put(t, b, "b", 0o644)
	atomicfile.BeforeCommitForTest = func(i int) {
		if i == 1 {
			os.Remove(b)
			os.Mkdir(b, 0o755)
		}
	}
	defer func() { atomicfile.BeforeCommitForTest = nil }()
	_, err := atomicfile.WriteAll(g, []atomicfile.Change{{Path: a, Data: []byte("A")}, {Path: b, Data: []byte("B")}}, atomicfile.Options{})
	if !errors.Is(err, atomicfile.ErrChanged) {
		t.Fatalf("WriteAll: %v, want ErrChanged", err)
	}
	wantFile(t, a, "a", 0o640)
	noTemps(t, dir)
}

func TestWriteAllDeleteMissingFails(t *testing.T) {
	dir, g := guarded(t)
	a := filepath.Join(dir, "a.txt")
	put(t, a, "a", 0o644)
	_, err := atomicfile.WriteAll(g, []atomicfile.Change{
		{Path: a, Data: []byte("A")},
		{Path: filepath.Join(dir, "missing.txt"), Delete: true},
	}, atomicfile.Options{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("deleting a missing file: %v, want ErrNotExist", err)
	}
	if testenv.ReadFile(t, a) != "a" {
		t.Errorf("a.txt not restored: %q", testenv.ReadFile(t, a))
	}
}

func TestWriteAllEmpty(t *testing.T) {
	_, g := guarded(t)
	if _, err := atomicfile.WriteAll(g, nil, atomicfile.Options{}); err != nil {
		t.Errorf("WriteAll(nil) = %v", err)
	}
}
