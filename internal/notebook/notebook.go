// Package notebook reads Jupyter notebooks (nbformat 4) for the tools that
// show and run them: a notebook's cells, their sources and outputs, and the
// byte span of each code cell's outputs and execution count in the file,
// so that new outputs are written back with the rest of the file left byte
// for byte as it was.
package notebook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Notebook is a parsed notebook.
type Notebook struct {
	Raw   []byte
	Cells []Cell
	// Language is the kernel's language from the metadata ("" when not
	// said).
	Language string
	Format   int // nbformat
}

// Cell is one cell.
type Cell struct {
	N       int    // 1-based, over all cells
	Type    string // code, markdown or raw
	Source  string
	Count   *int
	Outputs []Output
	// Spans of the values of "outputs" and "execution_count" in Raw
	// (code cells; [0,0] when the key is absent), and the end of the
	// cell's object (before its closing brace), for keys to add.
	outputs, count [2]int
	end            int
	indent         string // the indentation of the cell's keys
}

// Output is one output of a code cell.
type Output struct {
	Type   string                     `json:"output_type"`
	Name   string                     `json:"name,omitempty"`  // stream: stdout or stderr
	Text   Lines                      `json:"text,omitempty"`  // stream
	Data   map[string]json.RawMessage `json:"data,omitempty"`  // execute_result, display_data
	EName  string                     `json:"ename,omitempty"` // error
	EValue string                     `json:"evalue,omitempty"`
	Trace  []string                   `json:"traceback,omitempty"`
	Count  *int                       `json:"execution_count,omitempty"` // execute_result
}

// TextData is s as a data bundle's text value.
func TextData(s string) json.RawMessage {
	b, _ := json.Marshal(Split(s))
	return b
}

// Lines is a multiline string as nbformat stores it: a string or a list
// of strings.
type Lines string

// UnmarshalJSON reads either form.
func (l *Lines) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = Lines(s)
		return nil
	}
	var parts []string
	if err := json.Unmarshal(b, &parts); err != nil {
		return errors.New("a text that is neither a string nor a list of strings")
	}
	*l = Lines(strings.Join(parts, ""))
	return nil
}

// Split is s as nbformat writes it: lines, each with its newline.
func Split(s string) []string {
	out := []string{}
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// Text is a data bundle's value for mime as text ("" when absent).
func (o Output) DataText(mime string) string {
	raw, ok := o.Data[mime]
	if !ok {
		return ""
	}
	var l Lines
	if l.UnmarshalJSON(raw) != nil {
		return ""
	}
	return string(l)
}

// ErrDuplicateKey is a notebook with a key given twice in one object (the
// top level or a cell): Jupyter, like Python's json, keeps the last and
// shows nothing of the first, so what would run is not what a person
// reviewing the notebook sees.
var ErrDuplicateKey = errors.New("a key given twice")

// DuplicateKeyError says which key is given twice, and where.
type DuplicateKeyError struct {
	Key  string
	Cell int // 0 at the top level
}

func (e *DuplicateKeyError) Error() string {
	where := "at the top level"
	if e.Cell > 0 {
		where = fmt.Sprintf("in cell %d", e.Cell)
	}
	return fmt.Sprintf("the key %q is given twice %s: Jupyter keeps only the last, so the file holds content it does not show; remove one of them", e.Key, where)
}

// Is makes errors.Is(err, ErrDuplicateKey) match.
func (e *DuplicateKeyError) Is(target error) bool { return target == ErrDuplicateKey }

// Parse reads a notebook. Its error says why the data is not one. Keys
// match exactly, as in Jupyter (not Go's case-insensitive field match).
func Parse(raw []byte) (*Notebook, error) {
	if !json.Valid(raw) {
		// Unmarshal checks the whole text before it decodes anything, so
		// this only says where it is not JSON.
		err := json.Unmarshal(raw, new(struct{}))
		return nil, fmt.Errorf("not a notebook: not valid JSON (%v)", err)
	}
	nb := &Notebook{Raw: raw}
	format, err := nb.scan()
	var dup *DuplicateKeyError
	if errors.As(err, &dup) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("not a notebook: %v", err)
	}
	if format == nil || nb.Cells == nil {
		return nil, errors.New("not a notebook: no nbformat or cells")
	}
	if *format != 4 {
		return nil, fmt.Errorf("a notebook of nbformat %d; only nbformat 4 is read", *format)
	}
	nb.Format = 4
	return nb, nil
}

// scan walks the top object with a decoder: its nbformat, the kernel's
// language, and each cell with where its values are.
func (nb *Notebook) scan() (format *int, err error) {
	dec := json.NewDecoder(bytes.NewReader(nb.Raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("the file is not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := key.(string)
		if seen[k] {
			return nil, &DuplicateKeyError{Key: k}
		}
		seen[k] = true
		switch k {
		case "cells":
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return nil, errors.New("cells is not a list")
			}
			nb.Cells = []Cell{}
			for dec.More() {
				if err := nb.scanCell(dec); err != nil {
					var dup *DuplicateKeyError
					if errors.As(err, &dup) {
						return nil, err
					}
					return nil, fmt.Errorf("cell %d: %v", len(nb.Cells)+1, err)
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
		case "nbformat":
			var n json.Number
			if err := dec.Decode(&n); err != nil {
				return nil, errors.New("nbformat is not a number")
			}
			v, err := strconv.Atoi(string(n))
			if err != nil {
				return nil, errors.New("nbformat is not a whole number")
			}
			format = &v
		case "metadata":
			var meta struct {
				Kernelspec struct {
					Language string `json:"language"`
				} `json:"kernelspec"`
				LanguageInfo struct {
					Name string `json:"name"`
				} `json:"language_info"`
			}
			if err := dec.Decode(&meta); err != nil {
				return nil, fmt.Errorf("metadata: %v", err)
			}
			nb.Language = meta.Kernelspec.Language
			if nb.Language == "" {
				nb.Language = meta.LanguageInfo.Name
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
	}
	return format, nil
}

func (nb *Notebook) scanCell(dec *json.Decoder) error {
	c := Cell{N: len(nb.Cells) + 1}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("not an object")
	}
	seen := map[string]bool{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := key.(string)
		if seen[k] {
			return &DuplicateKeyError{Key: k, Cell: c.N}
		}
		seen[k] = true
		if c.indent == "" {
			c.indent = indentBefore(nb.Raw, int(dec.InputOffset()))
		}
		start := valueStart(nb.Raw, int(dec.InputOffset()))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		span := [2]int{start, int(dec.InputOffset())}
		switch k {
		case "cell_type":
			if json.Unmarshal(v, &c.Type) != nil {
				return errors.New("cell_type is not a string")
			}
		case "source":
			var l Lines
			if err := l.UnmarshalJSON(v); err != nil {
				return fmt.Errorf("source: %v", err)
			}
			c.Source = string(l)
		case "execution_count":
			c.count = span
			var n *int
			if json.Unmarshal(v, &n) == nil {
				c.Count = n
			}
		case "outputs":
			c.outputs = span
			if err := json.Unmarshal(v, &c.Outputs); err != nil {
				return fmt.Errorf("outputs: %v", err)
			}
		}
	}
	c.end = int(dec.InputOffset())
	if _, err := dec.Token(); err != nil {
		return err
	}
	if c.Type == "" {
		return errors.New("no cell_type")
	}
	nb.Cells = append(nb.Cells, c)
	return nil
}

// valueStart is where the value after a key starts: past the colon and
// white space.
func valueStart(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r' || raw[i] == ':') {
		i++
	}
	return i
}

// indentBefore is the white space that starts the line of the key ending
// at i.
func indentBefore(raw []byte, i int) string {
	line := bytes.LastIndexByte(raw[:i], '\n') + 1
	j := line
	for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t') {
		j++
	}
	return string(raw[line:j])
}

// Range is which cells to run, parsed from "all", "3", "3-5", "2,4-6".
func Range(spec string, n int) ([]int, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "all" {
		out := make([]int, n)
		for i := range out {
			out[i] = i + 1
		}
		return out, nil
	}
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		from, to, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(strings.TrimSpace(from))
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(strings.TrimSpace(to))
		}
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("cells %q: %q is not a cell number or a range such as 3-5; give numbers, ranges, a comma list of them, or all", spec, part)
		}
		if a < 1 || b < a {
			return nil, fmt.Errorf("cells %q: %q is not a range of cells from 1 up (from ≤ to)", spec, part)
		}
		if b > n {
			return nil, fmt.Errorf("cells %q: the notebook has %d cells, so there is no cell %d", spec, n, min(max(a, n+1), b))
		}
		for i := a; i <= b; i++ {
			if !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	return out, nil
}

// Update is what a run gives a code cell.
type Update struct {
	N       int // the cell, 1-based
	Count   int
	Outputs []Output
}

// Apply returns the notebook's bytes with each updated cell's outputs and
// execution count replaced, written as Jupyter writes them (keys sorted,
// one space of indent a level, lines as lists); the rest is as it was.
func (nb *Notebook) Apply(updates []Update) ([]byte, error) {
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	for _, u := range updates {
		if u.N < 1 || u.N > len(nb.Cells) || nb.Cells[u.N-1].Type != "code" {
			return nil, fmt.Errorf("cell %d is not a code cell", u.N)
		}
		c := nb.Cells[u.N-1]
		level := c.indent
		unit := " "
		if strings.HasPrefix(level, "\t") {
			unit = "\t"
		}
		outs, err := marshal(u.Outputs, level, unit)
		if err != nil {
			return nil, err
		}
		count := strconv.Itoa(u.Count)
		nl := "\n"
		if bytes.IndexByte(nb.Raw, '\n') < 0 {
			nl, level = "", ""
		}
		// Keys added at the cell's end go in nbformat's order: the count
		// before the outputs (the sort below keeps ties in this order).
		if c.count[1] > 0 {
			edits = append(edits, edit{c.count[0], c.count[1], count})
		} else {
			edits = append(edits, edit{c.end, c.end, "," + nl + level + `"execution_count": ` + count})
		}
		if c.outputs[1] > 0 {
			edits = append(edits, edit{c.outputs[0], c.outputs[1], outs})
		} else {
			edits = append(edits, edit{c.end, c.end, "," + nl + level + `"outputs": ` + outs})
		}
	}
	// In file order, copied once into a buffer of the final size: a
	// notebook of many cells is not copied once per edit.
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].from < edits[j].from })
	size := len(nb.Raw)
	for _, e := range edits {
		size += len(e.text) - (e.to - e.from)
	}
	out := make([]byte, 0, size)
	at := 0
	for _, e := range edits {
		out = append(out, nb.Raw[at:e.from]...)
		out = append(out, e.text...)
		at = e.to
	}
	out = append(out, nb.Raw[at:]...)
	// Only values were replaced, and keys added where absent, so the
	// structure stands if the text is JSON; checking that allocates
	// nothing, where parsing again would hold the notebook twice more.
	if !json.Valid(out) {
		return nil, errors.New("the notebook with its new outputs is not valid JSON (a bug)")
	}
	return out, nil
}

// OutputBytes is the size in the file of code cell n's outputs and
// execution count values: what new ones replace.
func (nb *Notebook) OutputBytes(n int) int {
	if n < 1 || n > len(nb.Cells) {
		return 0
	}
	c := nb.Cells[n-1]
	return c.outputs[1] - c.outputs[0] + c.count[1] - c.count[0]
}

// marshal writes outputs as nbformat's writer does: keys sorted, texts as
// lists of lines, no HTML escaping.
func marshal(outputs []Output, prefix, unit string) (string, error) {
	list := make([]map[string]any, 0, len(outputs))
	for _, o := range outputs {
		m := map[string]any{"output_type": o.Type}
		switch o.Type {
		case "stream":
			m["name"] = o.Name
			m["text"] = Split(string(o.Text))
		case "execute_result", "display_data":
			if o.Type == "execute_result" {
				m["execution_count"] = o.Count
			}
			data := map[string]any{}
			for k, v := range o.Data {
				data[k] = v
			}
			m["data"] = data
			m["metadata"] = map[string]any{}
		case "error":
			m["ename"], m["evalue"] = o.EName, o.EValue
			m["traceback"] = append([]string{}, o.Trace...)
		}
		list = append(list, m)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, unit)
	if err := enc.Encode(list); err != nil {
		return "", err
	}
	return strings.TrimRight(b.String(), "\n"), nil
}
