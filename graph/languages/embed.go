// Package languages holds the bundled language folders of the code graph
// (language.json, tags.scm and the files they name, shapes.scm), one
// folder per language; graph/lang loads them.
package languages

import "embed"

// FS holds one folder per language.
//
//go:embed */*.json */*.scm
var FS embed.FS
