// Package staged is the shape of an edit worked out elsewhere (a language
// server's rename) and handed to the run's staged edits, which astedit
// keeps and resolve accepts or discards. It holds only data and the
// interface, so a family that must build without cgo (lsptool) can stage
// through the tree-sitter family's store without importing it.
package staged

import (
	"fmt"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

// File is one file's text before and after the edit.
type File struct {
	File   string // relative to the root, slash-separated
	Path   string // absolute, inside the guard's root
	Before []byte // the bytes the edit was computed from
	After  []byte
	Edits  int   // text edits in this file
	Lines  []int // 1-based line of each edit, in the text before
}

// Change is a whole edit over one or more files.
type Change struct {
	// Title is what it does, for the approval card ("rename Total to Len
	// (gopls)").
	Title string
	// Redo says how to stage it again after a staleness rejection ("run
	// lsp_rename with preview again").
	Redo  string
	Files []File
}

// Staged is what staging produced.
type Staged struct {
	ID      string   // the edit_id resolve takes
	Diff    string   // unified diff of every file
	Evicted []string // older pending edits dropped to make room
}

// Stager is the run's store of staged edits.
type Stager interface {
	StageChange(g *pathguard.Guard, c Change) (Staged, error)
}

// TooLargeError refuses a change after which a file would be larger than
// Limit bytes, the limit for one file an edit writes. The store does not
// know what the change is; the caller that does says it with Of.
type TooLargeError struct {
	File        string // relative to the root
	Size, Limit int
	what        string
}

// Error implements error.
func (e *TooLargeError) Error() string {
	what := e.what
	if what == "" {
		what = "the change"
	}
	return fmt.Sprintf("nothing was staged: %s would make %s %d bytes long, over the limit of %s for one file an edit writes", what, e.File, e.Size, mib(e.Limit))
}

// Of is e told as what ("renaming \"Total\" to \"Len\"") changes the file.
func (e *TooLargeError) Of(what string) *TooLargeError {
	c := *e
	c.what = what
	return &c
}

func mib(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
