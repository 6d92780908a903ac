package debugtool

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/dap/stack"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
)

// sessionLine is the header of every result that has a session.
func sessionLine(s result.SessionInfo) string {
	state := s.State
	if s.State == "stopped" && s.Stop > 0 {
		state = fmt.Sprintf("stopped (stop %d)", s.Stop)
	}
	return fmt.Sprintf("[%s · %s · %s · %s left]", s.Adapter, s.Program, state, (time.Duration(s.RemainingSeconds) * time.Second).String())
}

func formatFrameSource(f *stack.Frame) string {
	var b strings.Builder
	for _, l := range f.Source {
		mark := "  "
		if l.Current {
			mark = "→ "
		}
		fmt.Fprintf(&b, "  %s%5d │ %s\n", mark, l.Line, l.Text)
	}
	return b.String()
}

func where(f *stack.Frame) string {
	switch {
	case f == nil:
		return "an unknown place"
	case f.File == "":
		return f.Name
	case f.Missing:
		return fmt.Sprintf("%s:%d in %s (no such file in the checkout, not quoted)", f.File, f.Line, f.Name)
	case f.Outside:
		return fmt.Sprintf("%s:%d in %s (outside the root, not quoted)", f.File, f.Line, f.Name)
	}
	return fmt.Sprintf("%s:%d in %s", f.File, f.Line, f.Name)
}

// expands says how a variable with a reference expands: the adapter's
// count, or "expandable" when it gave none (never "0 children").
func expands(v stack.Var) string {
	switch {
	case v.Named > 0 && v.Indexed > 0:
		return fmt.Sprintf("%s, %s", textcut.Count(v.Named, "named child", "named children"), textcut.Count(v.Indexed, "element", "elements"))
	case v.Children() > 0:
		return textcut.Count(v.Children(), "child", "children")
	}
	return "expandable"
}

// hiddenNote says what a listing left out as noise.
func hiddenNote(hidden []string) string {
	var groups, slots []string
	for _, h := range hidden {
		if strings.HasPrefix(h, "~r") {
			slots = append(slots, h)
		} else {
			groups = append(groups, h)
		}
	}
	var parts []string
	if len(groups) > 0 {
		noun := " group"
		if len(groups) > 1 {
			noun = " groups"
		}
		parts = append(parts, `debugpy's "`+strings.Join(groups, `" and "`)+`"`+noun)
	}
	if len(slots) > 0 {
		parts = append(parts, strings.Join(slots, ", ")+" (a result, unset until the function returns)")
	}
	return strings.Join(parts, "; ")
}

func formatVars(vars []stack.Var, more int) string {
	var parts []string
	for _, v := range vars {
		s := v.Name + " = " + textcut.Ellipsis(strings.ReplaceAll(v.Value, "\n", " "), 120)
		if v.Type != "" {
			s += " (" + v.Type + ")"
		}
		if v.Ref != "" {
			s += " [ref " + v.Ref + "]"
		}
		parts = append(parts, s)
	}
	out := strings.Join(parts, "; ")
	if more > 0 {
		out += fmt.Sprintf("; … %d more (call scopes with the frame_id)", more)
	}
	return out
}

// formatLocals is a stop's locals line, with what it left out.
func formatLocals(r *result.StopResult) string {
	if len(r.Locals) == 0 && len(r.LocalsHidden) == 0 {
		return ""
	}
	s := "locals: " + formatVars(r.Locals, r.LocalsMore)
	if len(r.LocalsHidden) > 0 {
		s += " (not shown: " + hiddenNote(r.LocalsHidden) + ")"
	}
	return s + "\n"
}

func neverHit(bps []breakpoint.Source) string {
	var parts []string
	for _, b := range bps {
		parts = append(parts, fmt.Sprintf("%s %s:%d", b.ID, b.File, b.Line))
	}
	return strings.Join(parts, ", ")
}

func neverHitFuncs(fs []breakpoint.Function) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, f.ID+" "+f.Name)
	}
	return strings.Join(parts, ", ")
}

func formatStop(r *result.StopResult) string {
	var b strings.Builder
	b.WriteString(sessionLine(r.Session) + "\n")
	switch r.Outcome {
	case "stopped":
		st := r.Stop
		why := st.Reason
		if len(st.Breakpoints) > 0 {
			why += " " + strings.Join(st.Breakpoints, ", ")
		}
		if d, _, _ := strings.Cut(st.Description, "\n"); d != "" && d != st.Reason && !strings.EqualFold(d, st.Reason) {
			why += ": " + d // debugpy's may hold the message's lines, shown below
		}
		if r.Core != nil {
			fmt.Fprintf(&b, "Core file %s (read-only: nothing runs, so continue, steps, run_to_line, restart, set_variable and watch are refused).\n", r.Core.File)
			fmt.Fprintf(&b, "Crashed at %s (%s; thread %d).\n", where(r.Frame), why, st.ThreadID)
		} else {
			fmt.Fprintf(&b, "Stopped at %s (%s; stop %d, thread %d).\n", where(r.Frame), why, st.N, st.ThreadID)
		}
		if r.Exception != "" {
			fmt.Fprintf(&b, "Exception: %s\n", textcut.Ellipsis(r.Exception, 1500))
		}
		if r.Frame != nil {
			b.WriteString(formatFrameSource(r.Frame))
			if r.Frame.Newer {
				b.WriteString("note: the source file changed after the program was built; the lines may not match\n")
			}
			b.WriteString(formatLocals(r))
			fmt.Fprintf(&b, "frame_id %s\n", r.Frame.ID)
		}
	case "running":
		b.WriteString("The program is still running.\n")
	case "exited":
		if r.ExitCode != nil {
			fmt.Fprintf(&b, "The program exited with code %d.\n", *r.ExitCode)
		} else {
			b.WriteString("The program ended.\n")
		}
	case "ended":
		fmt.Fprintf(&b, "The session ended: %s.\n", r.Ended)
	}
	if c := r.Core; c != nil && r.Outcome == "stopped" {
		b.WriteString(formatCore(c))
	}
	if r.Restart != "" {
		b.WriteString("Restarted (" + r.Restart + "): the same program, arguments and breakpoints, within the same time limit.\n")
	}
	if rt := r.RunTo; rt != nil {
		b.WriteString(formatRunTo(rt, r.Outcome) + "\n")
	}
	if len(r.NeverHit) > 0 {
		b.WriteString("Breakpoints verified but never hit: " + neverHit(r.NeverHit) + "\n")
	}
	if len(r.NeverHitFuncs) > 0 {
		b.WriteString("Function breakpoints never hit: " + neverHitFuncs(r.NeverHitFuncs) + "\n")
	}
	if e := r.Exceptions; e != nil {
		b.WriteString(formatExceptions(r.Session.Adapter, e) + "\n")
	}
	if r.BuildMS > 0 {
		fmt.Fprintf(&b, "Built in %s, started in %s.\n", time.Duration(r.BuildMS)*time.Millisecond, time.Duration(r.StartMS)*time.Millisecond)
	}
	if r.Note != "" {
		b.WriteString("note: " + r.Note + "\n")
	}
	if r.Output != "" {
		b.WriteString("output:\n" + strings.TrimRight(r.Output, "\n") + "\n")
		if r.OutputMore > 0 {
			fmt.Fprintf(&b, "[%d earlier bytes of output not shown; call output]\n", r.OutputMore)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func formatAdapters(rows []adapter.Status) string {
	var b strings.Builder
	b.WriteString("Debug adapters for this checkout (a marker file and the adapter's program are both needed):\n")
	for _, a := range rows {
		var state string
		switch a.State {
		case adapter.StateAvailable:
			state = fmt.Sprintf("available: %s; markers in %s", a.Binary, strings.Join(a.MarkerDirs, ", "))
			state += interpreterNote(a)
		case adapter.StateNoMarker:
			state = fmt.Sprintf("installed (%s), but no %s in the checkout; it still debugs a program you name", a.Binary, strings.Join(a.Markers, " or "))
			state += interpreterNote(a)
		case adapter.StateNoBinary:
			state = fmt.Sprintf("markers in %s, but the adapter is not installed: %s", strings.Join(a.MarkerDirs, ", "), a.Install)
		default:
			state = fmt.Sprintf("not installed (%s) and no %s here", a.Install, strings.Join(a.Markers, " or "))
		}
		if a.Why != "" {
			state += " (" + a.Why + ")"
		}
		fmt.Fprintf(&b, "  %s (%s): %s\n", a.ID, a.Language, state)
		if a.Watchpoints {
			b.WriteString("    watchpoints (watch): yes\n")
		} else if a.WatchpointsNote != "" {
			fmt.Fprintf(&b, "    watchpoints (watch): not here: %s\n", a.WatchpointsNote)
		} else {
			b.WriteString("    watchpoints (watch): no, it has no data breakpoints\n")
		}
		if len(a.Exceptions) > 0 {
			fmt.Fprintf(&b, "    exceptions: %s", strings.Join(a.Exceptions, ", "))
			if a.ExceptionNote != "" {
				b.WriteString(" — " + a.ExceptionNote)
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// interpreterNote says which Python a debugpy launch runs, and why it
// would fail when it would.
func interpreterNote(a adapter.Status) string {
	if a.Interpreter == "" {
		return ""
	}
	s := "; programs run with " + a.Interpreter
	if a.InterpreterProblem != "" {
		s += ", but " + a.InterpreterProblem
	}
	return s
}

func formatBreakpointList(bps []breakpoint.Source) string {
	if len(bps) == 0 {
		return "no breakpoints"
	}
	var b strings.Builder
	for _, bp := range bps {
		fmt.Fprintf(&b, "  %s %s:%d", bp.ID, bp.File, bp.Line)
		var notes []string
		if bp.BoundLine > 0 {
			notes = append(notes, fmt.Sprintf("bound at line %d", bp.BoundLine))
		}
		if bp.Condition != "" {
			notes = append(notes, "if "+bp.Condition)
		}
		if bp.HitCondition != "" {
			notes = append(notes, "hits "+bp.HitCondition)
		}
		if bp.LogMessage != "" {
			notes = append(notes, fmt.Sprintf("logs %q", bp.LogMessage))
		}
		if bp.Unsupported != "" {
			notes = append(notes, "the adapter does not support "+bp.Unsupported+", so it was left out")
		}
		if bp.Hits > 0 {
			notes = append(notes, textcut.Count(bp.Hits, "hit", "hits"))
		}
		if len(notes) > 0 {
			b.WriteString(" (" + strings.Join(notes, "; ") + ")")
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// placed is what a breakpoint's line adds: that it waits for the next
// launch, or why the adapter did not verify it (none when it gave no
// reason).
func placed(pending, verified bool, msg, none string) string {
	switch {
	case pending:
		return " — sent at the next launch"
	case verified:
		return ""
	case msg == "":
		msg = none
	}
	return " — not verified: " + msg
}

func formatBreakpoints(r *result.BreakpointsResult) string {
	var b strings.Builder
	if r.Session != nil {
		b.WriteString(sessionLine(*r.Session) + "\n")
	}
	b.WriteString("Breakpoints:\n")
	for _, bp := range r.Breakpoints {
		b.WriteString(formatBreakpointList([]breakpoint.Source{bp}) + placed(r.Pending, bp.Verified, bp.Message, "the adapter could not place it yet") + "\n")
	}
	for _, f := range r.Functions {
		b.WriteString(formatFunc(f) + placed(r.Pending, f.Verified, f.Message, "the adapter could not place it") + "\n")
	}
	if len(r.Breakpoints) == 0 && len(r.Functions) == 0 {
		b.WriteString("  none\n")
	}
	if r.Note != "" {
		b.WriteString("note: " + r.Note + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// formatFunc is one function breakpoint's line.
func formatFunc(f breakpoint.Function) string {
	s := fmt.Sprintf("  %s function %s", f.ID, f.Name)
	var notes []string
	if f.File != "" {
		notes = append(notes, fmt.Sprintf("at %s:%d", f.File, f.Line))
	}
	if f.Condition != "" {
		notes = append(notes, "if "+f.Condition)
	}
	if f.HitCondition != "" {
		notes = append(notes, "hits "+f.HitCondition)
	}
	if f.Unsupported != "" {
		notes = append(notes, "the adapter does not support "+f.Unsupported+", so it was left out")
	}
	if f.Hits > 0 {
		notes = append(notes, textcut.Count(f.Hits, "hit", "hits"))
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	return s
}

func formatStatus(r *result.StatusResult) string {
	var b strings.Builder
	if r.Session == nil {
		b.WriteString("No debug session runs.")
		if r.Previous != "" {
			b.WriteString(" The previous one ended: " + r.Previous + ".")
		}
		b.WriteString(" Start one with operation launch or attach.\n")
	} else {
		b.WriteString(sessionLine(*r.Session) + "\n")
		if r.LastStop != nil && r.Session.State == "stopped" {
			fmt.Fprintf(&b, "Stopped (%s, stop %d, thread %d).\n", r.LastStop.Reason, r.LastStop.N, r.LastStop.ThreadID)
		}
	}
	b.WriteString("Breakpoints:\n" + formatBreakpointList(r.Breakpoints))
	for _, f := range r.Functions {
		b.WriteString("\n" + formatFunc(f))
	}
	return b.String()
}

func formatThreads(r *result.ThreadsResult) string {
	var b strings.Builder
	b.WriteString(sessionLine(r.Session) + "\n")
	fmt.Fprintf(&b, "%s:\n", textcut.Count(r.Total, "thread", "threads"))
	for i, g := range r.Groups {
		if i == 50 {
			fmt.Fprintf(&b, "  … %d more groups\n", len(r.Groups)-50)
			break
		}
		ids := make([]string, 0, min(len(g.IDs), 10))
		for j, id := range g.IDs {
			if j == 10 {
				ids = append(ids, "…")
				break
			}
			ids = append(ids, fmt.Sprint(id))
		}
		fmt.Fprintf(&b, "  %d × %s (ids %s)\n", g.Count, g.Name, strings.Join(ids, ", "))
	}
	return strings.TrimRight(b.String(), "\n")
}

func formatStack(r *result.StackResult) string {
	var b strings.Builder
	b.WriteString(sessionLine(r.Session) + "\n")
	fmt.Fprintf(&b, "Stack of thread %d:\n", r.ThreadID)
	for _, f := range r.Frames {
		fmt.Fprintf(&b, "  %s  [frame_id %s]\n", where(&f), f.ID)
		for _, l := range f.Source {
			if l.Current {
				fmt.Fprintf(&b, "        %5d │ %s\n", l.Line, l.Text)
			}
		}
	}
	if r.Total > len(r.Frames) {
		fmt.Fprintf(&b, "  … %d more frames\n", r.Total-len(r.Frames))
	}
	return strings.TrimRight(b.String(), "\n")
}

func formatScopes(r *result.ScopesResult) string {
	var b strings.Builder
	b.WriteString(sessionLine(r.Session) + "\n")
	fmt.Fprintf(&b, "Scopes of frame %s:\n", r.Frame)
	for _, s := range r.Scopes {
		fmt.Fprintf(&b, "  %s [reference %s]", s.Name, s.Ref)
		if s.Count > 0 {
			fmt.Fprintf(&b, " %s", textcut.Count(s.Count, "variable", "variables"))
		}
		if s.Expensive {
			b.WriteString(" (expensive)")
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func formatVariables(r *result.VariablesResult, budget int) string {
	// Values share the output budget: when all of them whole would not fit,
	// each is cut to its share, and the result says so.
	share := 400
	total := 0
	for _, v := range r.Variables {
		total += len(v.Name) + len(v.Value) + len(v.Type) + 40
	}
	shortened := false
	if total > budget-500 && len(r.Variables) > 0 {
		share = max((budget-500)/len(r.Variables)-60, 40)
	}
	var b strings.Builder
	b.WriteString(sessionLine(r.Session) + "\n")
	fmt.Fprintf(&b, "Variables of %s:\n", r.Ref)
	for _, v := range r.Variables {
		value := v.Value
		if len([]rune(value)) > share {
			value, shortened = textcut.Ellipsis(value, share), true
		}
		fmt.Fprintf(&b, "  %s = %s", v.Name, value)
		if v.Type != "" {
			fmt.Fprintf(&b, " (%s)", v.Type)
		}
		if v.Ref != "" {
			fmt.Fprintf(&b, " [reference %s, %s]", v.Ref, expands(v))
		}
		if v.Cut {
			b.WriteString(" [value cut at 400 characters]")
		}
		b.WriteString("\n")
	}
	if r.More > 0 {
		fmt.Fprintf(&b, "  … more children not shown (at most 50 are listed); evaluate an index or a field to see one\n")
	}
	if len(r.Hidden) > 0 {
		fmt.Fprintf(&b, "[not shown: %s; all: true lists them]\n", hiddenNote(r.Hidden))
	}
	if shortened {
		fmt.Fprintf(&b, "[values cut to %d characters each to fit the output budget; evaluate one to see it whole]\n", share)
	}
	return strings.TrimRight(b.String(), "\n")
}

// sentence makes a note of the engine's a sentence: a capital, a stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(r)) + s[n:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

func formatEval(r *result.EvalResult) string {
	head := sessionLine(r.Session) + "\n"
	note := ""
	if r.Note != "" {
		note = "\n" + sentence(r.Note)
	}
	if r.TimedOut {
		return head + sentence(r.Note)
	}
	if r.In != "" {
		note = "\n" + sentence(r.In) + note
	}
	if r.Error != "" {
		return head + fmt.Sprintf("%s raised an error: %s", r.Expression, r.Error) + note
	}
	v := r.Value
	s := fmt.Sprintf("%s = %s", r.Expression, v.Value)
	if v.Type != "" {
		s += " (" + v.Type + ")"
	}
	if v.Ref != "" {
		s += fmt.Sprintf(" [reference %s, %s]", v.Ref, expands(*v))
	}
	if v.Cut {
		s += " [value cut at 400 characters]"
	}
	return head + s + note
}

func formatOutput(r *result.OutputResult) string {
	head := sessionLine(r.Session) + "\n"
	if r.Output == "" {
		return head + "No new output."
	}
	s := head + "Output not shown before:\n" + strings.TrimRight(r.Output, "\n")
	if r.Skipped > 0 {
		s += fmt.Sprintf("\n[%d bytes before this were dropped: only the newest 1 MiB is kept]", r.Skipped)
	}
	if r.More > 0 {
		s += fmt.Sprintf("\n[%d more bytes; call output again]", r.More)
	}
	return s
}

func formatTerminate(r *result.TerminateResult) string {
	var s string
	program := "the program"
	if r.PID > 0 {
		program = fmt.Sprintf("the program, pid %d,", r.PID)
	}
	switch {
	case r.Core:
		s = fmt.Sprintf("Closed %s: the adapter is gone; no program ran, and the core file is unchanged.", r.Program)
	case r.Detached && r.Debuggee == result.DebuggeeRunning:
		s = fmt.Sprintf("Detached from %s; %s is still running. (To end it: attach again, then terminate with terminate_debuggee: true.)", r.Program, program)
	case r.Detached && r.Debuggee == result.DebuggeeStopped:
		s = fmt.Sprintf("Detached from %s; %s is still there but stopped (held by a signal or a tracer), not running.", r.Program, program)
	case r.Detached && r.Debuggee == result.DebuggeeEnded:
		s = fmt.Sprintf("Detached from %s; %s has ended (it was not ended by terminate).", r.Program, program)
	case r.Detached:
		s = fmt.Sprintf("Detached from %s, and the adapter is gone; whether the program still runs is unknown: the adapter never said its pid.", r.Program)
	case r.Debuggee == result.DebuggeeEnded && r.Attached:
		s = fmt.Sprintf("Terminated %s: %s has ended", r.Program, program)
		if r.Killed {
			s += " (the adapter's disconnect did not end it, so it was sent SIGKILL)"
		}
		s += "; the adapter and its files are gone."
	case r.Debuggee == result.DebuggeeEnded:
		s = fmt.Sprintf("Terminated %s: %s has ended; the adapter and its files are gone.", r.Program, program)
	case r.Debuggee == result.DebuggeeUnknown:
		s = fmt.Sprintf("Terminated %s: the session and its files are gone; the adapter never said the program's pid, so whether the program ended is not known.", r.Program)
	default:
		s = fmt.Sprintf("Terminated %s: the adapter and its files are gone, but %s is still %s.", r.Program, program, r.Debuggee)
		if r.Killed {
			s += " It was sent SIGKILL and has not ended."
		}
	}
	if r.ExitCode != nil {
		s += fmt.Sprintf(" It had exited with code %d.", *r.ExitCode)
	}
	if r.Note != "" {
		s += "\nnote: " + r.Note
	}
	if len(r.NeverHit) > 0 {
		s += "\nBreakpoints verified but never hit: " + neverHit(r.NeverHit)
	}
	if len(r.NeverHitFuncs) > 0 {
		s += "\nFunction breakpoints never hit: " + neverHitFuncs(r.NeverHitFuncs)
	}
	if r.Output != "" {
		s += "\noutput:\n" + strings.TrimRight(r.Output, "\n")
	}
	return s
}

// formatExceptions says what a launched program stops on.
func formatExceptions(adapter string, e *result.ExceptionsSet) string {
	if len(e.Kinds) == 0 {
		return "Stops on no exceptions (exceptions: [] was asked)."
	}
	s := "Stops on exceptions: " + strings.Join(e.Kinds, ", ")
	if len(e.Filters) > 0 {
		return s + " (" + adapter + "'s filters " + strings.Join(e.Filters, ", ") + ")."
	}
	if e.Note != "" {
		return s + " (no filter sent: " + e.Note + ")."
	}
	return s + " (the adapter offers no filter for them)."
}

func formatSetVar(r *result.SetVarResult) string {
	var b strings.Builder
	b.WriteString(sessionLine(r.Session) + "\n")
	if r.TimedOut || r.Value == nil {
		return b.String() + sentence(r.Note)
	}
	v := r.Value
	fmt.Fprintf(&b, "Set %s (%s); read back: %s = %s", r.Name, r.Request, v.Name, v.Value)
	if v.Type != "" {
		b.WriteString(" (" + v.Type + ")")
	}
	if v.Ref != "" {
		b.WriteString(" [ref " + v.Ref + "]")
	}
	if r.Note != "" {
		b.WriteString("\nnote: " + r.Note)
	}
	return b.String()
}

// formatRunTo says how a run_to_line ended.
func formatRunTo(rt *result.RunToResult, outcome string) string {
	at := fmt.Sprintf("%s:%d", rt.File, rt.Line)
	bp := "its one-shot breakpoint was removed"
	if rt.Existing != "" {
		bp = "your breakpoint " + rt.Existing + " there stays"
	}
	switch {
	case rt.Pending:
		if rt.Existing != "" {
			return "run_to_line " + at + ": not reached yet; the program still runs"
		}
		return "run_to_line " + at + ": not reached yet; the program still runs, and the one-shot breakpoint stays until the next stop"
	case rt.Reached:
		return "run_to_line " + at + ": reached; " + bp + "."
	case outcome == "stopped":
		return "run_to_line " + at + ": not reached — another stop came first; " + bp + "."
	}
	return "run_to_line " + at + ": not reached — the program ended first."
}

func formatWatch(r *result.WatchResult) string {
	var b strings.Builder
	b.WriteString(sessionLine(r.Session) + "\nWatchpoints:\n")
	for _, w := range r.Watchpoints {
		fmt.Fprintf(&b, "  %s %s (on %s", w.ID, w.Name, w.Access)
		if w.Description != "" && w.Description != w.Name {
			b.WriteString("; " + w.Description)
		}
		b.WriteString(")")
		if !w.Verified {
			msg := w.Message
			if msg == "" {
				msg = "the adapter could not set it"
			}
			b.WriteString(" — not verified: " + msg)
		}
		b.WriteString("\n")
	}
	if len(r.Watchpoints) == 0 {
		b.WriteString("  none\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// formatCore is a core's threads and the crashing thread's stack.
func formatCore(c *result.CoreInfo) string {
	var b strings.Builder
	if len(c.Threads) > 0 {
		fmt.Fprintf(&b, "Threads (%d):\n", c.Total)
		for i, g := range c.Threads {
			if i == 10 {
				fmt.Fprintf(&b, "  … %d more groups; call threads\n", len(c.Threads)-i)
				break
			}
			fmt.Fprintf(&b, "  %d × %s (ids %s)\n", g.Count, g.Name, idList(g.IDs))
		}
	}
	if len(c.Stack) > 0 {
		b.WriteString("Stack of the crashing thread")
		if c.Above > 0 {
			fmt.Fprintf(&b, " (%d frames above the first in the checkout left out; call stack for all)", c.Above)
		}
		b.WriteString(":\n")
		for _, f := range c.Stack {
			fmt.Fprintf(&b, "  %s  %s\n", f.ID, where(&f))
		}
		if rest := c.Frames - c.Above - len(c.Stack); rest > 0 {
			fmt.Fprintf(&b, "  … %d more frames; call stack\n", rest)
		}
	}
	return b.String()
}

func idList(ids []int) string {
	parts := make([]string, 0, min(len(ids), 8))
	for i, id := range ids {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("… %d more", len(ids)-i))
			break
		}
		parts = append(parts, strconv.Itoa(id))
	}
	return strings.Join(parts, ", ")
}
