// Package files is the harness's own file tools — read, write, edit and
// apply_patch — registered with a tier like any built-in tool (REG-8), so the
// command is complete on its own and so the diagnostics-on-write wrapper has
// writes to wrap. Every path goes through the run's path guard; every write
// is atomic (temporary file and rename, mode kept), and a multi-file patch is
// all or nothing.
package files

import (
	"bytes"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/registry"
)

// Tools returns the file tools' descriptors.
func Tools() []registry.Descriptor {
	return []registry.Descriptor{Read, Write, Edit, ApplyPatch}
}

// sniffLen is how much of a file decides whether it is binary, as git does.
const sniffLen = 8000

// isBinary reports a NUL byte near the start, git's test for binary content.
func isBinary(data []byte) bool {
	if len(data) > sniffLen {
		data = data[:sniffLen]
	}
	return bytes.IndexByte(data, 0) >= 0
}

// firstInvalidUTF8 returns the 1-based line of the first byte that is not
// UTF-8, or 0.
func firstInvalidUTF8(data []byte) int {
	if utf8.Valid(data) {
		return 0
	}
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return line
		}
		if data[i] == '\n' {
			line++
		}
		i += size
	}
	return 0
}

// readTextFile loads a file a text tool will change, refusing folders,
// missing files and binary content with messages that say what to do.
func readTextFile(abs, rel, tool string) ([]byte, os.FileInfo, error) {
	info, err := os.Stat(abs)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil, fmt.Errorf("%s does not exist; use write to create it", rel)
		}
		return nil, nil, fmt.Errorf("cannot open %s: %v", rel, err)
	}
	if info.IsDir() {
		return nil, nil, fmt.Errorf("%s is a folder; %s works on one file", rel, tool)
	}
	if !info.Mode().IsRegular() {
		// reading a named pipe or a device would block or never end
		return nil, nil, fmt.Errorf("%s is not a regular file (%s); %s works on regular files", rel, info.Mode().Type(), tool)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read %s: %v", rel, err)
	}
	if isBinary(data) {
		return nil, nil, fmt.Errorf("%s is a binary file (%d bytes); %s changes text files only", rel, len(data), tool)
	}
	return data, info, nil
}

// writeError explains a failed write; the old content is untouched because
// writes go through a temporary file.
func writeError(rel string, err error) string {
	msg := fmt.Sprintf("could not write %s: %v", rel, err)
	if os.IsPermission(err) {
		msg += " (the file or its folder is not writable)"
	}
	return msg + "; the file was not changed"
}
