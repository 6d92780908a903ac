package answer

import (
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
)

// RenameResult reports what lsp_rename changed.
type RenameResult struct {
	Symbol     string     `json:"symbol"`
	Occurrence int        `json:"occurrence,omitempty" jsonschema:"which occurrence of symbol on the line, when not the first"`
	NewName    string     `json:"new_name"`
	Server     string     `json:"server"`
	Files      []FileEdit `json:"files" jsonschema:"the files changed, sorted by path"`
	Edits      int        `json:"edits" jsonschema:"text edits over all files"`
	// Notes say what the writes could not keep (see atomicfile.Report).
	Notes []string `json:"notes,omitempty" jsonschema:"what the writes could not keep (owner, links ...)"`
}

// FileEdit is one file's share of a rename.
type FileEdit struct {
	Path        string `json:"path" jsonschema:"relative to the root"`
	Edits       int    `json:"edits"`
	RenamedFrom string `json:"renamed_from,omitempty" jsonschema:"the path it had before, when moved"`
	Created     bool   `json:"created,omitempty"`
	Deleted     bool   `json:"deleted,omitempty"`
}

// What says what was done to the file: "2 edits, renamed from old.go".
func (f FileEdit) What() string {
	var what []string
	if f.Edits > 0 {
		what = append(what, textcut.Count(f.Edits, "edit", "edits"))
	}
	if f.RenamedFrom != "" {
		what = append(what, "renamed from "+f.RenamedFrom)
	}
	if f.Created {
		what = append(what, "created")
	}
	if f.Deleted {
		what = append(what, "deleted")
	}
	return strings.Join(what, ", ")
}

// StagedEdit is an edit worked out and not written, for the run's staged
// edits (internal/staged): each file's text before and after.
type StagedEdit struct {
	Server string
	Files  []staged.File
	Edits  int
}

// FixResult is what lsp_fix applied.
type FixResult struct {
	// ID is the action applied by id, Kind the fix applied by kind.
	ID     string `json:"id,omitempty"`
	Kind   string `json:"kind,omitempty" jsonschema:"organize_imports, fix_all or format"`
	Title  string `json:"title,omitempty" jsonschema:"the action's title"`
	File   string `json:"file"`
	Server string `json:"server"`
	// Command is the server command the action ran, when it had one.
	Command string     `json:"command,omitempty"`
	Files   []FileEdit `json:"files" jsonschema:"the files changed, sorted by path"`
	Edits   int        `json:"edits"`
	// Unchanged: the server's edit changes nothing (already formatted,
	// imports already in order).
	Unchanged bool     `json:"unchanged,omitempty"`
	Notes     []string `json:"notes,omitempty" jsonschema:"what the writes could not keep"`
}

// FileChange is one file a planned edit changes, with its text before and
// after (a moved file's before is its source's text), for a card's diff.
type FileChange struct {
	FileEdit
	Before string `json:"-"`
	After  string `json:"-"`
}

// ProposedEdit is an edit a fix's command sent, planned and not yet
// written: what a [Confirm] is asked about.
type ProposedEdit struct {
	Server  string
	Command string
	Files   []FileEdit
	Changes []FileChange
	Edits   int
}
