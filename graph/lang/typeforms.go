package lang

import (
	"fmt"
	"io/fs"
	"path"

	"github.com/builtin-tools/builtin-tools/astgrep"
)

// typesConfig: the language.json key naming the type query files.
type typesConfig struct {
	// TypeFiles are the files of the type and expression shapes, read in
	// order as one query (paths as in "queries"). Default: typeforms.scm if
	// the folder has one, else the extended language's.
	TypeFiles []string `json:"type_forms"`
}

// load compiles the language's type files; nil when it lists none.
func (c *typesConfig) load(e *astgrep.Engine, fsys fs.FS, id, grammar string) (*astgrep.CaptureQuery, string, error) {
	if len(c.TypeFiles) == 0 {
		return nil, "", nil
	}
	var src []byte
	for _, name := range c.TypeFiles {
		part, err := fs.ReadFile(fsys, path.Join(id, name))
		if err != nil {
			return nil, "", fmt.Errorf("language %s: %w", id, err)
		}
		if _, err := e.CompileCaptureQuery(grammar, string(part)); err != nil {
			return nil, "", fmt.Errorf("language %s: %s: %w", id, name, err)
		}
		src = append(append(src, part...), '\n')
	}
	q, err := e.CompileCaptureQuery(grammar, string(src))
	if err != nil {
		return nil, "", fmt.Errorf("language %s: %w", id, err)
	}
	return q, string(src), nil
}

// The resolver's readings of a type tree. Each returns ok false when it
// meets an opaque node: the type names nothing the resolver follows.
