package astgrep

import (
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// ErrEmptyPattern is returned for a pattern that is empty or only
// whitespace.
var ErrEmptyPattern = errors.New("the pattern is empty: give a code fragment, e.g. `foo($A)`")

// ErrOnlyMetavariable is returned for a pattern that is a lone
// metavariable (`$A`, `$$$A`): it would match every node of every file.
var ErrOnlyMetavariable = errors.New("the pattern is only a metavariable, which would match every node: put code around it, e.g. `foo($$$A)`")

// ErrOutsideRoot is pathguard.ErrOutside: a location outside the run's
// root, which the guard refuses before a Query can hold it.
var ErrOutsideRoot = pathguard.ErrOutside

// ErrNotRegular is returned for a Path that is a named pipe, a device or a
// socket: reading one can block forever.
var ErrNotRegular = pathguard.ErrNotRegular

// ErrClosed is returned by an Engine after Close.
var ErrClosed = lifetime.Closed("astgrep: engine is closed")

// UnparsablePatternError says no scaffold context read the pattern without
// syntax errors.
type UnparsablePatternError struct {
	Pattern  string
	Language string
	// Contexts are the contexts tried, in order.
	Contexts []string
	// Detail describes the first context's syntax error.
	Detail string
}

// Error implements error.
func (e *UnparsablePatternError) Error() string {
	msg := fmt.Sprintf("the pattern %q does not parse as %s code in any context tried (%s)",
		e.Pattern, e.Language, strings.Join(e.Contexts, "; "))
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg + ". Check the syntax, or that language is right; a metavariable stands for one whole node ($A) or a run of nodes ($$$A)"
}

// UnknownLanguageError is returned for a language id no grammar provides,
// or a file whose language cannot be told from its name.
type UnknownLanguageError struct {
	Language string // the id asked for; empty when inferred from File
	File     string
	Known    []string
	// GrammarDirs are the folders searched for run-time grammars.
	GrammarDirs []string
}

// Error implements error.
func (e *UnknownLanguageError) Error() string {
	var b strings.Builder
	if e.Language != "" {
		fmt.Fprintf(&b, "unknown language %q", e.Language)
	} else {
		fmt.Fprintf(&b, "cannot tell the language of %s from its name; pass language", e.File)
	}
	fmt.Fprintf(&b, ". Known: %s. To add a grammar, build it as a shared library named libtree-sitter-<id>%s exporting tree_sitter_<id>() (tree-sitter ABI %d-%d) and put it in a grammar folder",
		strings.Join(e.Known, ", "), sharedLibExt, tsnative.MinABI, tsnative.MaxABI)
	if len(e.GrammarDirs) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(e.GrammarDirs, ", "))
	}
	return b.String()
}

// GrammarLoadError says a run-time grammar library could not be used. Other
// languages are unaffected.
type GrammarLoadError struct {
	Language string
	Path     string
	Err      error
}

// Error implements error.
func (e *GrammarLoadError) Error() string {
	return fmt.Sprintf("the %s grammar at %s cannot be loaded: %v (rebuild it, or remove it from the grammar folder)", e.Language, e.Path, e.Err)
}

// Unwrap returns the underlying load failure.
func (e *GrammarLoadError) Unwrap() error { return e.Err }

// AmbiguousLanguageError is returned when a folder holds files of several
// languages and the pattern parses in more than one of them.
type AmbiguousLanguageError struct {
	Languages []string // with file counts, e.g. "go (12 files)"
}

// Error implements error.
func (e *AmbiguousLanguageError) Error() string {
	return fmt.Sprintf("the folder holds files of several languages the pattern parses in: %s; pass language to pick one", strings.Join(e.Languages, ", "))
}
