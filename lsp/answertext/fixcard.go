package answertext

import (
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
)

// FixName is how a card names a fix: its id or kind, and title.
func FixName(r *answer.FixResult) string {
	what := r.ID
	if what == "" {
		what = strings.ReplaceAll(r.Kind, "_", " ")
	}
	if r.Title != "" {
		what += fmt.Sprintf(" %q", oneLine(r.Title))
	}
	return what
}

// FixCard is the approval card of a planned fix: what it is, the files
// its edit changes and their diff, and the command it runs after.
func FixCard(p *lsp.FixPlan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "lsp_fix %s for %s (%s)", FixName(&p.Result), p.Result.File, p.Result.Server)
	if len(p.Changes) > 0 {
		b.WriteString(" ")
		b.WriteString(ChangesCard(p.Changes, p.Result.Edits))
	}
	for _, n := range p.Result.Notes {
		fmt.Fprintf(&b, "\nnote: %s", n)
	}
	if p.Command != "" {
		then := "It then runs"
		if len(p.Changes) == 0 {
			then = "It runs"
		}
		fmt.Fprintf(&b, "\n%s %s's command %s: what that changes is not known until it runs; each edit it sends will be shown for approval before it is written.",
			then, p.Result.Server, p.Command)
	}
	return b.String()
}

// maxCardDiff bounds the diff an approval card shows.
const maxCardDiff = 4000

// ChangesCard lists the files an edit changes and its diff, cut at
// maxCardDiff with a digest of the whole change, so one card approves one
// change.
func ChangesCard(changes []answer.FileChange, edits int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "changes %s (%s):", textcut.Count(len(changes), "file", "files"), textcut.Count(edits, "edit", "edits"))
	var diff strings.Builder
	sum := sha256.New()
	for _, f := range changes {
		var what []string
		from, to := "a/"+f.Path, "b/"+f.Path
		switch {
		case f.Deleted:
			what, to = append(what, "deleted"), "/dev/null"
		case f.Created:
			what, from = append(what, "created"), "/dev/null"
		case f.RenamedFrom != "":
			what, from = append(what, "renamed from "+f.RenamedFrom), "a/"+f.RenamedFrom
		}
		if f.Edits > 0 {
			what = append(what, textcut.Count(f.Edits, "edit", "edits"))
		}
		fmt.Fprintf(&b, "\n  %s: %s", f.Path, strings.Join(what, ", "))
		d := udiff.Unified(from, to, f.Before, f.After)
		if d == "" && f.RenamedFrom != "" {
			d = fmt.Sprintf("--- %s\n+++ %s\n(moved, content unchanged)\n", from, to)
		}
		diff.WriteString(d)
		fmt.Fprintf(sum, "%s\x00%s\x00%s\x00%s\x00", f.Path, f.RenamedFrom, f.Before, f.After)
	}
	b.WriteString("\ndiff:\n")
	b.WriteString(textcut.Ellipsis(strings.TrimRight(diff.String(), "\n"), maxCardDiff))
	if diff.Len() > maxCardDiff {
		fmt.Fprintf(&b, "\n(the diff is cut; change %x)", sum.Sum(nil)[:8])
	}
	return b.String()
}
