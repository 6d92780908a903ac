//go:build !linux

package astgrep

import (
	"io/fs"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

// fileReader reads files through the guard (see read_linux.go for the
// reader that opens them beneath their folder).
type fileReader struct{}

func (r *fileReader) close() {}

func (r *fileReader) read(buf []byte, g *pathguard.Guard, path string, size, limit int64) ([]byte, fs.FileInfo, error) {
	return readInto(buf, g, path, size, limit)
}
