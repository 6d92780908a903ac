//go:build unix

// Package pathguard confines every path a tool touches to the run's root
// (REG-9), and is the one way tools do file I/O there. A path is
// resolved against the root and its symlinks followed as far as they exist,
// with ".." taken after the link before it, as the kernel does; anything
// that lands outside the root — through "..", an absolute path, or a link —
// is refused with an error that names the root.
//
// Resolving is a check; the I/O methods (Open, ReadFile, Stat, ReadDir,
// OpenDir) are the use, and they cannot be raced: they go through an
// os.Root opened on the root, which resolves every component beneath it
// (openat with O_NOFOLLOW, one component at a time), so a folder swapped
// for a link out of the root between the check and the use is refused
// rather than followed. Files are opened without blocking and only regular
// ones are accepted, so a named pipe or a device never hangs a tool. A path
// that changed between the check and the use is refused with one sentence
// (ErrPathChanged), and a refusal never names where a link outside points.
//
// The guard also carries the run's choice to let write tools change a
// repository's metadata (AllowGitWrites), which the commit plan enforces.
package pathguard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"unicode/utf8"
)

// ErrOutside is wrapped by every refusal, for callers that test for it.
var ErrOutside = errors.New("path is outside the run's root")

// Guard resolves paths inside one root and does I/O beneath it. It is safe
// for concurrent use.
type Guard struct {
	root string   // absolute, symlinks resolved
	fsys *os.Root // the root folder, opened once

	gitWrites atomic.Bool // see AllowGitWrites
}

// New makes a guard for root, which must be an existing folder.
func New(root string) (*Guard, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", root, err)
	}
	info, err := os.Stat(resolved)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("root %s is not a folder", root)
	}
	fsys, err := os.OpenRoot(resolved)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", root, err)
	}
	return &Guard{root: resolved, fsys: fsys}, nil
}

// Close releases the root folder's descriptor; I/O after Close fails.
func (g *Guard) Close() error { return g.fsys.Close() }

// AllowGitWrites lets write tools change a repository's metadata (.git/
// and the like) under this root, which the commit plan
// (internal/atomicfile) otherwise refuses; what git executes still needs
// exec approval. A run option: set it before the first call.
func (g *Guard) AllowGitWrites() { g.gitWrites.Store(true) }

// GitWritesAllowed reports whether AllowGitWrites was called.
func (g *Guard) GitWritesAllowed() bool { return g.gitWrites.Load() }

// Root returns the absolute root with its symlinks resolved.
func (g *Guard) Root() string { return g.root }

// MaxPathBytes is the longest path argument accepted (Linux's PATH_MAX).
const MaxPathBytes = 4096

// Resolve turns a path argument (relative to the root, or absolute) into an
// absolute path inside the root. The target need not exist, but the part of
// it that does is resolved through symlinks, so a link that points out of the
// root is refused even when the final file is yet to be created.
func (g *Guard) Resolve(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path: give a path relative to the root %s", g.root)
	}
	if len(p) > MaxPathBytes {
		return "", fmt.Errorf("path %s is %d bytes, longer than the %d-byte limit for a path; give a path relative to the root %s", Clip(p), len(p), MaxPathBytes, g.root)
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %s contains a NUL byte", Clip(p))
	}
	// Components are walked as given, not cleaned first: "link/.." is the
	// folder above the link's target, as for the kernel and os.Root.
	start, rest := g.root, p
	if filepath.IsAbs(p) {
		start = string(filepath.Separator)
		if strings.HasPrefix(p, g.root+string(filepath.Separator)) {
			start, rest = g.root, p[len(g.root)+1:]
		}
	}
	resolved, err := g.walk(start, rest, 0)
	if errors.Is(err, errLeadsOut) {
		return "", g.refuse(p, "")
	}
	if err != nil {
		return "", fmt.Errorf("path %s: %w", Clip(p), err)
	}
	if !g.inside(resolved) {
		return "", g.refuse(p, resolved)
	}
	if strings.ContainsRune(p, utf8.RuneError) {
		if _, err := os.Lstat(resolved); errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("path %s does not exist, and it contains U+FFFD, the character that replaces bytes that are not UTF-8: "+
				"JSON carries only UTF-8, so a file whose name is not UTF-8 cannot be named here; list the folder to find its name, or rename the file", Clip(p))
		}
	}
	return resolved, nil
}

// Clip quotes s for a message, cut to its first 200 bytes (on a character
// boundary) with the length of the rest, so a huge argument is never echoed.
func Clip(s string) string {
	const n = 200
	if len(s) <= n {
		return strconv.Quote(s)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", strconv.Quote(s[:cut]), len(s))
}

// Rel returns abs relative to the root with forward slashes, for messages.
// A path outside the root is returned unchanged.
func (g *Guard) Rel(abs string) string {
	rel, err := filepath.Rel(g.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return filepath.ToSlash(rel)
}

func (g *Guard) inside(abs string) bool {
	return abs == g.root || strings.HasPrefix(abs, g.root+string(filepath.Separator))
}

// refuse explains why arg, which resolved to where, is refused. A path
// that got out through a link is said to lead outside, without naming
// where: the layout outside the root is none of the agent's business (N9).
func (g *Guard) refuse(arg, where string) error {
	if where != arg && where != filepath.Join(g.root, arg) {
		return fmt.Errorf("%w: %s leads outside the root %s (through a symbolic link); use a path inside the root", ErrOutside, Clip(arg), g.root)
	}
	return fmt.Errorf("%w: %s is outside the root %s; use a path inside the root", ErrOutside, Clip(arg), g.root)
}

// errLeadsOut ends a walk that failed outside the root; Resolve refuses
// the path as outside.
var errLeadsOut = errors.New("leads outside the root")

// walkError explains a failed lookup of next (a component in folder cur)
// without naming anything outside the root: a link that stopped being one
// between lstat and readlink is a race, a file where a folder should be
// is named as such.
func (g *Guard) walkError(cur, next string, err error) error {
	switch {
	case !g.inside(cur):
		return errLeadsOut
	case errors.Is(err, syscall.EINVAL):
		return ErrPathChanged
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s is not a folder", g.Rel(cur))
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return fmt.Errorf("cannot look up %s: %w", g.Rel(next), errno)
	}
	return err
}

const maxLinks = 40 // as Linux's ELOOP limit

// walk resolves rest from the real folder cur one component at a time,
// following symlinks (their targets walked from the link's folder) and
// taking ".." from the resolved folder; the first missing component ends
// the walk, the rest appended as it is.
func (g *Guard) walk(cur, rest string, links int) (string, error) {
	for rest != "" {
		comp, tail, _ := strings.Cut(rest, string(filepath.Separator))
		rest = tail
		if comp == "" || comp == "." {
			continue
		}
		if comp == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		info, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(next, rest), nil
		}
		if err != nil {
			return "", g.walkError(cur, next, err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			if !g.inside(next) {
				return "", errLeadsOut
			}
			return "", fmt.Errorf("too many levels of symbolic links at %s", g.Rel(next))
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", g.walkError(cur, next, err)
		}
		from := cur
		if filepath.IsAbs(target) {
			from = string(filepath.Separator)
		}
		resolved, err := g.walk(from, target, links)
		if err != nil {
			return "", err
		}
		cur = resolved
	}
	return cur, nil
}
