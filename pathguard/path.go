//go:build unix

package pathguard

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Path is a location inside a guard's root as only the guard gives it:
// resolved through .. and links, and checked to be inside. Engines take
// Paths, not strings, so an engine API cannot be handed an unchecked path
// (as gopls keeps protocol.DocumentURI apart from strings). The zero Path
// is no location.
type Path struct {
	g   *Guard
	abs string
}

// Path resolves p as Resolve does and returns it as a Path.
func (g *Guard) Path(p string) (Path, error) {
	abs, err := g.Resolve(p)
	if err != nil {
		return Path{}, err
	}
	return Path{g, abs}, nil
}

// RootPath is the root itself.
func (g *Guard) RootPath() Path { return Path{g, g.root} }

// ErrNoPath is the error for a zero Path where a location is needed.
var ErrNoPath = errors.New("no path: a location must come from the run's path guard")

// Guard is the guard that made p; nil for the zero Path.
func (p Path) Guard() *Guard { return p.g }

// IsZero reports whether p is no location.
func (p Path) IsZero() bool { return p.g == nil }

// Abs is the absolute path, links resolved.
func (p Path) Abs() string { return p.abs }

// Rel is p relative to the root, slash-separated ("." for the root).
func (p Path) Rel() string {
	if p.g == nil {
		return ""
	}
	return p.g.Rel(p.abs)
}

// String is Rel, for messages.
func (p Path) String() string { return p.Rel() }

// Join is the location name names under p, checked as Path does (a
// folder's entry, a file next to a marker).
func (p Path) Join(name string) (Path, error) {
	if p.g == nil {
		return Path{}, ErrNoPath
	}
	return p.g.Path(filepath.Join(p.abs, name))
}

// Under reports whether p is root or lies inside it (both of one guard).
func (p Path) Under(root Path) bool {
	if p.g == nil || p.g != root.g {
		return false
	}
	return p.abs == root.abs || strings.HasPrefix(p.abs, root.abs+string(filepath.Separator))
}

// Of checks that p was made by g, for an engine that serves one root: a
// Path of another run's guard is refused.
func (g *Guard) Of(p Path) (string, error) {
	switch {
	case p.g == nil:
		return "", ErrNoPath
	case p.g != g && p.g.root != g.root:
		return "", fmt.Errorf("%w: %s belongs to another root (%s), not %s", ErrOutside, p.abs, p.g.root, g.root)
	}
	return p.abs, nil
}
