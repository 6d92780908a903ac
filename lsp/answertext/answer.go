// Package answertext is what the lsp family's results say to the agent:
// lsp's answers (package lsp/answer), a diagnostics preview, the approval
// card of a fix and the report after a write, rendered as the text a model
// reads, and the write report's structured content. It runs no server and
// knows nothing of calls or tools; package lsp/lsptool hands it the data.
package answertext

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/registry/textfit"
)

// The engine returns data; these render it as the agent reads it: paths
// relative to the root, 1-based lines, the source line quoted, one
// location a line, long lists cut with a count of the rest (LSP-4, LSP-5).

// untrustedNote is what status and skipped checkers say about trust.
const untrustedNote = "this checkout is not trusted: programs inside it (node_modules/.bin, .venv/bin, venv/bin) are not run " +
	"and checkers that execute its code are skipped; a harness that trusts it sets TrustCheckout (builtin-tools --trust-checkout)"

// maxDiagnosticsShown caps FormatDiagnostics output.
const maxDiagnosticsShown = 100

// where names the position a query was about.
func where(symbol string, occurrence int, file string, line int) string {
	if occurrence > 1 {
		return fmt.Sprintf("%q (occurrence %d) at %s:%d", symbol, occurrence, file, line)
	}
	return fmt.Sprintf("%q at %s:%d", symbol, file, line)
}

// FormatLocation renders one location as "path:line:col: source line".
func FormatLocation(l answer.Location) string {
	switch {
	case l.Outside:
		return fmt.Sprintf("%s:%d:%d (outside the root, not quoted)", l.Path, l.Line, l.Column)
	case l.Column == 0:
		return fmt.Sprintf("%s:%d", l.Path, l.Line)
	}
	return fmt.Sprintf("%s:%d:%d: %s", l.Path, l.Line, l.Column, l.Text)
}

// FormatLocations renders a definition, type_definition, implementation or
// references answer: a header when there are several, one location a line,
// and how many more when the list was cut.
func FormatLocations(r *answer.Locations) string {
	at := where(r.Symbol, r.Occurrence, r.File, r.Line)
	refs := r.Operation == answer.OpReferences
	what := strings.ReplaceAll(r.Operation, "_", " ")
	if r.Total == 0 {
		return fmt.Sprintf("no %s found for %s (%s)", what, at, r.Server)
	}
	var b strings.Builder
	switch {
	case refs:
		fmt.Fprintf(&b, "%d %s to %s:\n", r.Total, plural(r.Total, "reference"), at)
	case r.Total > 1:
		fmt.Fprintf(&b, "%d %ss of %s:\n", r.Total, what, at)
	}
	for _, l := range r.Locations {
		b.WriteString(FormatLocation(l))
		b.WriteByte('\n')
	}
	if more := r.Total - len(r.Locations); more > 0 {
		if refs {
			fmt.Fprintf(&b, "... and %d more (%d shown of %d)\n", more, len(r.Locations), r.Total)
		} else {
			fmt.Fprintf(&b, "... and %d more\n", more)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// FormatHover renders a hover answer.
func FormatHover(h *answer.Hover) string {
	if h.Withheld != "" {
		return fmt.Sprintf("hover for %s withheld: %s (%s)", where(h.Symbol, h.Occurrence, h.File, h.Line), h.Withheld, h.Server)
	}
	if h.Contents == "" {
		return fmt.Sprintf("no hover information for %s (%s)", where(h.Symbol, h.Occurrence, h.File, h.Line), h.Server)
	}
	if h.Truncated {
		return h.Contents + fmt.Sprintf("\n(cut at %d bytes)", answer.MaxHoverBytes)
	}
	return h.Contents
}

// FormatSymbols renders an outline (indented by nesting, line first) or a
// workspace search (each match with its location quoted).
func FormatSymbols(r *answer.Symbols) string {
	var b strings.Builder
	if r.File != "" {
		if r.Total == 0 {
			if r.Query != "" {
				return fmt.Sprintf("no symbol in %s matches %q (%s)", r.File, r.Query, r.Server)
			}
			return fmt.Sprintf("%s declares no symbols (%s)", r.File, r.Server)
		}
		fmt.Fprintf(&b, "%s: %d %s\n", r.File, r.Total, plural(r.Total, "symbol"))
		for _, s := range r.Symbols {
			detail := ""
			if d := oneLine(s.Detail); d != "" {
				detail = "  " + clip(d, 120)
			}
			fmt.Fprintf(&b, "%s%d: %s %s%s\n", strings.Repeat("  ", s.Depth), s.Location.Line, s.Kind, s.Name, detail)
		}
		if more := r.Total - len(r.Symbols); more > 0 {
			fmt.Fprintf(&b, "... and %d more symbols\n", more)
		}
		return strings.TrimRight(b.String(), "\n")
	}
	if r.Total == 0 {
		return fmt.Sprintf("no symbol matches %q in the workspace", r.Query)
	}
	fmt.Fprintf(&b, "%d %s match %q:\n", r.Total, plural(r.Total, "symbol"), r.Query)
	for _, s := range r.Symbols {
		container := ""
		if s.Container != "" {
			container = " in " + s.Container
		}
		fmt.Fprintf(&b, "%s %s%s — %s\n", s.Kind, s.Name, container, FormatLocation(s.Location))
	}
	if more := r.Total - len(r.Symbols); more > 0 {
		fmt.Fprintf(&b, "... and %d more; narrow the query\n", more)
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "(one server failed: %s)\n", f)
	}
	return strings.TrimRight(b.String(), "\n")
}

// FormatCodeActions renders the offered actions, numbered, each enabled
// one with the id lsp_fix takes, with what each would do; canFix says
// whether this mode has lsp_fix, to name it.
func FormatCodeActions(r *answer.CodeActions, canFix bool) string {
	at := where(r.Symbol, r.Occurrence, r.File, r.Line)
	hidden := ""
	if r.HiddenDisabled > 0 {
		hidden = fmt.Sprintf("%s not listed; include_disabled: true lists them", textcut.Count(r.HiddenDisabled, "disabled action", "disabled actions"))
	}
	if len(r.Actions) == 0 {
		if hidden != "" {
			return fmt.Sprintf("no enabled code actions offered for %s (%s); %s", at, r.Server, hidden)
		}
		return fmt.Sprintf("no code actions offered for %s (%s)", at, r.Server)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d code %s for %s:\n", len(r.Actions), plural(len(r.Actions), "action"), at)
	ids := 0
	for i, a := range r.Actions {
		var notes []string
		if a.Kind != "" {
			notes = append(notes, a.Kind)
		}
		if a.Preferred {
			notes = append(notes, "preferred")
		}
		if a.Disabled {
			notes = append(notes, "disabled: "+a.DisabledReason)
		}
		if len(a.Files) > 0 {
			notes = append(notes, "edits "+strings.Join(a.Files, ", "))
		} else if a.RunsCommand {
			notes = append(notes, "runs a server command")
		}
		title := oneLine(a.Title)
		if a.Withheld != "" {
			title = "(title withheld: " + a.Withheld + ")"
		}
		id := ""
		if a.ID != "" {
			id = "[" + a.ID + "] "
			ids++
		}
		fmt.Fprintf(&b, "%d. %s%s", i+1, id, title)
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, "; "))
		}
		b.WriteByte('\n')
	}
	if hidden != "" {
		fmt.Fprintf(&b, "(%s)\n", hidden)
	}
	if ids > 0 && canFix {
		b.WriteString("lsp_fix with one id applies that action (refused if the file changes first)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// FormatFileDiagnostics renders one file's diagnostics under a count by
// severity; root is the supervisor root the diagnostics' paths are under.
func FormatFileDiagnostics(root string, r *answer.FileDiagnostics) string {
	note := ""
	if r.Incomplete {
		note = fmt.Sprintf("\n(note: %s had not finished within %s; these may be incomplete — ask again)",
			r.Server, time.Duration(r.WaitMS)*time.Millisecond)
	}
	if len(r.Diagnostics) == 0 {
		return fmt.Sprintf("no problems reported in %s (%s)%s", r.File, r.Server, note)
	}
	counts := map[diag.Severity]int{}
	for _, d := range r.Diagnostics {
		counts[d.Severity]++
	}
	var parts []string
	for _, sev := range []diag.Severity{diag.SeverityError, diag.SeverityWarning, diag.SeverityInformation, diag.SeverityHint} {
		if n := counts[sev]; n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+plural(n, sev.String()))
		}
	}
	return fmt.Sprintf("%s in %s (%s):\n%s%s", strings.Join(parts, ", "), r.File, r.Server, FormatDiagnostics(root, r.Diagnostics), note)
}

// FormatDiagnostics renders diagnostics one a line as
// "path:line:col: severity: message [code] (source)" with the source line
// quoted under it, paths relative to root, at most 100. It returns "" for
// none.
func FormatDiagnostics(root string, diags []diag.Diagnostic) string {
	if len(diags) == 0 {
		return ""
	}
	ds := slices.Clone(diags)
	slices.SortStableFunc(ds, func(a, b diag.Diagnostic) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	found := diag.Findings(ds)
	var b strings.Builder
	for i, d := range ds {
		if i == maxDiagnosticsShown {
			fmt.Fprintf(&b, "... and %d more diagnostics\n", len(ds)-i)
			break
		}
		rel := d.File
		if r, err := filepath.Rel(root, d.File); err == nil && !strings.HasPrefix(r, "..") {
			rel = filepath.ToSlash(r)
		}
		writeFinding(&b, rel, found[i])
	}
	return strings.TrimRight(b.String(), "\n")
}

// writeFinding writes d, in file rel, as
// "path:line:col: severity: message [code] (source)" and a newline, with
// its source line quoted under it.
func writeFinding(b *strings.Builder, rel string, d diag.Finding) {
	fmt.Fprintf(b, "%s:%d:%d: %s: %s", rel, d.Line, d.Column, d.Severity, oneLine(d.Message))
	if d.Code != "" {
		fmt.Fprintf(b, " [%s]", d.Code)
	}
	if d.Source != "" {
		fmt.Fprintf(b, " (%s)", d.Source)
	}
	b.WriteByte('\n')
	if t := strings.TrimSpace(d.LineText); t != "" {
		fmt.Fprintf(b, "    %s\n", clip(t, 200))
	}
}

// FormatCheck renders diagnostics "*": each checker's command, exit and
// output, or why it did not run, separated by blank lines.
func FormatCheck(r *answer.CheckReport) string {
	var b strings.Builder
	for _, run := range r.Runs {
		dirs := strings.Join(run.Dirs, ", ")
		switch run.Skipped {
		case answer.SkipNoChecker:
			fmt.Fprintf(&b, "%s (%s): %s", run.Language, dirs, run.Reason)
		case answer.SkipRunsCode:
			fmt.Fprintf(&b, "%s (%s): %s was not run: %s, and %s", run.Language, dirs, strings.Join(run.Command, " "), run.Reason, untrustedNote)
		case answer.SkipNotInstalled:
			fmt.Fprintf(&b, "%s in %s: %s is not installed, so the project check cannot run (%s)", run.Language, dirs, run.Command[0], run.Reason)
		default:
			b.WriteString(formatCheckRun(run))
		}
		b.WriteString("\n\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func formatCheckRun(run answer.CheckRun) string {
	var status string
	switch {
	case run.TimedOut:
		status = fmt.Sprintf("stopped at the %s time limit", time.Duration(run.TimeoutMS)*time.Millisecond)
	case run.ExitCode != nil:
		status = fmt.Sprintf("exit %d", *run.ExitCode)
	default:
		status = run.Error
	}
	head := fmt.Sprintf("$ %s   (%s, in %s, %s, %s)", strings.Join(run.Command, " "), run.Language, strings.Join(run.Dirs, ", "),
		status, time.Duration(run.DurationMS)*time.Millisecond)
	if len(run.Output) == 0 {
		if run.ExitCode != nil && *run.ExitCode == 0 && run.Error == "" {
			return head + "\nno problems found"
		}
		return head + "\n(no output)"
	}
	out := head + "\n" + strings.Join(run.Output, "\n")
	if run.MoreLines > 0 {
		out += fmt.Sprintf("\n... and %d more lines", run.MoreLines)
	}
	return out
}

// FormatStatus renders one line per server: whether it runs, can run, or
// which half of marker and binary is missing, with what to do.
func FormatStatus(st *answer.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "language servers for %s:\n", st.Root)
	if st.Trusted {
		b.WriteString("this checkout is trusted: programs inside it (node_modules/.bin, .venv/bin, venv/bin) are preferred to PATH, and checkers that run its code run\n")
	} else {
		b.WriteString(untrustedNote + "\n")
	}
	for _, s := range st.Servers {
		dirs := strings.Join(s.MarkerDirs, ", ")
		fmt.Fprintf(&b, "- %s (%s, %s): ", s.Language, s.ID, strings.Join(s.Extensions, " "))
		switch s.State {
		case answer.StateRunning:
			runs := make([]string, 0, len(s.Running))
			for _, r := range s.Running {
				shared := "this run only"
				if r.Clients > 1 {
					shared = fmt.Sprintf("used by %d runs of this process", r.Clients)
				}
				mem := ""
				if r.MemoryKB > 0 {
					mem = fmt.Sprintf(", %s resident", mib(r.MemoryKB))
				}
				if r.OverBudget && st.Pool != nil {
					mem += fmt.Sprintf(", over the memory budget of %s on its own", mib(st.Pool.BudgetKB))
				}
				runs = append(runs, fmt.Sprintf("%s (pid %d, up %s, %s%s, last used %s ago, %d open files, positions in %s)",
					r.Root, r.PID, time.Duration(r.UptimeSeconds)*time.Second, shared, mem, time.Duration(r.IdleSeconds)*time.Second, r.OpenFiles, r.Encoding))
			}
			fmt.Fprintf(&b, "running for %s", strings.Join(runs, ", "))
		case answer.StateBroken:
			fmt.Fprintf(&b, "NOT available: marker found in %s, and %s is installed but does not run: %s; install it: %s",
				dirs, s.Binary, s.RunError, s.Install)
		case answer.StateAvailable:
			fmt.Fprintf(&b, "available (marker in %s; %s), not started: it starts on the first call for one of its files", dirs, s.Binary)
		case answer.StateNoBinary:
			fmt.Fprintf(&b, "NOT available: marker found in %s, but %s is not installed; install it: %s", dirs, s.Program, s.Install)
		case answer.StateNoMarker:
			fmt.Fprintf(&b, "not used here: %s is installed (%s) but no root marker (%s) is in this checkout", s.Program, s.Binary, strings.Join(s.RootMarkers, ", "))
		default:
			fmt.Fprintf(&b, "not used here: no root marker (%s) in this checkout, and %s is not installed (%s)", strings.Join(s.RootMarkers, ", "), s.Program, s.Install)
		}
		if len(s.Crashes) > 0 {
			crashes := make([]string, 0, len(s.Crashes))
			for _, c := range s.Crashes {
				crashes = append(crashes, fmt.Sprintf("%s: %s at %s", c.Root, c.Error, c.At.Format(time.TimeOnly)))
			}
			fmt.Fprintf(&b, "; last crash: %s", strings.Join(crashes, "; "))
		}
		for _, f := range s.StartFailures {
			fmt.Fprintf(&b, "; failed to start for %s: %s (not retried until %s; lsp reload retries now)", f.Root, f.Error, f.RetryAt.Format(time.TimeOnly))
		}
		if len(s.PassedOver) > 0 {
			fmt.Fprintf(&b, "; not run because the checkout is not trusted: %s", strings.Join(s.PassedOver, ", "))
		}
		if s.CheckerSkipped != "" {
			fmt.Fprintf(&b, "; diagnostics \"*\" skips %s: %s", strings.Join(s.Checker, " "), s.CheckerSkipped)
		}
		b.WriteByte('\n')
	}
	formatPool(&b, st.Pool)
	return strings.TrimRight(b.String(), "\n")
}

// mib renders KiB as whole MiB, or KiB below one.
func mib(kb int64) string {
	if kb < 1024 {
		return fmt.Sprintf("%d KiB", kb)
	}
	return fmt.Sprintf("%d MiB", (kb+512)/1024)
}

// formatPool renders every server of the run's pool (LSP-8): root, state,
// runs holding it, memory and last use, then what the budget stopped.
func formatPool(b *strings.Builder, p *answer.PoolStatus) {
	if p == nil || len(p.Servers) == 0 && len(p.Stopped) == 0 {
		return
	}
	who := "this process's runs"
	if !p.Shared {
		who = "this run (servers of its own)"
	}
	budget := "no memory budget"
	if p.BudgetKB > 0 {
		budget = "memory budget " + mib(p.BudgetKB)
	}
	fmt.Fprintf(b, "servers of %s: %d, %s resident (%s)\n", who, len(p.Servers), mib(p.UsedKB), budget)
	where := func(root string, other bool) string {
		if other {
			return "another folder"
		}
		return root
	}
	for _, s := range p.Servers {
		runs := fmt.Sprintf("%d runs", s.Clients)
		if s.Clients == 1 {
			runs = "1 run"
		}
		switch {
		case s.ThisRun && s.Clients == 1:
			runs = "this run"
		case s.ThisRun:
			runs += ", this one included"
		}
		if s.Processes > 1 {
			runs += fmt.Sprintf(", shared with %d other processes through the broker", s.Processes-1)
		}
		trust := "untrusted"
		if s.Trusted {
			trust = "trusted"
		}
		line := fmt.Sprintf("- %s for %s (%s): %s, held by %s", s.Server, where(s.Root, s.OtherFolder), trust, strings.ReplaceAll(s.State, "_", " "), runs)
		if s.State != pool.Starting {
			line += fmt.Sprintf(", %s resident, last used %s ago", mib(s.MemoryKB), time.Duration(s.IdleSeconds)*time.Second)
		}
		if s.OverBudget {
			line += ", over the memory budget on its own"
		}
		b.WriteString(line + "\n")
	}
	if br := p.Broker; br != nil {
		budget := "no memory budget"
		if br.BudgetKB > 0 {
			budget = "memory budget " + mib(br.BudgetKB)
		}
		if br.BudgetKB != p.BudgetKB {
			// One budget over the broker's servers: set when it started.
			own := "none"
			if p.BudgetKB > 0 {
				own = mib(p.BudgetKB)
			}
			budget += ", set when the broker started: it governs these servers, not this process's budget (" + own + ")"
		}
		fmt.Fprintf(b, "servers of the broker (every process of this user): %d, %s resident (%s)\n", len(br.Servers), mib(br.UsedKB), budget)
		for _, s := range br.Servers {
			trust := "untrusted"
			if s.Trusted {
				trust = "trusted"
			}
			line := fmt.Sprintf("- %s for %s (%s): %s, %d processes connected, %s resident, last used %s ago", s.Server, where(s.Root, s.OtherFolder), trust,
				strings.ReplaceAll(s.State, "_", " "), s.Processes, mib(s.MemoryKB), time.Duration(s.IdleSeconds)*time.Second)
			if s.OverBudget {
				line += ", over the memory budget on its own"
			}
			b.WriteString(line + "\n")
		}
	}
	for _, st := range p.Stopped {
		fmt.Fprintf(b, "stopped for the memory budget at %s: %s for %s (%s resident; the servers held %s of %s), to start %s; a run using it starts it again on its next call\n",
			st.At.Format(time.TimeOnly), st.Server, where(st.Root, st.OtherFolder), mib(st.MemoryKB), mib(st.UsedKB), mib(st.BudgetKB), st.For)
	}
}

// FormatReload says which servers were restarted.
func FormatReload(r *answer.ReloadResult) string {
	if r.All {
		if len(r.Servers) == 0 {
			return "no language server is running; nothing to reload (servers start on the first call that needs them)"
		}
		lines := make([]string, 0, len(r.Servers))
		for _, s := range r.Servers {
			lines = append(lines, fmt.Sprintf("stopped %s for %s; started it again", s.Server, s.Root))
		}
		return strings.Join(lines, "\n")
	}
	lines := make([]string, 0, len(r.Servers))
	for _, s := range r.Servers {
		verb := "started"
		if s.WasRunning {
			verb = "restarted"
		}
		lines = append(lines, fmt.Sprintf("%s %s for %s (pid %d, ready in %s)", verb, s.Server, s.Root, s.PID, time.Duration(s.ReadyMS)*time.Millisecond))
	}
	return strings.Join(lines, "\n")
}

// FormatFix renders what lsp_fix applied.
func FormatFix(r *answer.FixResult) string {
	what := FixName(r)
	var b strings.Builder
	if r.Unchanged {
		fmt.Fprintf(&b, "%s for %s (%s): the server offered no change; no file was written", what, r.File, r.Server)
	} else {
		fmt.Fprintf(&b, "applied %s (%s): %s in %s", what, r.Server, textcut.Count(r.Edits, "edit", "edits"), textcut.Count(len(r.Files), "file", "files"))
		if r.Command != "" {
			fmt.Fprintf(&b, " (and ran the server command %s)", r.Command)
		}
		for _, f := range r.Files {
			fmt.Fprintf(&b, "\n  %s: %s", f.Path, f.What())
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\nnote: %s", n)
	}
	return b.String()
}

// FormatRename renders a rename: totals, then one file a line.
func FormatRename(r *answer.RenameResult) string {
	var b strings.Builder
	symbol := fmt.Sprintf("%q", r.Symbol)
	if r.Occurrence > 1 {
		symbol += fmt.Sprintf(" (occurrence %d)", r.Occurrence)
	}
	fmt.Fprintf(&b, "renamed %s to %q (%s): %s in %s\n", symbol, r.NewName, r.Server,
		textcut.Count(r.Edits, "edit", "edits"), textcut.Count(len(r.Files), "file", "files"))
	for _, f := range r.Files {
		fmt.Fprintf(&b, "  %s: %s\n", f.Path, f.What())
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return strings.TrimRight(b.String(), "\n")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// oneLine keeps a multi-line message on one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ⏎ ")), " ")
}

// clip cuts s to at most n bytes (and an ellipsis) on a rune boundary.
func clip(s string, n int) string { return textcut.BytesEllipsis(s, n) }

// FormatCalls renders incoming_calls or outgoing_calls: a header, then one
// call site a line — the site quoted, then the caller (←) or callee (→)
// and where it is declared — within the output budget, with how many sites
// were left out.
func FormatCalls(r *answer.Calls, budget textfit.Budget) string {
	at := where(r.Symbol, r.Occurrence, r.File, r.Line)
	// The function as the server names it, when that is not the symbol.
	fn := at
	if r.Function != "" && r.Function != r.Symbol {
		fn = fmt.Sprintf("%s (%s)", r.Function, at)
	}
	incoming := r.Operation == answer.OpIncomingCalls
	if r.Total == 0 {
		if incoming {
			return fmt.Sprintf("no calls of %s found (%s)", fn, r.Server)
		}
		return fmt.Sprintf("%s makes no calls (%s)", fn, r.Server)
	}
	var head string
	if incoming {
		head = fmt.Sprintf("%s of %s from %s (%s):", textcut.Count(r.Total, "call", "calls"), fn,
			textcut.Count(r.Functions, "function", "functions"), r.Server)
	} else {
		head = fmt.Sprintf("%s made by %s to %s (%s):", textcut.Count(r.Total, "call", "calls"), fn,
			textcut.Count(r.Functions, "function", "functions"), r.Server)
	}
	room := budget.Reserve(len(head) + 120).Chars()
	var b strings.Builder
	b.WriteString(head)
	shown := 0
	for _, s := range r.Sites {
		line := "\n" + formatCallSite(s, incoming)
		if shown > 0 && b.Len()+len(line) > room {
			break
		}
		b.WriteString(line)
		shown++
	}
	if more := r.Total - shown; more > 0 {
		why := "the output budget"
		if shown == len(r.Sites) {
			why = fmt.Sprintf("the cap of %d sites", answer.MaxCallSites)
		}
		fmt.Fprintf(&b, "\n… %d more call %s left out (%d shown of %d, cut at %s)", more, plural(more, "site"), shown, r.Total, why)
		if shown < len(r.Sites) {
			fmt.Fprintf(&b, "; the structured result lists %d", len(r.Sites))
		}
	}
	return b.String()
}

// formatCallSite is "path:line:col: source  ← caller (kind, path:line)".
func formatCallSite(s answer.CallSite, incoming bool) string {
	arrow := "→"
	if incoming {
		arrow = "←"
	}
	var notes []string
	if s.Kind != "" {
		notes = append(notes, s.Kind)
	}
	switch {
	case s.Defined.Outside:
		// Named, never located: a path outside the root is not shown.
		notes = append(notes, "declared outside the root")
	case s.Defined.Path != "":
		notes = append(notes, fmt.Sprintf("%s:%d", s.Defined.Path, s.Defined.Line))
	}
	site := FormatLocation(s.Site)
	if s.Site.Outside {
		site = "(a call outside the root, not quoted)"
	}
	return fmt.Sprintf("%s  %s %s (%s)", site, arrow, s.Name, strings.Join(notes, ", "))
}
