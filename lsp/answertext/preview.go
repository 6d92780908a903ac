package answertext

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
)

// maxPreviewShown bounds the diagnostics a preview's text lists, each of
// new and fixed.
const maxPreviewShown = 20

// FormatPreview is what an agent reads of a preview: what accepting would
// introduce, quoted, what it would fix, and each file not checked and why.
func FormatPreview(p *lsp.Preview) string {
	var fresh []diag.Finding
	var files []string
	var notes []string
	servers := map[string]bool{}
	checked, others := 0, 0
	all := append(slices.Clip(p.Files), p.Others...)
	for i, v := range all {
		if i >= len(p.Files) && v.State == diag.Checked {
			others++
			checked--
		}
		for range v.New {
			files = append(files, v.File)
		}
		fresh = append(fresh, v.New...)
		switch v.State {
		case diag.Checked:
			checked++
			servers[v.Server] = true
		case diag.TimedOut:
			notes = append(notes, fmt.Sprintf("%s: timed out after %d ms (%s); the preview is incomplete", v.File, v.WaitedMS, v.Server))
		case diag.NoServer:
			notes = append(notes, fmt.Sprintf("%s: not checked: %s", v.File, clip(oneLine(v.Why), 300)))
		case diag.ServerFailed:
			notes = append(notes, fmt.Sprintf("%s: not checked: %s", v.File, clip(oneLine(v.Why), 300)))
		}
	}
	var b strings.Builder
	head := "diagnostics preview"
	if len(servers) > 0 {
		head += " (" + strings.Join(slices.Sorted(maps.Keys(servers)), ", ") + ")"
	}
	switch {
	case len(fresh) > 0:
		fmt.Fprintf(&b, "%s: the change would introduce %s:\n", head, countSeverities(fresh))
		for i, d := range fresh {
			if i == maxPreviewShown {
				fmt.Fprintf(&b, "... and %d more\n", len(fresh)-i)
				break
			}
			writeFinding(&b, files[i], d)
		}
	case checked > 0 && others > 0:
		fmt.Fprintf(&b, "%s: the change introduces no error or warning in the %s checked, nor in the %s using what it changes\n", head,
			textcut.Count(checked, "file", "files"), textcut.Count(others, "other file", "other files"))
	case checked > 0:
		fmt.Fprintf(&b, "%s: the change introduces no error or warning in the %s checked\n", head, textcut.Count(checked, "file", "files"))
	default:
		fmt.Fprintf(&b, "%s: no file was checked\n", head)
	}
	if len(fresh) > 0 && others > 0 {
		fmt.Fprintf(&b, "(%s using what the change alters were checked with it)\n", textcut.Count(others, "other file", "other files"))
	}
	n, total := 0, 0
	for _, v := range all {
		total += len(v.Fixed)
		for _, d := range v.Fixed {
			if n < maxPreviewShown {
				n++
				fmt.Fprintf(&b, "would fix: %s:%d: %s: %s\n", v.File, d.Line, d.Severity, oneLine(d.Message))
			}
		}
	}
	if total > n {
		fmt.Fprintf(&b, "... and %d more fixed\n", total-n)
	}
	for _, note := range notes {
		b.WriteString(note + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// countSeverities says how many of ds are errors and how many warnings
// ("1 error", "2 errors and 1 warning").
func countSeverities(ds []diag.Finding) string {
	errs, warns := 0, 0
	for _, d := range ds {
		if d.Severity == "warning" {
			warns++
		} else {
			errs++
		}
	}
	var parts []string
	if errs > 0 {
		parts = append(parts, textcut.Count(errs, "error", "errors"))
	}
	if warns > 0 {
		parts = append(parts, textcut.Count(warns, "warning", "warnings"))
	}
	return strings.Join(parts, " and ")
}
