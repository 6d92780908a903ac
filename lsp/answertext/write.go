package answertext

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
)

// WriteReport is what the diagnostics after a write found, or what came
// late for earlier writes.
type WriteReport struct {
	Files []diag.Verdict
	// New and Fixed are the verdicts' New and Fixed as diagnostics (paths
	// relative to the root), for the text.
	New, Fixed []diag.Diagnostic
	// Others is what the write did to the files using what it changed
	// (WRT-6), nil when it changed no signature or name.
	Others *OthersReport
	// Said are the reasons for not checking that an earlier result of the
	// run gave in full: the text says them in a few words (a checkout
	// without rust-analyzer is not told so at length on every write).
	Said map[string]bool
}

// Add appends a verdict and the diagnostics behind its New and Fixed.
func (r *WriteReport) Add(v diag.Verdict, fresh, fixed []diag.Diagnostic) {
	v.New, v.Fixed = diag.Findings(fresh), diag.Findings(fixed)
	r.Files = append(r.Files, v)
	r.New = append(r.New, fresh...)
	r.Fixed = append(r.Fixed, fixed...)
}

// maxFixedShown bounds the fixed diagnostics listed in the text.
const maxFixedShown = 20

// Text is what the agent reads: nothing of a file checked clean with
// nothing gone, the new and fixed diagnostics, and one line for the files
// not checked.
func (r *WriteReport) Text() string {
	var parts []string
	var after []string
	for _, v := range r.Files {
		if v.After != nil {
			after = append(after, fmt.Sprintf("after the write of %s %s ago (%s)", v.After.File, agoText(v.After.SecondsAgo), v.After.Tool))
		}
	}
	if len(after) > 0 {
		head := "Diagnostics that came late, " + strings.Join(after, "; ")
		if len(r.New) == 0 && len(r.Fixed) == 0 {
			head += ": checked, nothing new"
		}
		parts = append(parts, head)
	}
	if len(r.New) > 0 {
		head := "New diagnostics after this write:\n"
		if len(after) > 0 {
			head = "New:\n"
		}
		parts = append(parts, head+FormatDiagnostics("", r.New))
	}
	if len(r.Fixed) > 0 {
		var b strings.Builder
		for i, d := range r.Fixed {
			if i == maxFixedShown {
				fmt.Fprintf(&b, "... and %d more fixed\n", len(r.Fixed)-i)
				break
			}
			fmt.Fprintf(&b, "fixed: %s: %s\n", d.File, oneLine(d.Message))
		}
		parts = append(parts, strings.TrimRight(b.String(), "\n"))
	}
	if line := notChecked(r.Files, r.Said); line != "" {
		parts = append(parts, line)
	}
	if r.Others != nil {
		if t := r.Others.Text(); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// notChecked is one line naming the files not checked, grouped by why; a
// why the run was told before (said) is given in a few words.
func notChecked(vs []diag.Verdict, said map[string]bool) string {
	var whys []string
	files := map[string][]string{}
	for _, v := range vs {
		if v.State == diag.Checked {
			continue
		}
		why := v.Why
		if said[why] {
			why = "no server, for the reason given earlier"
			if v.State == diag.ServerFailed {
				why = "its server does not run, for the reason given earlier"
			}
		}
		if v.State == diag.TimedOut {
			why += "; what comes later is reported on the next result"
		}
		if _, seen := files[why]; !seen {
			whys = append(whys, why)
		}
		files[why] = append(files[why], v.File)
	}
	if len(whys) == 0 {
		return ""
	}
	var groups []string
	for _, why := range whys {
		fs := files[why]
		shown := fs
		if len(fs) > maxNotCheckedShown {
			shown = append(slices.Clone(fs[:maxNotCheckedShown]), fmt.Sprintf("%d more", len(fs)-maxNotCheckedShown))
		}
		groups = append(groups, fmt.Sprintf("%s (%s)", strings.Join(shown, ", "), why))
	}
	return "Not checked for diagnostics: " + strings.Join(groups, "; ")
}

// maxNotCheckedShown bounds the files named for one reason.
const maxNotCheckedShown = 5

// agoText is a number of seconds as the text says it.
func agoText(sec int) string {
	if sec < 120 {
		return fmt.Sprintf("%d s", sec)
	}
	return fmt.Sprintf("%d min", sec/60)
}

// Data is the report's structured content: a verdict per file.
func (r *WriteReport) Data() map[string]any {
	m := map[string]any{"files": r.Files}
	if o := r.Others; o != nil {
		m["other_files"] = o.Files
		m["changed"] = o.Changed
		if o.More > 0 {
			m["other_files_not_checked"] = o.More
		}
	}
	return m
}

// OthersReport is what a write did to the files using what it changed.
type OthersReport struct {
	// Changed are the definitions whose signature or name changed, by
	// written file (relative).
	Changed map[string][]string
	Files   []diag.Verdict
	// More counts the files using them that were not checked (over the
	// bound).
	More int
	// New and Fixed are what the other files' checks found, as
	// diagnostics (paths relative to the root).
	New, Fixed []diag.Diagnostic
}

// Text is what the agent reads of the other files: their new
// diagnostics, what was fixed, and which were not checked.
func (r *OthersReport) Text() string {
	var names []string
	for _, f := range slices.Sorted(maps.Keys(r.Changed)) {
		names = append(names, fmt.Sprintf("%s in %s", strings.Join(r.Changed[f], ", "), f))
	}
	what := fmt.Sprintf("the signature or name of %s changed", strings.Join(names, "; "))
	checked, unchecked := 0, []string{}
	for _, v := range r.Files {
		if v.State == diag.Checked {
			checked++
		} else {
			unchecked = append(unchecked, fmt.Sprintf("%s (%s)", v.File, v.Why))
		}
	}
	var parts []string
	switch {
	case len(r.New) > 0:
		parts = append(parts, fmt.Sprintf("In other files (%s; %d files using them checked):\n%s", what, checked, FormatDiagnostics("", r.New)))
	case checked > 0:
		parts = append(parts, fmt.Sprintf("In other files: %s; %d files using them checked, nothing new.", what, checked))
	}
	for i, d := range r.Fixed {
		if i == maxFixedShown {
			parts = append(parts, fmt.Sprintf("... and %d more fixed in other files", len(r.Fixed)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("fixed: %s: %s", d.File, oneLine(d.Message)))
	}
	if len(unchecked) > 0 {
		parts = append(parts, "Other files not checked: "+strings.Join(unchecked, "; "))
	}
	if r.More > 0 {
		parts = append(parts, fmt.Sprintf("%d more files use them and were not checked (over the bound of %d); ask `lsp diagnostics` on them or `code_graph callers`.", r.More, lsp.MaxOtherFiles))
	}
	return strings.Join(parts, "\n")
}
