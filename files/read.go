package files

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// Limits of one read, so that a huge file cannot flood the agent's context.
const (
	defaultReadLines = 2000
	maxLineBytes     = 2000
	maxReadBytes     = 256 << 10
	maxImageBytes    = 5 << 20
	maxDirEntries    = 500
	// maxCountBytes bounds how far past the page read counts lines.
	maxCountBytes = 64 << 20
)

type readParams struct {
	Path   string `json:"path" jsonschema:"file to read, relative to the root (absolute paths inside the root also work); a folder lists its entries"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to show, 1-based (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many lines to show (default 2000)"`
}

// Read shows a text file with numbered lines, an image as an image, or a
// folder's entries.
var Read = registry.Tool("read", tiers.Read,
	"Read a file inside the root. Text comes back with 1-based line numbers (cat -n style); use offset and limit to page through long files. "+
		"PNG, JPEG, GIF and WebP images come back as images. A folder lists its entries. Binary files are refused.",
	nil, readFile)

func readFile(ctx context.Context, c *registry.Call, p readParams) (*mcp.CallToolResult, error) {
	abs, err := c.Path(p.Path)
	if err != nil {
		return registry.Errorf("%v", err)
	}
	rel := c.Rel(abs)
	if p.Offset < 0 || p.Limit < 0 {
		return registry.Errorf("offset and limit must be positive (offset is a 1-based line number)")
	}
	g := c.Run.Guard()
	info, err := g.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return registry.Errorf("%s does not exist (paths are relative to the root %s)", rel, c.Run.Root())
		}
		return registry.Errorf("cannot open %s: %v", rel, err)
	}
	if info.IsDir() {
		return listDir(g, abs, rel)
	}
	// Checked before opening and again on the descriptor: opening a named
	// pipe blocks until a writer comes, and a device may never end.
	f, info, err := g.Open(abs)
	if errors.Is(err, pathguard.ErrNotRegular) {
		return registry.Errorf("%s is not a regular file (%s); read shows files and folders", rel, info.Mode().Type())
	}
	if err != nil {
		return registry.Errorf("cannot open %s: %v", rel, err)
	}
	defer f.Close()

	hb := headPool.Get().(*[sniffLen]byte)
	defer headPool.Put(hb)
	n, _ := io.ReadFull(f, hb[:])
	head := hb[:n]
	if kind := http.DetectContentType(head); strings.HasPrefix(kind, "image/") && kind != "image/svg+xml" {
		return readImage(f, rel, kind, info.Size())
	}
	if isBinary(head) {
		return registry.Errorf("%s is a binary file (%d bytes, detected as %s); read shows text files only", rel, info.Size(), http.DetectContentType(head))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return registry.Errorf("cannot read %s: %v", rel, err)
	}
	return readText(f, rel, p)
}

// Buffers are pooled: a read is a hot, small call and should not allocate
// tens of kilobytes each time.
var (
	headPool   = sync.Pool{New: func() any { return new([sniffLen]byte) }}
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}
)

func readText(f io.Reader, rel string, p readParams) (*mcp.CallToolResult, error) {
	start := max(p.Offset, 1)
	limit := p.Limit
	if limit == 0 {
		limit = defaultReadLines
	}
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(f)
	defer func() { br.Reset(nil); readerPool.Put(br) }()
	var out strings.Builder
	line, shown, total := 0, 0, 0
	truncatedLines, invalidLine := 0, 0
	capped := false
	// Lines are read in slices of the reader's fixed buffer: a line is kept
	// only up to the cut, so memory does not grow with the longest line,
	// and lines past the page are only counted.
	var kept []byte
	lineLen, eol := 0, 0
	var scanned int64
	countFrom, uncounted := int64(-1), false
	for {
		chunk, err := br.ReadSlice('\n')
		if n := len(chunk); n > 0 {
			switch {
			case chunk[n-1] != '\n':
				eol = 0
			case n > 1 && chunk[n-2] == '\r':
				eol = 2
			default:
				eol = 1
			}
			if line+1 >= start && shown < limit && !capped && len(kept) < maxLineBytes+utf8.UTFMax {
				kept = append(kept, chunk[:min(len(chunk), maxLineBytes+utf8.UTFMax-len(kept))]...)
			}
			lineLen += len(chunk)
			scanned += int64(len(chunk))
			if countFrom >= 0 && scanned-countFrom > maxCountBytes {
				uncounted = true
				break
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if lineLen == 0 {
			break
		}
		line++
		total = line
		if line >= start && shown < limit && !capped {
			text := strings.TrimRight(string(kept), "\r\n")
			full := lineLen - eol
			if !utf8.ValidString(text) {
				if invalidLine == 0 {
					invalidLine = line
				}
			}
			if full > maxLineBytes {
				text = cutLine(text, full)
				truncatedLines++
			}
			if !utf8.ValidString(text) {
				text = strings.ToValidUTF8(text, "\uFFFD")
			}
			entry := fmt.Sprintf("%6d\t%s\n", line, text)
			if out.Len()+len(entry) > maxReadBytes {
				capped = true
			} else {
				out.WriteString(entry)
				shown++
			}
		}
		kept, lineLen, eol = kept[:0], 0, 0
		if err != nil {
			break
		}
		if (shown >= limit || capped) && countFrom < 0 {
			// Past the page, lines are only counted, and only so far: the
			// time of a call must not grow with the file.
			countFrom = scanned
		}
	}
	if total == 0 {
		return registry.Text(fmt.Sprintf("%s is empty (0 lines)", rel))
	}
	if start > total {
		return registry.Errorf("offset %d is past the end of %s, which has %d lines", start, rel, total)
	}
	last := start + shown - 1
	var notes []string
	if last < total || uncounted {
		why := "limit"
		if capped {
			why = fmt.Sprintf("%d KiB output cap", maxReadBytes>>10)
		}
		of := fmt.Sprint(total)
		if uncounted {
			of = fmt.Sprintf("at least %d (lines past the first %d MiB were not counted)", total, scanned>>20)
		}
		notes = append(notes, fmt.Sprintf("showing lines %d-%d of %s (%s); call read with offset %d to continue", start, last, of, why, last+1))
	}
	if truncatedLines > 0 {
		notes = append(notes, fmt.Sprintf("%d long lines were cut at %d bytes", truncatedLines, maxLineBytes))
	}
	if invalidLine > 0 {
		notes = append(notes, fmt.Sprintf("the file is not valid UTF-8 (first at line %d); such bytes are shown as U+FFFD, and edit cannot match them", invalidLine))
	}
	s := out.String()
	if len(notes) > 0 {
		s += "[" + strings.Join(notes, "; ") + "]"
	}
	return registry.Text(s)
}

func truncateUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func readImage(f *os.File, rel, kind string, size int64) (*mcp.CallToolResult, error) {
	if size > maxImageBytes {
		return registry.Errorf("%s is a %s image of %d bytes, over the %d MiB limit for images", rel, kind, size, maxImageBytes>>20)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return registry.Errorf("cannot read %s: %v", rel, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return registry.Errorf("cannot read %s: %v", rel, err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewTextContent(fmt.Sprintf("%s (%s, %d bytes)", rel, kind, len(data))),
		mcp.NewImageContent(base64.StdEncoding.EncodeToString(data), kind),
	}}, nil
}

func listDir(g *pathguard.Guard, abs, rel string) (*mcp.CallToolResult, error) {
	entries, err := g.ReadDir(abs)
	if err != nil {
		return registry.Errorf("cannot list %s: %v", rel, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var b strings.Builder
	fmt.Fprintf(&b, "%s is a folder with %d entries:\n", rel, len(entries))
	for i, e := range entries {
		if i == maxDirEntries {
			fmt.Fprintf(&b, "… and %d more\n", len(entries)-maxDirEntries)
			break
		}
		name := e.Name()
		if e.IsDir() {
			name += "/"
		} else if e.Type()&os.ModeSymlink != 0 {
			name += "@"
		}
		b.WriteString(name + "\n")
	}
	return registry.Text(strings.TrimRight(b.String(), "\n"))
}
