// Package staged is the shape of an edit worked out elsewhere (a language
// server's rename) and handed to the run's staged edits, which astedit
// keeps and resolve accepts or discards. It holds only data and the
// interface, so a family that must build without cgo (lsptool) can stage
// through the tree-sitter family's store without importing it.
package staged

import "github.com/builtin-tools/builtin-tools/pathguard"

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
