package eval

import "fmt"

// Stop is where a cell stopped before all of it ran, as its driver saw
// it: no cell ends with code unrun and nothing said (issue 19 §1).
type Stop struct {
	// Kind is why: "error" (a statement raised), "interrupt", "exit"
	// (sys.exit), "compile" (the cell does not compile: nothing ran) or
	// "unsupported" (a statement the kernel cannot run: nothing ran).
	Kind string `json:"kind"`
	// Statement is the top-level statement it stopped at (from 1; 0 when
	// not known), of Statements (0 when not known).
	Statement  int `json:"statement,omitempty"`
	Statements int `json:"statements,omitempty"`
	// Line and EndLine are that statement's lines (for compile, the line
	// that does not compile).
	Line    int `json:"line,omitempty"`
	EndLine int `json:"end_line,omitempty"`
	// RestLine and RestEndLine are the lines of the statements after it,
	// which did not run (0 when it was the last).
	RestLine    int `json:"rest_line,omitempty"`
	RestEndLine int `json:"rest_end_line,omitempty"`
}

// valid is s when it says something that can be said, else nil.
func (s *Stop) valid() *Stop {
	if s == nil || s.Line <= 0 {
		return nil
	}
	switch s.Kind {
	case "error", "interrupt", "exit":
		if s.Statement <= 0 || s.Statements < s.Statement {
			return nil
		}
	case "compile", "unsupported":
	default:
		return nil
	}
	return s
}

// Text says where the cell stopped, in one sentence.
func (s *Stop) Text() string {
	ran := "so no statement of the cell ran"
	if s.Statements > 1 {
		ran = fmt.Sprintf("so none of the cell's %d statements ran", s.Statements)
	}
	switch s.Kind {
	case "compile":
		return fmt.Sprintf("Nothing ran: line %d does not compile, %s.", s.Line, ran)
	case "unsupported":
		what := fmt.Sprintf("line %d", s.Line)
		if s.Statement > 0 {
			what = fmt.Sprintf("statement %d (%s)", s.Statement, what)
		}
		return fmt.Sprintf("Nothing ran: %s cannot be run by this kernel (the error says why), %s.", what, ran)
	}
	by := map[string]string{"error": "the error", "interrupt": "the interrupt", "exit": "sys.exit"}[s.Kind]
	text := fmt.Sprintf("Stopped at statement %d of %d (%s) by %s", s.Statement, s.Statements, lineRange(s.Line, s.EndLine), by)
	switch rest := s.Statements - s.Statement; {
	case rest == 1:
		text += fmt.Sprintf("; statement %d (%s) did not run", s.Statement+1, lineRange(s.RestLine, s.RestEndLine))
	case rest > 1:
		text += fmt.Sprintf("; statements %d to %d (%s) did not run", s.Statement+1, s.Statements, lineRange(s.RestLine, s.RestEndLine))
	}
	return text + "."
}

func lineRange(from, to int) string {
	if to <= from {
		return fmt.Sprintf("line %d", from)
	}
	return fmt.Sprintf("lines %d to %d", from, to)
}
