// Package extract turns one file's matches of its language's queries
// into its record (package record): definitions, references, locals,
// fields, imports, and the declared types and expressions as trees read
// by the language's typeforms.scm, with the types doc comments give. An
// Extractor is one language's compiled captures and expressions, made by
// package lang from its language.json; it reads nothing from disk.
package extract

import "embed"

// Sources are the files whose code shapes a record's content; the
// extraction key (lang's fingerprint) hashes them, so a record is never
// read by code that would make it differently.
//
//go:embed doctypes.go extract.go extractor.go typetree.go
var Sources embed.FS
