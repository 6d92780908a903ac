// Package tsnative is astgrep's cgo layer over tree-sitter's C runtime
// (the one go-tree-sitter compiles in): a grammar's tables (Language,
// Grammar: symbol names and kinds, field ids, a hash of the tables), the
// bundled grammars and those loaded from shared libraries, and Parser, which
// parses a file and flattens its tree into a []Node of plain Go memory in
// preorder, dropping the C tree before it returns. The matcher reads the
// nodes' fields directly.
//
// At init it installs tree-sitter's allocator hooks (ts_set_allocator):
// while one of its parses runs on a thread, tree-sitter allocates from
// that Parser's memory pool (chunks mapped from the system, not taken from
// malloc's per-thread arenas), and the whole tree is dropped at once
// afterwards instead of node by node; at every other time, and for every
// other user of go-tree-sitter in the process, the hooks call malloc and
// free. CMemoryBytes is what the pools hold.
//
// A Parser's parse stops within a hundred parse actions of its context
// ending. It knows nothing of patterns, rules or files.
package tsnative
