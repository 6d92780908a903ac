package unidiff

import (
	"cmp"
	"fmt"
	"io/fs"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Section is one file of a patch with the names it is applied under.
type Section struct {
	*gitdiff.File
	OldName, NewName string
}

// Sections names each file of the patch and refuses the entries
// apply_patch cannot write (links, submodules) before anything is read.
// A traditional file's a/ or b/ is read against the checkout and against
// what earlier sections create or delete: path confines a name (two names
// of one file give one path) and exists says whether a path is there now.
func Sections(files []File, path func(name string) (string, error), exists func(path string) bool) ([]Section, error) {
	state := map[string]bool{} // path -> exists after the sections so far
	named := func(rel string) bool {
		abs, err := path(rel)
		if err != nil {
			return false
		}
		if v, ok := state[abs]; ok {
			return v
		}
		return exists(abs)
	}
	mark := func(rel string, v bool) {
		if abs, err := path(rel); err == nil {
			state[abs] = v
		}
	}
	secs := make([]Section, 0, len(files))
	for _, pf := range files {
		f, raw := pf.File, pf.Raw
		s := Section{File: f, OldName: f.OldName, NewName: f.NewName}
		if !pf.Git {
			// gitdiff gives a traditional file one name (both, for a change)
			name, err := pickName(cmp.Or(f.NewName, f.OldName), raw, f.IsNew, named)
			if err != nil {
				return nil, err
			}
			switch {
			case f.IsNew:
				s.NewName = name
			case f.IsDelete:
				s.OldName = name
			default:
				s.OldName, s.NewName = name, name
			}
		}
		// A prefix and an absolute path ("a//tmp/f.go"): the parser drops
		// the path's leading slash, which is put back so the name reads as
		// the absolute path it is.
		if s.OldName != "" && absoluteHeader(raw[0]) {
			s.OldName = "/" + strings.TrimLeft(s.OldName, "/")
		}
		if s.NewName != "" && absoluteHeader(raw[1]) {
			s.NewName = "/" + strings.TrimLeft(s.NewName, "/")
		}
		if err := checkModes(f, cmp.Or(s.NewName, s.OldName)); err != nil {
			return nil, err
		}
		switch {
		case f.IsDelete:
			mark(s.OldName, false)
		case f.IsNew || f.IsCopy:
			mark(s.NewName, true)
		case f.IsRename:
			mark(s.OldName, false)
			mark(s.NewName, true)
		}
		secs = append(secs, s)
	}
	return secs, nil
}

// pickName reads a traditional diff's name, whose a/ or b/ may be the
// diff's prefix or a real folder. The prefix is dropped unless only the
// name with it exists; if both exist, only the usual "--- a/… +++ b/…"
// form says it is a prefix, and anything else is refused.
func pickName(name string, raw [2]string, creating bool, exists func(string) bool) (string, error) {
	if (!strings.HasPrefix(name, "a/") && !strings.HasPrefix(name, "b/")) || len(name) == 2 {
		return name, nil
	}
	bare := name[2:]
	conventional := prefixed(raw[0], "a/") && prefixed(raw[1], "b/")
	withPrefix, without := exists(name), exists(bare)
	why := "both exist"
	if creating {
		// a new file exists under neither name; the name is unclear only
		// if the folder the prefix names is there
		withPrefix, without = exists(name[:1]), true
		why = "a folder " + name[:1] + " exists"
	}
	switch {
	case withPrefix && without && !conventional:
		return "", fmt.Errorf("the patch names %s, which could mean %s or %s (%s), so nothing was written: "+
			"give a git-style diff (a \"diff --git a/PATH b/PATH\" line before ---/+++) or name the old file a/PATH and the new one b/PATH",
			name, name, bare, why)
	case withPrefix && !without:
		return name, nil
	}
	return bare, nil
}

// absoluteHeader reports whether a ---/+++ name as written is a diff
// prefix followed by an absolute path.
func absoluteHeader(raw string) bool {
	raw = strings.TrimPrefix(raw, `"`)
	return strings.HasPrefix(raw, "a//") || strings.HasPrefix(raw, "b//")
}

// prefixed reports whether a header name has the prefix the usual form
// gives that side; /dev/null fits either side.
func prefixed(raw, prefix string) bool {
	raw = strings.TrimPrefix(raw, `"`)
	return raw == "/dev/null" || strings.HasPrefix(raw, prefix)
}

// Git's file types in a patch's mode lines.
const (
	gitTypeMask   = 0o170000
	gitRegular    = 0o100000
	gitSymlink    = 0o120000
	gitSubmodule  = 0o160000
	gitExecutable = 0o100
)

// checkModes refuses a patch entry that is not a regular file in git's
// terms: apply_patch writes file contents, and a link written as a file
// (its target as text) would be wrong.
func checkModes(f *gitdiff.File, name string) error {
	for _, m := range []fs.FileMode{f.OldMode, f.NewMode} {
		switch m & gitTypeMask {
		case 0, gitRegular:
		case gitSymlink:
			return fmt.Errorf("the patch says %s is a symbolic link (mode 120000); apply_patch writes regular files only, so nothing was written: "+
				"make or change the link with a command (ln -sf), and leave it out of the patch", name)
		case gitSubmodule:
			return fmt.Errorf("the patch says %s is a submodule (mode 160000); apply_patch changes files, not submodules, so nothing was written: "+
				"update the submodule with git, and leave it out of the patch", name)
		default:
			return fmt.Errorf("the patch gives %s mode %o, which is not a regular file's, so nothing was written", name, uint32(m))
		}
	}
	return nil
}

// ModeChange reports whether a git entry sets the file's mode (a new file's
// mode line, or old mode/new mode lines that differ) and if so whether the
// new mode is executable.
func ModeChange(f *gitdiff.File) (exec, change bool) {
	if f.NewMode == 0 || !f.IsNew && f.NewMode == f.OldMode {
		return false, false
	}
	return f.NewMode&gitExecutable != 0, true
}

// WithExec turns a file's permission executable by those who may read it,
// or not executable by anyone, so a private file stays private.
func WithExec(perm fs.FileMode, exec bool) fs.FileMode {
	if exec {
		return perm | (perm&0o444)>>2
	}
	return perm &^ 0o111
}

// parsePatch parses a patch and reports which files had a git header and,
