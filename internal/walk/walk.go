// Package walk is the one policy for listing the files of a checkout the
// way a developer expects a tool to see them. Structural search (astgrep)
// uses it; the language servers' marker scan and the code graph are meant
// to.
//
// A walk goes through a *pathguard.Guard, so nothing outside the run's
// root is read, and leaves out:
//
//   - what .gitignore files ignore: every .gitignore from the guard's root
//     down (those of the folders between the root and the start folder
//     too), with git's precedence — a later line beats an earlier one and
//     a deeper file beats a shallower one, so a nested `!name` re-includes
//     a file, but nothing inside an ignored folder can be re-included,
//     because an ignored folder is never entered;
//   - hidden entries (names starting with "."), unless Options.HiddenFiles
//     asks for hidden files (hidden folders are never entered);
//   - folders of code someone else maintains or a tool generated
//     (DefaultSkipDirs, plus Options.SkipDirs);
//   - symbolic links, to files and to folders alike (so a link loop cannot
//     trap a walk), and anything that is not a regular file or a folder;
//   - a folder already walked (a bind mount of an ancestor).
//
// Files over Options.MaxFileSize are not left out silently: they are
// reported with Entry.TooLarge set, for the caller to list as skipped.
// Folders that cannot be read are left out, as grep -r does; the start
// folder failing to open is an error.
//
// The start folder is walked even when it is itself hidden, in a skipped
// folder or ignored: a folder named explicitly is searched. When the start
// folder is ignored by the .gitignore files above it, those files do not
// apply inside it (their patterns would ignore everything in it).
//
// Patterns are matched by go-git's gitignore matcher. Lines are read as
// git reads them: a UTF-8 byte order mark and a line's trailing CR are
// dropped, `#` starts a comment, trailing spaces are dropped unless
// escaped with a backslash, and `[!...]` is a negated class as well as
// `[^...]`. Neither .git/info/exclude nor core.excludesFile is read (the
// first may sit outside the root, in a worktree's common folder, and the
// second belongs to the user, not the checkout).
//
// The examples show its three uses: listing a search's files (Files), a
// marker scan with folders (Walk), and a watcher's question about a path
// that may be gone (Excluded).
package walk

import (
	"bytes"
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// DefaultSkipDirs are folder names a walk never enters: vendored
// dependencies and generated caches.
var DefaultSkipDirs = []string{"vendor", "node_modules", "bower_components", "__pycache__", "site-packages"}

// SkipDir and SkipAll, returned by a Walk callback, leave out the folder
// reported (or, for a file, the rest of its folder) and stop the walk.
var (
	SkipDir = fs.SkipDir
	SkipAll = fs.SkipAll
)

// MaxIgnoreBytes bounds a .gitignore read into memory; a larger one is
// not read.
const MaxIgnoreBytes = 1 << 20

// Options tune a walk. The zero value lists every regular file the policy
// keeps, of any size.
type Options struct {
	// SkipDirs are more folder names never entered (besides
	// DefaultSkipDirs), such as "target" or "build".
	SkipDirs []string
	// HiddenFiles reports files whose name starts with "." (.clangd,
	// .eslintrc.json); hidden folders are still never entered.
	HiddenFiles bool
	// Want, when set, is asked about every file name before the file is
	// looked at further; a file it refuses is left out unreported (no
	// stat, no size check).
	Want func(name string) bool
	// MaxFileSize, when positive, marks larger files TooLarge.
	MaxFileSize int64
	// MaxDepth, when positive, leaves out folders more than MaxDepth
	// levels below the start folder (its own folders are level 1), and so
	// everything in them; files at level MaxDepth+1 are still reported.
	MaxDepth int
	// Dirs reports every folder before it is entered (the start folder
	// excepted); the callback returning SkipDir leaves it out.
	Dirs bool
}

// Entry is one file (or, with Options.Dirs, one folder) a walk reports.
type Entry struct {
	// Abs is the absolute path, beneath the guard's root.
	Abs string
	// Rel is Abs relative to the guard's root, slash-separated.
	Rel string
	// Dir is set for a folder.
	Dir bool
	// Depth is 1 for an entry of the start folder, 2 one level below...
	Depth int
	// Info describes a file (lstat; Sys() is a *syscall.Stat_t on Unix);
	// nil for a folder.
	Info fs.FileInfo
	// TooLarge marks a file over Options.MaxFileSize: reported so the
	// caller can list it as skipped, and not to be read.
	TooLarge bool
}

// Walk calls fn for every file under start (an absolute folder inside
// g's root) the policy keeps, folder by folder, in name order within a
// folder. It stops at the first error fn returns other than SkipDir and
// SkipAll and returns it, and returns ctx's error if ctx ends.
func Walk(ctx context.Context, g *pathguard.Guard, start string, opts Options, fn func(Entry) error) error {
	w, err := newWalker(ctx, g, start, opts, fn)
	if err != nil {
		return err
	}
	err = w.walkDir(w.start, w.startComps, 0)
	if err == SkipAll || err == SkipDir {
		err = nil
	}
	return err
}

// Files lists the files Walk reports, sorted by Rel.
func Files(ctx context.Context, g *pathguard.Guard, start string, opts Options) ([]Entry, error) {
	opts.Dirs = false
	var out []Entry
	err := Walk(ctx, g, start, opts, func(e Entry) error {
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Rel, b.Rel) })
	return out, nil
}

// Excluded reports whether a walk from g's root would leave abs out by
// the policy's name rules: a hidden or skipped folder on the way, or a
// .gitignore pattern (of any folder from the root down) ignoring abs or a
// folder above it. isDir says whether abs is a folder. It does not look at
// abs itself (it may be gone: a watcher's delete event), so Want, links,
// the file type and the size limit are not considered. The root itself is
// never excluded.
func Excluded(g *pathguard.Guard, abs string, isDir bool, opts Options) bool {
	name, err := g.Name(filepath.Clean(abs))
	if err != nil || name == "." {
		return err != nil
	}
	comps := strings.Split(filepath.ToSlash(name), "/")
	w := &walker{g: g, opts: opts, skip: skipSet(opts.SkipDirs)}
	dir := g.Root()
	for i, c := range comps {
		last := i == len(comps)-1
		w.pushIgnore(dir, comps[:i])
		asDir := !last || isDir
		if strings.HasPrefix(c, ".") && (asDir || !opts.HiddenFiles) {
			return true
		}
		if asDir && w.skip[c] {
			return true
		}
		if w.ignored(comps[:i+1], asDir) {
			return true
		}
		dir = filepath.Join(dir, c)
	}
	return false
}

type walker struct {
	ctx        context.Context
	g          *pathguard.Guard
	opts       Options
	fn         func(Entry) error
	skip       map[string]bool
	root       string
	start      string
	startComps []string
	pats       []gitignore.Pattern // in increasing priority
	seen       map[dirID]bool
	buf        []string // scratch path for matching
}

type dirID struct{ dev, ino uint64 }

func skipSet(extra []string) map[string]bool {
	m := make(map[string]bool, len(DefaultSkipDirs)+len(extra))
	for _, d := range DefaultSkipDirs {
		m[d] = true
	}
	for _, d := range extra {
		m[d] = true
	}
	return m
}

func newWalker(ctx context.Context, g *pathguard.Guard, start string, opts Options, fn func(Entry) error) (*walker, error) {
	start = filepath.Clean(start)
	name, err := g.Name(start)
	if err != nil {
		return nil, err
	}
	w := &walker{ctx: ctx, g: g, opts: opts, fn: fn, skip: skipSet(opts.SkipDirs), root: g.Root(), start: start, seen: map[dirID]bool{}}
	if name != "." {
		w.startComps = slices.Clip(strings.Split(filepath.ToSlash(name), "/"))
		// The .gitignore files of the folders above start apply too.
		dir := w.root
		for i, c := range w.startComps {
			w.pushIgnore(dir, w.startComps[:i])
			dir = filepath.Join(dir, c)
		}
		// A folder named explicitly is walked even if it is ignored.
		if w.ignored(w.startComps, true) {
			w.pats = nil
		}
	}
	return w, nil
}

// pushIgnore appends the patterns of dir's .gitignore (dir's components
// below the root are comps) and reports whether there was one.
func (w *walker) pushIgnore(dir string, comps []string) bool {
	data, _, err := w.g.ReadFile(filepath.Join(dir, ".gitignore"), MaxIgnoreBytes)
	if err != nil {
		return false
	}
	before := len(w.pats)
	w.pats = appendPatterns(w.pats, data, comps)
	return len(w.pats) > before
}

// appendPatterns parses a .gitignore's lines as git reads them.
func appendPatterns(ps []gitignore.Pattern, data []byte, domain []string) []gitignore.Pattern {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for line := range bytes.Lines(data) {
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) == 0 || line[0] == '#' || len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(negatedClasses(string(line)), domain))
	}
	return ps
}

// negatedClasses spells git's `[!...]` as `[^...]`, the form Go's
// filepath.Match (under go-git's matcher) understands.
func negatedClasses(p string) string {
	if !strings.Contains(p, "[!") {
		return p
	}
	b := []byte(p)
	for i := 0; i+1 < len(b); i++ {
		switch {
		case b[i] == '\\':
			i++ // an escaped character is literal
		case b[i] == '[' && b[i+1] == '!':
			b[i+1] = '^'
		}
	}
	return string(b)
}

// ignored reports whether the patterns ignore path (components below the
// root): the last pattern that matches decides.
func (w *walker) ignored(path []string, isDir bool) bool {
	for i := len(w.pats) - 1; i >= 0; i-- {
		switch w.pats[i].Match(path, isDir) {
		case gitignore.Exclude:
			return true
		case gitignore.Include:
			return false
		}
	}
	return false
}

func (w *walker) walkDir(abs string, comps []string, depth int) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	d, err := w.g.OpenDir(abs)
	if err != nil {
		if depth == 0 {
			return err
		}
		return nil // an unreadable folder is left out, like grep -r does
	}
	if info, err := d.Stat(); err == nil {
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			id := dirID{uint64(st.Dev), uint64(st.Ino)}
			if w.seen[id] {
				d.Close()
				return nil
			}
			w.seen[id] = true
		}
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil && len(entries) == 0 {
		if depth == 0 {
			return err
		}
		return nil
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	npats := len(w.pats)
	defer func() { w.pats = w.pats[:npats] }()
	for _, e := range entries {
		if e.Name() == ".gitignore" && e.Type().IsRegular() {
			w.pushIgnore(abs, comps)
			break
		}
	}
	prefix := abs + "/"
	if abs == "/" {
		prefix = "/"
	}
	relOff := len(w.root) + 1
	if w.root == "/" {
		relOff = 1
	}
	for i, e := range entries {
		if i&255 == 255 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		name := e.Name()
		typ := e.Type()
		isDir := typ.IsDir()
		if strings.HasPrefix(name, ".") && (isDir || !w.opts.HiddenFiles) {
			continue
		}
		if typ&fs.ModeSymlink != 0 || !isDir && !typ.IsRegular() {
			continue
		}
		if isDir && (w.skip[name] || w.opts.MaxDepth > 0 && depth+1 > w.opts.MaxDepth) {
			continue
		}
		if !isDir && w.opts.Want != nil && !w.opts.Want(name) {
			continue
		}
		w.buf = append(append(w.buf[:0], comps...), name)
		if w.ignored(w.buf, isDir) {
			continue
		}
		ent := Entry{Abs: prefix + name, Dir: isDir, Depth: depth + 1}
		ent.Rel = ent.Abs[relOff:]
		if isDir {
			if w.opts.Dirs {
				switch err := w.fn(ent); err {
				case nil:
				case SkipDir:
					continue
				default:
					return err
				}
			}
			if err := w.walkDir(ent.Abs, slices.Clip(append(comps, name)), depth+1); err != nil {
				return err
			}
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone since the folder was read
		}
		ent.Info = info
		ent.TooLarge = w.opts.MaxFileSize > 0 && info.Size() > w.opts.MaxFileSize
		switch err := w.fn(ent); err {
		case nil:
		case SkipDir:
			return nil
		default:
			return err
		}
	}
	return nil
}
