package atomicfile_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/testenv"
)

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

func get(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// tree lists every entry under dir with its mode and content, so that two
// trees compare byte for byte.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		entry := rel + " " + info.Mode().String()
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			entry += " " + string(data)
		} else if info.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			entry += " -> " + target
		}
		out = append(out, entry)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestWriteNewFileUsesPerm(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new.txt")
	if err := atomicfile.Write(p, []byte("hello\n"), 0o600, false); err != nil {
		t.Fatal(err)
	}
	if get(t, p) != "hello\n" || mode(t, p) != 0o600 {
		t.Errorf("content %q mode %v, want hello and 0600", get(t, p), mode(t, p))
	}
	noTemps(t, dir)
}

func TestWriteKeepsExistingMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tool.sh")
	put(t, p, "#!/bin/sh\n", 0o755)
	if err := atomicfile.Write(p, []byte("#!/bin/sh\nexit 0\n"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	if mode(t, p) != 0o755 {
		t.Errorf("mode %v, want the old 0755 kept over the 0644 given", mode(t, p))
	}
	if get(t, p) != "#!/bin/sh\nexit 0\n" {
		t.Errorf("content %q", get(t, p))
	}
	noTemps(t, dir)
}

// A reader holding the old file sees the old bytes: the new content arrives
// by rename, never by rewriting in place.
func TestWriteReplacesByRename(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	put(t, p, "old", 0o644)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := atomicfile.Write(p, []byte("new"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	if old, _ := io.ReadAll(f); string(old) != "old" {
		t.Errorf("open handle reads %q, want old", old)
	}
	if get(t, p) != "new" {
		t.Errorf("content %q", get(t, p))
	}
}

func TestWriteThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real", "target.txt")
	put(t, target, "old\n", 0o640)
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink("real/target.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(link, []byte("new\n"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a file")
	}
	if get(t, target) != "new\n" || mode(t, target) != 0o640 {
		t.Errorf("target %q mode %v, want new and 0640", get(t, target), mode(t, target))
	}
	noTemps(t, dir)
}

func TestWriteMkdirs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "c.txt")
	if err := atomicfile.Write(p, []byte("x"), 0o644, false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("without mkdirs, a missing folder should fail with ErrNotExist, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("folders created without mkdirs")
	}
	if err := atomicfile.Write(p, []byte("x"), 0o644, true); err != nil {
		t.Fatal(err)
	}
	if get(t, p) != "x" {
		t.Errorf("content %q", get(t, p))
	}
}

func TestWriteFailuresLeaveNothing(t *testing.T) {
	dir := t.TempDir()
	put(t, filepath.Join(dir, "file"), "f", 0o644)
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	for _, p := range []string{
		filepath.Join(dir, "folder"),               // a folder
		filepath.Join(dir, "file", "under", "x"),   // parent is a file
		filepath.Join(dir, "missing", "deep", "x"), // mkdirs off
	} {
		if err := atomicfile.Write(p, []byte("x"), 0o644, false); err == nil {
			t.Errorf("Write(%s) succeeded", p)
		}
	}
	if err := atomicfile.Write(filepath.Join(dir, "file", "x"), []byte("x"), 0o644, true); err == nil {
		t.Errorf("Write under a regular file succeeded")
	}
	if got := tree(t, dir); strings.Join(got, "\n") != strings.Join(before, "\n") {
		t.Errorf("failed writes changed the folder:\n%v\nwant\n%v", got, before)
	}
}

// A failure after the temporary file exists (here: the data is over the
// process's file size limit) removes it and keeps the old content.
func TestWriteFailingMidwayRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "data.bin")
	put(t, p, "old", 0o644)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		testenv.Unavailable(t, "getrlimit", err)
	}
	limited := syscall.Rlimit{Cur: 1 << 20, Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limited); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	err := atomicfile.Write(p, make([]byte, 2<<20), 0o644, false)
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatalf("restoring the file size limit: %v", rerr)
	}
	if err == nil {
		t.Fatalf("a write over the file size limit succeeded")
	}
	if get(t, p) != "old" {
		t.Errorf("old content lost")
	}
	noTemps(t, dir)
}

func TestWriteAllAppliesEverything(t *testing.T) {
	dir := t.TempDir()
	a, gone := filepath.Join(dir, "a.txt"), filepath.Join(dir, "gone.txt")
	put(t, a, "a", 0o600)
	put(t, gone, "g", 0o644)
	created := filepath.Join(dir, "new", "sub", "n.txt")
	err := atomicfile.WriteAll([]atomicfile.Change{
		{Path: a, Data: []byte("A")},
		{Path: created, Data: []byte("N"), Perm: 0o640},
		{Path: gone, Delete: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if get(t, a) != "A" || mode(t, a) != 0o600 {
		t.Errorf("a.txt %q mode %v", get(t, a), mode(t, a))
	}
	if get(t, created) != "N" || mode(t, created) != 0o640 {
		t.Errorf("n.txt %q mode %v", get(t, created), mode(t, created))
	}
	if _, err := os.Stat(gone); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("gone.txt not deleted")
	}
	noTemps(t, dir)
}

func TestWriteAllDefaultPerm(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "d.txt")
	if err := atomicfile.WriteAll([]atomicfile.Change{{Path: p, Data: []byte("d")}}); err != nil {
		t.Fatal(err)
	}
	if mode(t, p) != 0o644 {
		t.Errorf("mode %v, want 0644 when Perm is 0", mode(t, p))
	}
}

// When a later change fails, earlier files are restored byte for byte (and
// mode), deleted files come back, new files and the folders made for them
// go away.
func TestWriteAllAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	b := filepath.Join(dir, "sub", "b.sh")
	del := filepath.Join(dir, "del.txt")
	put(t, a, "alpha\r\nwith \x00 bytes\xff", 0o640)
	put(t, b, "#!/bin/sh\n", 0o755)
	put(t, del, "keep me", 0o600)
	if err := os.Symlink("a.txt", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)

	err := atomicfile.WriteAll([]atomicfile.Change{
		{Path: a, Data: []byte("changed")},
		{Path: filepath.Join(dir, "fresh", "deep", "new.txt"), Data: []byte("new")},
		{Path: b, Data: []byte("#!/bin/sh\nrm -rf /\n")},
		{Path: del, Delete: true},
		{Path: filepath.Join(dir, "alias"), Data: []byte("through the link")},
		{Path: filepath.Join(dir, "blocker"), Data: []byte("a regular file")},
		{Path: filepath.Join(dir, "blocker", "x.txt"), Data: []byte("cannot")}, // parent is now a file
		{Path: filepath.Join(dir, "never.txt"), Data: []byte("n")},
	})
	if err == nil {
		t.Fatal("WriteAll succeeded with a change under a regular file")
	}
	if !strings.Contains(err.Error(), "writing "+filepath.Join(dir, "blocker", "x.txt")) || !strings.Contains(err.Error(), "no file was changed") {
		t.Errorf("error %q should name the failing path and say nothing changed", err)
	}
	if got := tree(t, dir); strings.Join(got, "\n") != strings.Join(before, "\n") {
		t.Errorf("after a failed WriteAll:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(before, "\n"))
	}
}

// A change that cannot even be read beforehand fails before anything is
// written.
func TestWriteAllUnreadableTargetFailsFirst(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	put(t, a, "a", 0o644)
	put(t, filepath.Join(dir, "blocker"), "b", 0o644)
	before := tree(t, dir)
	err := atomicfile.WriteAll([]atomicfile.Change{
		{Path: a, Data: []byte("A")},
		{Path: filepath.Join(dir, "blocker", "x.txt"), Data: []byte("x")},
	})
	if err == nil || !strings.Contains(err.Error(), "no file was changed") {
		t.Errorf("error %v should say no file was changed", err)
	}
	if got := tree(t, dir); strings.Join(got, "\n") != strings.Join(before, "\n") {
		t.Errorf("files changed: %v", got)
	}
}

func TestWriteAllDeleteMissingFails(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	put(t, a, "a", 0o644)
	err := atomicfile.WriteAll([]atomicfile.Change{
		{Path: a, Data: []byte("A")},
		{Path: filepath.Join(dir, "missing.txt"), Delete: true},
	})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("deleting a missing file: %v, want ErrNotExist", err)
	}
	if get(t, a) != "a" {
		t.Errorf("a.txt not restored: %q", get(t, a))
	}
}

func TestWriteAllEmpty(t *testing.T) {
	if err := atomicfile.WriteAll(nil); err != nil {
		t.Errorf("WriteAll(nil) = %v", err)
	}
}
