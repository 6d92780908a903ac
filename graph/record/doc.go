// Package record is the code graph's record of one file, as its bytes
// give it by one language's query files (package extract makes it):
// definitions, references, locals, fields, imports, the string table and
// the declared types as trees (typetree.go), with the readings the
// resolver makes of them. It is plain data with its generated binary
// codec (codec_gen.go) and the checks a decoded record passes; it knows
// no language, tree-sitter or index.
package record

import "embed"

// Sources are the files whose code shapes a record's content; the
// extraction key (lang's fingerprint) hashes them, so a record is never
// read by code that would make it differently.
//
//go:embed names.go record.go typetree.go
var Sources embed.FS
