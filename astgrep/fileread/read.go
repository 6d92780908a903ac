package fileread

import (
	"fmt"
	"io"
	"io/fs"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

// readInto reads a file into buf, refusing one that grew past limit, and
// returns what the open descriptor said about the file before the read.
func readInto(buf []byte, g *pathguard.Guard, path string, size, limit int64) ([]byte, fs.FileInfo, error) {
	fh, info, err := g.Open(path)
	if err != nil {
		return buf, nil, err
	}
	defer fh.Close()
	if int64(cap(buf)) < size+1 {
		buf = make([]byte, 0, size+size/4+512)
	}
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return buf[:0], nil, fmt.Errorf("grew past the size limit while being read")
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := fh.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return buf[:0], nil, err
		}
	}
	if int64(len(buf)) > limit {
		return buf[:0], nil, fmt.Errorf("grew past the size limit while being read")
	}
	return buf, info, nil
}
