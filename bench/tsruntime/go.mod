// A module of its own: the two tree-sitter runtimes define the same C
// symbols, so each is built into a program of its own, and the official
// binding stays out of the main module.
module github.com/builtin-tools/builtin-tools/bench/tsruntime

go 1.26

require (
	github.com/smacker/go-tree-sitter v0.0.0-20240827094217-dd81d9e9be82
	github.com/tree-sitter/go-tree-sitter v0.25.0
	github.com/tree-sitter/tree-sitter-go v0.25.0
)

require github.com/mattn/go-pointer v0.0.1 // indirect
