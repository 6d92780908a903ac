package notebook

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Image is an image output, for the reader to see as an image.
type Image struct {
	Cell int
	Mime string
	Data []byte
}

// Rendered is a notebook as a model reads it.
type Rendered struct {
	Text      string
	Images    []Image
	Shown     [2]int // the first and last cell shown
	NextCell  int    // the cell to continue from, 0 when all were shown
	ImagesCut int    // images past the limit, not returned
}

// MaxImages bounds the images one rendering returns.
const MaxImages = 10

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// StripANSI removes terminal colour codes (tracebacks carry them).
func StripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

// Render shows cells from first (1-based) on, numbered, with their
// sources and outputs as text and their images apart, within budget
// characters; it stops at the cell that does not fit.
func (nb *Notebook) Render(name string, first, limit, budget int) Rendered {
	var r Rendered
	var b strings.Builder
	kinds := map[string]int{}
	for _, c := range nb.Cells {
		kinds[c.Type]++
	}
	var parts []string
	for _, k := range []string{"code", "markdown", "raw"} {
		if kinds[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
		}
	}
	lang := nb.Language
	if lang == "" {
		lang = "language not given"
	}
	fmt.Fprintf(&b, "%s: Jupyter notebook (nbformat 4, %s), %d cells (%s)\n", name, lang, len(nb.Cells), strings.Join(parts, ", "))
	first = max(first, 1)
	if limit <= 0 {
		limit = len(nb.Cells)
	}
	for i := first; i <= len(nb.Cells) && i < first+limit; i++ {
		text, images := nb.Cells[i-1].render()
		if r.Shown[0] != 0 && utf8.RuneCountInString(b.String())+utf8.RuneCountInString(text) > budget-200 {
			r.NextCell = i
			break
		}
		if r.Shown[0] == 0 && utf8.RuneCountInString(text) > budget-200 {
			text = cut(text, budget-300) + "\n[… this cell is cut to the output budget]\n"
		}
		b.WriteString(text)
		for _, im := range images {
			if len(r.Images) < MaxImages {
				r.Images = append(r.Images, im)
			} else {
				r.ImagesCut++
			}
		}
		if r.Shown[0] == 0 {
			r.Shown[0] = i
		}
		r.Shown[1] = i
	}
	if r.NextCell == 0 && r.Shown[1] < len(nb.Cells) && r.Shown[1] > 0 {
		r.NextCell = r.Shown[1] + 1
	}
	r.Text = strings.TrimRight(b.String(), "\n")
	return r
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

func (c Cell) render() (string, []Image) {
	var b strings.Builder
	head := fmt.Sprintf("── cell %d · %s", c.N, c.Type)
	if c.Type == "code" {
		if c.Count != nil {
			head += fmt.Sprintf(" · In [%d]", *c.Count)
		} else {
			head += " · not run"
		}
	}
	b.WriteString(head + " ──\n")
	if src := strings.TrimRight(c.Source, "\n"); src != "" {
		b.WriteString(src + "\n")
	}
	var images []Image
	for _, o := range c.Outputs {
		switch o.Type {
		case "stream":
			fmt.Fprintf(&b, "[%s]\n%s\n", o.Name, strings.TrimRight(StripANSI(string(o.Text)), "\n"))
		case "error":
			fmt.Fprintf(&b, "[error: %s: %s]\n", o.EName, o.EValue)
			if len(o.Trace) > 0 {
				b.WriteString(strings.TrimRight(StripANSI(strings.Join(o.Trace, "\n")), "\n") + "\n")
			}
		case "execute_result", "display_data":
			label := "display"
			if o.Type == "execute_result" {
				label = "result"
				if o.Count != nil {
					label = fmt.Sprintf("Out [%d]", *o.Count)
				}
			}
			shown := false
			for _, mime := range []string{"image/png", "image/jpeg", "image/gif"} {
				if raw := o.DataText(mime); raw != "" {
					if data, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(raw), "")); err == nil {
						images = append(images, Image{Cell: c.N, Mime: mime, Data: data})
						fmt.Fprintf(&b, "[%s: %s image, %d bytes, returned as an image]\n", label, mime, len(data))
						shown = true
					}
				}
			}
			if t := o.DataText("text/plain"); t != "" && !shown {
				fmt.Fprintf(&b, "[%s]\n%s\n", label, strings.TrimRight(StripANSI(t), "\n"))
				shown = true
			} else if md := o.DataText("text/markdown"); md != "" && !shown {
				fmt.Fprintf(&b, "[%s, markdown]\n%s\n", label, strings.TrimRight(md, "\n"))
				shown = true
			}
			if !shown {
				var mimes []string
				for k := range o.Data {
					mimes = append(mimes, k)
				}
				sort.Strings(mimes)
				fmt.Fprintf(&b, "[%s: %s, not shown as text]\n", label, strings.Join(mimes, ", "))
			}
		}
	}
	return b.String(), images
}
