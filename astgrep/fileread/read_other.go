//go:build !linux

package fileread

import (
	"io/fs"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Reader reads files through the guard (see read_linux.go for the
// reader that opens them beneath their folder).
type Reader struct{}

// Close closes nothing: this reader holds nothing open.
func (r *Reader) Close() {}

// Read reads the file at path into buf, refusing one that grew past
// limit (size is what a stat said, to size buf), and returns what the open
// descriptor said about the file before the read.
func (r *Reader) Read(buf []byte, g *pathguard.Guard, path string, size, limit int64) ([]byte, fs.FileInfo, error) {
	return readInto(buf, g, path, size, limit)
}
