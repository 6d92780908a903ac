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
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/internal/notebook"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
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
	Offset int    `json:"offset,omitempty" jsonschema:"first line to show, 1-based (default 1); for a notebook (.ipynb), the first cell"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many lines to show (default 2000); for a notebook, how many cells"`
}

// Read shows a text file with numbered lines, an image as an image, or a
// folder's entries.
var ReadTool = registry.Descriptor{
	Name:  "read",
	Title: "read file",
	Tier:  tiers.Read,
	Description: "Read a file inside the root. Text comes back with 1-based line numbers (cat -n style); use offset and limit to page through long files " +
		"(a page is at most one output budget, about 8,000 characters, and says where to continue). " +
		"PNG, JPEG, GIF and WebP images come back as images. A Jupyter notebook (.ipynb) comes back as its numbered cells: source, outputs as text, figures as images. A folder lists its entries. Binary files are refused.",
	Handler: registry.Func(readFile),
}

// ReadResult is what read shows.
type ReadResult struct {
	Path string `json:"path" jsonschema:"relative to the root"`
	// Kind is text, empty, image, notebook or folder.
	Kind       string   `json:"kind" jsonschema:"text, empty, image, notebook or folder"`
	FirstCell  int      `json:"first_cell,omitempty" jsonschema:"a notebook's first cell shown, 1-based"`
	LastCell   int      `json:"last_cell,omitempty" jsonschema:"a notebook's last cell shown"`
	TotalCells int      `json:"total_cells,omitempty" jsonschema:"a notebook's cells"`
	FirstLine  int      `json:"first_line,omitempty" jsonschema:"first line shown, 1-based"`
	LastLine   int      `json:"last_line,omitempty" jsonschema:"last line shown"`
	TotalLines int      `json:"total_lines,omitempty" jsonschema:"lines in the file (a lower bound when counted is false)"`
	Counted    bool     `json:"counted,omitempty" jsonschema:"whether total_lines counts the whole file"`
	Content    string   `json:"content,omitempty" jsonschema:"the lines shown, as in the file (long lines cut); a notebook's cells as the text renders them"`
	Entries    []string `json:"entries,omitempty" jsonschema:"a folder's entries; folders end in /, symbolic links in @"`
	MimeType   string   `json:"mime_type,omitempty"`
	Bytes      int64    `json:"bytes,omitempty"`
	Notes      []string `json:"notes,omitempty" jsonschema:"what was left out and how to get it"`

	text   string
	image  *mcp.ImageContent
	images []mcp.Content
}

// Text is what the agent reads.
func (r ReadResult) Text() string { return r.text }

// MoreContent returns the image, for an image file.
func (r ReadResult) MoreContent() []mcp.Content {
	if r.image == nil {
		return r.images
	}
	return []mcp.Content{*r.image}
}

func readFile(ctx context.Context, c *registry.Call, p readParams) (ReadResult, error) {
	abs, err := c.Path(p.Path)
	if err != nil {
		return ReadResult{}, err
	}
	rel := c.Rel(abs)
	if p.Offset < 0 || p.Limit < 0 {
		return ReadResult{}, fmt.Errorf("offset and limit must be positive (offset is a 1-based line number)")
	}
	g := c.Run.Guard()
	info, err := g.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ReadResult{}, fmt.Errorf("%s does not exist (paths are relative to the root %s)", rel, c.Run.Root())
		}
		return ReadResult{}, fmt.Errorf("cannot open %s: %v", rel, err)
	}
	if info.IsDir() {
		return listDir(g, abs, rel, c.Budget().Chars())
	}
	// Checked before opening and again on the descriptor: opening a named
	// pipe blocks until a writer comes, and a device may never end.
	f, info, err := g.Open(abs)
	if errors.Is(err, pathguard.ErrNotRegular) {
		return ReadResult{}, fmt.Errorf("%s is not a regular file (%s); read shows files and folders", rel, info.Mode().Type())
	}
	if err != nil {
		return ReadResult{}, fmt.Errorf("cannot open %s: %v", rel, err)
	}
	defer f.Close()

	hb := headPool.Get().(*[sniffLen]byte)
	defer headPool.Put(hb)
	n, _ := io.ReadFull(f, hb[:])
	head := hb[:n]
	if kind := http.DetectContentType(head); strings.HasPrefix(kind, "image/") && kind != "image/svg+xml" {
		return readImage(f, rel, kind, info.Size())
	}
	if textcut.Binary(head) {
		return ReadResult{}, fmt.Errorf("%s is a binary file (%d bytes, detected as %s); read shows text files only", rel, info.Size(), http.DetectContentType(head))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ReadResult{}, fmt.Errorf("cannot read %s: %v", rel, err)
	}
	if strings.EqualFold(filepath.Ext(rel), ".ipynb") && info.Size() <= maxNotebookBytes {
		if res, ok := readNotebook(f, rel, p, c.Budget().Chars()); ok {
			return res, nil
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return ReadResult{}, fmt.Errorf("cannot read %s: %v", rel, err)
		}
	}
	return readText(f, rel, p, c.Budget().Chars())
}

// maxNotebookBytes bounds a notebook read whole to render it; a bigger
// one is shown as text.
const maxNotebookBytes = 64 << 20

// readNotebook renders a notebook's cells; ok is false when the file is
// not a notebook (it is then shown as the text it is).
func readNotebook(f io.Reader, rel string, p readParams, budget int) (ReadResult, bool) {
	data, err := io.ReadAll(f)
	if err != nil {
		return ReadResult{}, false
	}
	nb, err := notebook.Parse(data)
	if err != nil {
		return ReadResult{}, false
	}
	if p.Offset > len(nb.Cells) && len(nb.Cells) > 0 {
		return ReadResult{Path: rel, Kind: "notebook", TotalCells: len(nb.Cells),
			text: fmt.Sprintf("offset %d is past the last cell of %s, which has %d cells", p.Offset, rel, len(nb.Cells))}, true
	}
	r := nb.Render(rel, p.Offset, p.Limit, budget)
	res := ReadResult{Path: rel, Kind: "notebook", FirstCell: r.Shown[0], LastCell: r.Shown[1], TotalCells: len(nb.Cells)}
	for _, im := range r.Images {
		res.images = append(res.images, mcp.NewImageContent(base64.StdEncoding.EncodeToString(im.Data), im.Mime))
	}
	if r.NextCell > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("showing cells %d-%d of %d; call read with offset %d to continue", r.Shown[0], r.Shown[1], len(nb.Cells), r.NextCell))
	}
	if r.ImagesCut > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d more images not returned (at most %d a read); read with offset to see later cells' images", r.ImagesCut, notebook.MaxImages))
	}
	res.text, res.Content = r.Text, r.Text
	if len(res.Notes) > 0 {
		res.text += "\n[" + strings.Join(res.Notes, "; ") + "]"
	}
	return res, true
}

// Buffers are pooled: a read is a hot, small call and should not allocate
// tens of kilobytes each time.
var (
	headPool   = sync.Pool{New: func() any { return new([sniffLen]byte) }}
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}
)

func readText(f io.Reader, rel string, p readParams, budget int) (ReadResult, error) {
	start := max(p.Offset, 1)
	limit := p.Limit
	if limit == 0 {
		limit = defaultReadLines
	}
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(f)
	defer func() { br.Reset(nil); readerPool.Put(br) }()
	// The page fits the output budget with room for the notes.
	pageBudget := max(budget-400, 200)
	var out, raw strings.Builder
	used := 0
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
			if n := utf8.RuneCountInString(entry); used+n > pageBudget || out.Len()+len(entry) > maxReadBytes {
				capped = true
			} else {
				used += n
				out.WriteString(entry)
				raw.WriteString(text + "\n")
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
		return ReadResult{Path: rel, Kind: "empty", Counted: true, text: fmt.Sprintf("%s is empty (0 lines)", rel)}, nil
	}
	if start > total {
		return ReadResult{}, fmt.Errorf("offset %d is past the end of %s, which has %d lines", start, rel, total)
	}
	last := start + shown - 1
	var notes []string
	if last < total || uncounted {
		why := "limit"
		if capped {
			why = fmt.Sprintf("output budget of %d characters", budget)
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
	return ReadResult{Path: rel, Kind: "text", FirstLine: start, LastLine: last, TotalLines: total, Counted: !uncounted,
		Content: raw.String(), Notes: notes, text: s}, nil
}

func readImage(f *os.File, rel, kind string, size int64) (ReadResult, error) {
	if size > maxImageBytes {
		return ReadResult{}, fmt.Errorf("%s is a %s image of %d bytes, over the %d MiB limit for images", rel, kind, size, maxImageBytes>>20)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ReadResult{}, fmt.Errorf("cannot read %s: %v", rel, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return ReadResult{}, fmt.Errorf("cannot read %s: %v", rel, err)
	}
	img := mcp.NewImageContent(base64.StdEncoding.EncodeToString(data), kind)
	return ReadResult{Path: rel, Kind: "image", MimeType: kind, Bytes: int64(len(data)),
		text: fmt.Sprintf("%s (%s, %d bytes)", rel, kind, len(data)), image: &img}, nil
}

func listDir(g *pathguard.Guard, abs, rel string, budget int) (ReadResult, error) {
	entries, err := g.ReadDir(abs)
	if err != nil {
		return ReadResult{}, fmt.Errorf("cannot list %s: %v", rel, err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	res := ReadResult{Path: rel, Kind: "folder", Entries: []string{}}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is a folder with %s:\n", rel, textcut.Count(len(entries), "entry", "entries"))
	for i, e := range entries {
		if i == maxDirEntries || b.Len() > budget-200 {
			more := fmt.Sprintf("… and %d more (read a subfolder, or use ast_grep/lsp to find files)", len(entries)-i)
			res.Notes = append(res.Notes, more)
			b.WriteString(more + "\n")
			break
		}
		name := e.Name()
		if e.IsDir() {
			name += "/"
		} else if e.Type()&os.ModeSymlink != 0 {
			name += "@"
		}
		b.WriteString(name + "\n")
		res.Entries = append(res.Entries, name)
	}
	res.text = strings.TrimRight(b.String(), "\n")
	return res, nil
}
