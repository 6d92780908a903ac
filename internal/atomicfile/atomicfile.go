// Package atomicfile writes files so that a reader sees either the old bytes
// or the new ones, never a half-written file: data goes to a temporary file in
// the same folder, is synced, takes the old file's mode, and is renamed over
// the target. It also applies a set of such writes all or nothing.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data atomically. An existing file keeps its mode
// (perm is used for a new file); missing parent folders are created when
// mkdirs is true. A symlink at path is written through to its target so the
// link survives.
func Write(path string, data []byte, perm fs.FileMode, mkdirs bool) error {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	if info, err := os.Stat(path); err == nil {
		if info.IsDir() {
			return fmt.Errorf("%s is a folder, not a file", path)
		}
		perm = info.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(path)
	if mkdirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	// The temporary name carries the target's for whoever finds one left
	// by a crash, unless that would exceed the 255-byte name limit.
	prefix := "." + filepath.Base(path) + ".tmp-"
	if len(prefix) > 200 {
		prefix = ".atomicfile.tmp-"
	}
	tmp, err := os.CreateTemp(dir, prefix+"*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	return nil
}

// Change is one file's new content in WriteAll, or its removal.
type Change struct {
	Path string
	Data []byte
	// Perm is used when the file does not exist yet.
	Perm fs.FileMode
	// Delete removes the file instead of writing it.
	Delete bool
}

// WriteAll applies every change or none: if any write fails, the files
// already written are put back as they were (or removed, if they were new),
// and the first error is returned.
func WriteAll(changes []Change) error {
	type backup struct {
		path    string
		data    []byte
		perm    fs.FileMode
		existed bool
	}
	backups := make([]backup, 0, len(changes))
	for _, c := range changes {
		data, err := os.ReadFile(c.Path)
		switch {
		case err == nil:
			perm := fs.FileMode(0o644)
			if info, serr := os.Stat(c.Path); serr == nil {
				perm = info.Mode().Perm()
			}
			backups = append(backups, backup{c.Path, data, perm, true})
		case errors.Is(err, fs.ErrNotExist):
			backups = append(backups, backup{c.Path, nil, 0, false})
		default:
			return fmt.Errorf("reading %s before writing: %w (no file was changed)", c.Path, err)
		}
	}
	newDirs := make([]string, len(changes)) // topmost folder each write created, or ""
	for i, c := range changes {
		if !c.Delete {
			newDirs[i] = firstMissing(filepath.Dir(c.Path))
		}
		perm := c.Perm
		if perm == 0 {
			perm = 0o644
		}
		var err error
		if c.Delete {
			err = os.Remove(c.Path)
		} else {
			err = Write(c.Path, c.Data, perm, true)
		}
		if err != nil {
			var restoreErrs []error
			for _, b := range backups[:i] {
				var rerr error
				if b.existed {
					rerr = Write(b.path, b.data, b.perm, true)
				} else if _, serr := os.Lstat(b.path); serr == nil {
					rerr = os.Remove(b.path)
				}
				if rerr != nil {
					restoreErrs = append(restoreErrs, rerr)
				}
			}
			for j := i; j >= 0; j-- {
				removeEmptyDirs(filepath.Dir(changes[j].Path), newDirs[j])
			}
			if len(restoreErrs) > 0 {
				return fmt.Errorf("writing %s: %w (and restoring earlier files failed: %v)", c.Path, err, errors.Join(restoreErrs...))
			}
			return fmt.Errorf("writing %s: %w (no file was changed)", c.Path, err)
		}
	}
	return nil
}

// firstMissing returns the topmost missing folder on the way to dir, or ""
// when dir exists.
func firstMissing(dir string) string {
	missing := ""
	for {
		if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
			return missing
		}
		missing = dir
		parent := filepath.Dir(dir)
		if parent == dir {
			return missing
		}
		dir = parent
	}
}

// removeEmptyDirs removes dir and its parents up to top, as long as they are
// empty: the folders a rolled-back write created.
func removeEmptyDirs(dir, top string) {
	if top == "" {
		return
	}
	for {
		if os.Remove(dir) != nil || dir == top {
			return
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return
		}
		dir = parent
	}
}
