// Package pathguard confines every path argument a tool receives to the run's
// root (REG-9). A path is resolved against the root, cleaned, and its
// symlinks are followed as far as they exist; anything that lands outside the
// root — through "..", an absolute path, or a link — is refused with an error
// that names the root.
package pathguard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside is wrapped by every refusal, for callers that test for it.
var ErrOutside = errors.New("path is outside the run's root")

// Guard resolves paths inside one root. It is safe for concurrent use.
type Guard struct {
	root string // absolute, symlinks resolved
}

// New makes a guard for root, which must be an existing folder.
func New(root string) (*Guard, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", root, err)
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("root %s is not a folder", root)
	}
	return &Guard{root: real}, nil
}

// Root returns the absolute root with its symlinks resolved.
func (g *Guard) Root() string { return g.root }

// Resolve turns a path argument (relative to the root, or absolute) into an
// absolute path inside the root. The target need not exist, but the part of
// it that does is resolved through symlinks, so a link that points out of the
// root is refused even when the final file is yet to be created.
func (g *Guard) Resolve(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path: give a path relative to the root %s", g.root)
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(g.root, p)
	}
	if !g.inside(abs) {
		// An absolute path may name the root through a symlinked prefix
		// (say /tmp -> /private/tmp); judge it after resolving.
		if !filepath.IsAbs(p) {
			return "", g.refuse(p, abs)
		}
	}
	real, err := g.resolveExisting(abs)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", p, err)
	}
	if !g.inside(real) {
		return "", g.refuse(p, real)
	}
	return real, nil
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

func (g *Guard) refuse(arg, where string) error {
	if where != arg && where != filepath.Join(g.root, arg) {
		return fmt.Errorf("%w: %q resolves to %s, outside the root %s; use a path inside the root", ErrOutside, arg, where, g.root)
	}
	return fmt.Errorf("%w: %q is outside the root %s; use a path inside the root", ErrOutside, arg, g.root)
}

// resolveExisting follows symlinks in the longest existing prefix of abs and
// appends the rest unchanged. Below the root it walks one component at a
// time from the already-resolved root, so a path costs one lstat per
// component under the root rather than per component from "/".
func (g *Guard) resolveExisting(abs string) (string, error) {
	return g.walk(abs, 0)
}

const maxLinks = 40 // as Linux's ELOOP limit

func (g *Guard) walk(abs string, links int) (string, error) {
	cur, rest := "/", abs
	if g.inside(abs) {
		cur = g.root
		rest = strings.TrimPrefix(abs[len(g.root):], string(filepath.Separator))
	}
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
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		resolved, err := g.walk(filepath.Clean(target), links)
		if err != nil {
			return "", err
		}
		cur = resolved
	}
	return cur, nil
}
