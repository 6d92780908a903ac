//go:build !linux

package parsecache

import "io/fs"

// StampOf reports no stamp where this package does not know the stat
// layout: without a change time, a file could be served stale, so such
// files are never cached.
func StampOf(info fs.FileInfo) (Stamp, bool) { return Stamp{}, false }
