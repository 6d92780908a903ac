// Package parsecache is astgrep's parse cache: the trees of the files a
// search parsed, kept under one byte budget so another search, in the
// same agent run or another, reuses them. Package astgrep keeps one per
// process; this package holds the cache's data and its rules (the key, the
// file stamp that says a tree is still the file's, who waits for a parse
// in flight, what is admitted and what is evicted) and knows nothing of
// trees beyond their bytes and their cost, nor of parsing or matching.
package parsecache
