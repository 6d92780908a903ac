// Package checkout is the folder package lsp's servers work in, as lsp
// names and confines its files: the root and the run's path guard; a
// server's path or URI resolved through the guard (a file outside the root
// is named, never read) and whether it is installed library code, whose
// hover text may be quoted all the same (N4); a file argument checked
// (ErrBadFile); the files an edit plan reads and writes (wsedit.Files);
// paths in a server's or a checker's text rewritten relative
// to the root; the folders holding a server's root markers. It knows the
// server table's markers, never a server.
package checkout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/internal/walk"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// ErrBadFile: the file is missing, a folder, or outside the root.
var ErrBadFile = errors.New("bad file argument")

// Checkout is the folder a run works in, as its results name it: the root,
// the path guard every path a server sends back is confined through, and
// the folders of files asked about (RelText). Package lsp plans and
// writes edits into it (wsedit.Checkout).
type Checkout struct {
	root  string // absolute, symlinks resolved
	roots []string
	// guard confines every path a server sends back before it is read,
	// quoted or written, and every file read to prepare a start; nil when
	// the root cannot be opened.
	guard *pathguard.Guard

	// dirs are the folders of files asked about, where RelText looks for a
	// file a server names from a folder other than the root.
	dirsMu sync.Mutex
	dirs   map[string]bool
}

// New returns the checkout at roots[0] (absolute, links resolved;
// any other root is another spelling of it) seen through guard, which is
// nil when the root cannot be opened.
func New(roots []string, guard *pathguard.Guard) *Checkout {
	return &Checkout{root: roots[0], roots: roots, guard: guard}
}

// WithGuard is the checkout seen through g, another guard of the same
// root (a shared server's own).
func (co *Checkout) WithGuard(g *pathguard.Guard) *Checkout {
	return &Checkout{root: co.root, roots: co.roots, guard: g}
}

// Guard is the run's path guard, nil when the root cannot be opened.
func (co *Checkout) Guard() *pathguard.Guard { return co.guard }

// Root returns the root, absolute.
func (co *Checkout) Root() string { return co.root }

// Rel returns path relative to the root for messages, or path itself when
// it lies outside.
func (co *Checkout) Rel(path string) string {
	for _, r := range co.roots {
		if rel, err := filepath.Rel(r, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return path
}

// RelText rewrites the paths under the root in text — a server's message,
// a checker's output line, a diagnostic — relative to the root, as every
// result names files: "/root/a.go" and "file:///root/a.go" become "a.go".
// The root itself stays named (a message may say what paths are relative
// to), as does a path outside it.
//
// A server may also name a file relative to a folder other than the root:
// gopls writes "shapes/a.go:7:6" — the file's folder and name — for
// root/shapes/a.go when the root is "shapes", and "sub/a.go" for
// root/pkg/sub/a.go. A relative path that is no file under the root but is
// one under the root's parent, or under a folder of a file asked about (or
// one above it), is rewritten to the path from the root.
func (co *Checkout) RelText(text string) string {
	for _, r := range co.roots {
		if !strings.Contains(text, r) {
			continue
		}
		text = replacePath(text, protocol.FileURI(r)+"/", "")
		text = replacePath(text, r+string(filepath.Separator), "")
	}
	if !strings.Contains(text, "/") || co.guard == nil {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range relPathToken.FindAllStringSubmatchIndex(text, -1) {
		if rel, ok := co.fromElsewhere(text[m[2]:m[3]]); ok {
			b.WriteString(text[last:m[2]])
			b.WriteString(rel)
			last = m[3]
		}
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// relPathToken is a relative path of at least two parts (group 1), at the
// start of text or after a character that is no part of a path.
var relPathToken = regexp.MustCompile(`(?:^|[^\w./~-])((?:[\w.~-]+/)+[\w.~-]*[\w~-])`)

// maxDirs bounds the folders RelText remembers.
const maxDirs = 1000

// NoteDir remembers the folder of a file asked about, for RelText.
func (co *Checkout) NoteDir(path string) {
	co.dirsMu.Lock()
	defer co.dirsMu.Unlock()
	if co.dirs == nil {
		co.dirs = map[string]bool{}
	}
	if len(co.dirs) < maxDirs {
		co.dirs[filepath.Dir(path)] = true
	}
}

// fromElsewhere finds the file under the root that tok, a relative path
// no file under the root has, names from another folder: the root's
// parent, or a remembered folder or one above it.
func (co *Checkout) fromElsewhere(tok string) (string, bool) {
	if strings.HasPrefix(tok, "/") {
		return "", false
	}
	exists := func(abs string) bool {
		if !co.InRoot(abs) || abs == co.root {
			return false
		}
		info, err := co.guard.Lstat(abs)
		return err == nil && !info.IsDir()
	}
	if exists(filepath.Join(co.root, tok)) {
		return "", false // already relative to the root
	}
	co.dirsMu.Lock()
	bases := []string{filepath.Dir(co.root)}
	for d := range co.dirs {
		bases = append(bases, d)
	}
	co.dirsMu.Unlock()
	slices.SortFunc(bases, func(a, b string) int { return cmp.Compare(len(b), len(a)) }) // deepest first
	seen := map[string]bool{}
	for _, d := range bases {
		for ; co.InRoot(d) || d == filepath.Dir(co.root); d = filepath.Dir(d) {
			if seen[d] {
				break
			}
			seen[d] = true
			if abs := filepath.Join(d, tok); exists(abs) {
				return co.Rel(abs), true
			}
			if d == filepath.Dir(co.root) {
				break
			}
		}
	}
	return "", false
}

// replacePath replaces prefix in text where it starts a path (not inside a
// longer one).
func replacePath(text, prefix, with string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, prefix)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(prefix)
		ok := i == 0 || !isPathByte(text[i-1])
		b.WriteString(text[:i])
		if ok {
			b.WriteString(with)
		} else {
			b.WriteString(prefix)
		}
		text = text[end:]
	}
}

// isPathByte reports whether c may be part of a file name or path.
func isPathByte(c byte) bool {
	return c == '/' || c == '.' || c == '-' || c == '_' || c == '~' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// InRoot reports whether path is the root or below it.
func (co *Checkout) InRoot(path string) bool {
	return co.Rel(path) != path || path == co.root
}

// CheckFile validates a file argument: absolute or root-relative, inside
// the root (after resolving symlinks), an existing regular file.
func (co *Checkout) CheckFile(at pathguard.Path) (string, error) {
	if at.IsZero() {
		return "", fmt.Errorf("%w: file is required", ErrBadFile)
	}
	file, err := co.guard.Of(at)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadFile, err)
	}
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(co.root, path)
	}
	path = filepath.Clean(path)
	if !co.InRoot(path) {
		return "", fmt.Errorf("%w: %s is outside the root %s; give a path inside it", ErrBadFile, file, co.root)
	}
	resolved, err := co.Confine(path)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadFile, err)
	}
	info, err := co.guard.Stat(resolved)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: %s does not exist (paths are relative to %s)", ErrBadFile, co.Rel(path), co.root)
	case err != nil:
		return "", fmt.Errorf("%w: %v", ErrBadFile, err)
	case info.IsDir():
		return "", fmt.Errorf("%w: %s is a folder; give a file", ErrBadFile, co.Rel(resolved))
	case !info.Mode().IsRegular():
		// A named pipe would block the open, here and in the server.
		return "", fmt.Errorf("%w: %s is not a regular file (%s); language servers read source files", ErrBadFile, co.Rel(resolved), info.Mode().Type())
	}
	return resolved, nil
}

// Confine resolves a path a server sent (or a caller gave) through the
// run's path guard: the real file inside the root, or an error saying it
// lies outside. Lexical checks are not enough: root/ext may be a symlink
// to a folder outside the root.
func (co *Checkout) Confine(path string) (string, error) {
	if co.guard == nil {
		return "", fmt.Errorf("the root %s cannot be opened", co.root)
	}
	return co.guard.Resolve(co.Canonical(path))
}

// Canonical maps a resolved path to the root spelling used everywhere.
func (co *Checkout) Canonical(path string) string {
	for _, r := range co.roots {
		if rel, err := filepath.Rel(r, path); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join(co.root, rel)
		}
	}
	return path
}

// NearestMarker walks from dir up to the supervisor root and returns the
// first folder holding one of markers, and the marker found. When the
// markers there are all unfit (a named pipe, a device, a link out of the
// root: N10), bad says why the first one is.
func (co *Checkout) NearestMarker(dir string, markers []string) (root, marker, bad string) {
	for {
		found := ""
		for _, m := range markers {
			ok, why := co.markerAt(filepath.Join(dir, m))
			if ok {
				return dir, m, ""
			}
			if why != "" && found == "" {
				found, bad = m, why
			}
		}
		if found != "" {
			return dir, found, bad
		}
		if dir == co.root || !co.InRoot(dir) {
			return "", "", ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", ""
		}
		dir = parent
	}
}

// markerAt reports whether p is a root marker: a regular file (of at most
// maxFileBytes, since the server reads it) or a folder, itself or through
// links inside the root. Otherwise why says what it is instead; both are
// empty when nothing is there.
func (co *Checkout) markerAt(p string) (ok bool, why string) {
	if co.guard == nil {
		return false, ""
	}
	info, err := co.guard.Lstat(p)
	if err != nil {
		return false, ""
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := co.guard.Resolve(p)
		if err != nil {
			return false, "it is a symbolic link that leads outside the root"
		}
		if info, err = co.guard.Lstat(target); err != nil {
			return false, "" // a dangling link is no marker
		}
	}
	switch {
	case info.IsDir():
		return true, ""
	case !info.Mode().IsRegular():
		return false, "it is " + pathguard.FileKind(info.Mode()) + ", not a regular file"
	case info.Size() > langserver.MaxFileBytes:
		return false, fmt.Sprintf("it is %d bytes, over the %d-byte limit", info.Size(), langserver.MaxFileBytes)
	}
	return true, ""
}

// ScanMarkers walks the checkout (bounded in depth and size, skipping
// dependency and hidden folders) and returns, per server id, the folders
// (relative to the root) holding one of its markers.
func (co *Checkout) ScanMarkers(ctx context.Context, specs []langserver.Spec) map[string][]string {
	const maxDepth, maxEntries = 4, 20000
	byMarker := map[string][]string{}
	for i := range specs {
		for _, m := range specs[i].RootMarkers {
			byMarker[m] = append(byMarker[m], specs[i].ID)
		}
	}
	found := map[string][]string{}
	if co.guard == nil {
		return found
	}
	seen := map[string]map[string]bool{}
	entries := 0
	// The run's one walk policy (.gitignore, hidden and vendored folders),
	// plus build output, down to maxDepth.
	opts := walk.Options{Dirs: true, MaxDepth: maxDepth, HiddenFiles: true, SkipDirs: []string{"target", "build"}}
	_ = walk.Walk(ctx, co.guard, co.root, opts, func(e walk.Entry) error {
		entries++
		if entries > maxEntries {
			return walk.SkipAll
		}
		ids := byMarker[path.Base(e.Rel)]
		if len(ids) > 0 {
			if ok, _ := co.markerAt(e.Abs); !ok {
				return nil // not a marker (N10); a call on a file below says why
			}
		}
		for _, id := range ids {
			dir := path.Dir(e.Rel)
			if seen[id] == nil {
				seen[id] = map[string]bool{}
			}
			if !seen[id][dir] {
				seen[id][dir] = true
				found[id] = append(found[id], dir)
			}
		}
		return nil
	})
	for id := range found {
		slices.Sort(found[id])
	}
	return found
}

// RelMessages rewrites the paths under the root that diagnostics' messages
// name relative to it (RelText); the quoted line stays as the file has it.
func (co *Checkout) RelMessages(ds []diag.Diagnostic) []diag.Diagnostic {
	for i := range ds {
		ds[i].Message = co.RelText(ds[i].Message)
	}
	return ds
}

// Outside reports whether uri names something the root does not hold
// (a file outside it, through links too, or not a file at all), and how
// to name it.
func (co *Checkout) Outside(uri string) (string, bool) {
	path, ok := protocol.URIPath(uri)
	if !ok {
		return uri, true
	}
	path = co.Canonical(path)
	if _, err := co.Confine(path); err != nil || !co.InRoot(path) {
		return co.Rel(path), true
	}
	return co.Rel(path), false
}

// ReadText reads a file for syncing or quoting through the path guard g
// (the run's, or a shared server's own): only a regular file inside the
// root, opened without blocking, at most langserver.MaxFileBytes.
func ReadText(g *pathguard.Guard, path string) (string, os.FileInfo, error) {
	if g == nil {
		return "", nil, fmt.Errorf("%s: the root cannot be opened", path)
	}
	data, info, err := g.ReadFile(path, langserver.MaxFileBytes)
	switch {
	case info != nil && info.IsDir():
		return "", nil, fmt.Errorf("%s is a folder, not a file", path)
	case errors.Is(err, pathguard.ErrTooLarge):
		return "", nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit for language-server files", path, info.Size(), langserver.MaxFileBytes)
	case err != nil:
		return "", nil, err
	}
	return string(data), info, nil
}

// Read and Locate, with Guard and Rel, are the checkout as an edit plan
// reads and writes it (wsedit.Files): through the run's guard, in the
// root's spelling.
func (co *Checkout) Read(real string) (string, fs.FileInfo, error) {
	return ReadText(co.guard, real)
}

func (co *Checkout) Locate(uri string) (string, string, error) {
	path, ok := protocol.URIPath(uri)
	if !ok {
		return "", "", fmt.Errorf("the server sent an edit for %s, which is not a file", uri)
	}
	path = co.Canonical(path)
	if !co.InRoot(path) {
		return "", "", fmt.Errorf("the edit would change %s, outside the root %s", path, co.Root())
	}
	confined, err := co.Confine(path)
	if err != nil {
		return "", "", fmt.Errorf("the edit would change %s, which resolves outside the root %s (through a symbolic link)", co.Rel(path), co.Root())
	}
	return path, confined, nil
}
