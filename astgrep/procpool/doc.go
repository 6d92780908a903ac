// Package procpool is astgrep's parse work, bounded per process, not per
// engine: a search's workers take a work slot (a parser and its scratch
// buffers) for every file they read and parse, and there are GOMAXPROCS
// slots in the process, so ten runs searching at once parse as many files
// at a time, and hold as much parse memory (tree-sitter's pool chunks,
// the read buffer, the flat node buffer), as one run does; matching a
// tree from the parse cache needs no slot. Big files share a budget of
// bytes parsed at once (BigParses), which a Feeder hands a search's files
// out under; spare parsers serve the small parses outside the slots. It
// knows parsers and byte counts, never files, trees or patterns.
package procpool
