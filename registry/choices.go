package registry

import "strings"

// Choice is one value of the argument that picks what a tool does (lsp's
// operation, debug's action), declared once in a table from which the
// schema's enum, the description and the dispatch are all made.
type Choice interface {
	ChoiceName() string
	ChoiceDoc() string
}

// ChoiceNames lists the table's names, for WithEnum.
func ChoiceNames[T Choice](table []T) []string {
	out := make([]string, len(table))
	for i, c := range table {
		out[i] = c.ChoiceName()
	}
	return out
}

// ChoiceDocs joins the table's lines for the tool's description.
func ChoiceDocs[T Choice](table []T) string {
	out := make([]string, len(table))
	for i, c := range table {
		out[i] = c.ChoiceDoc()
	}
	return strings.Join(out, ", ")
}

// FindChoice returns the entry named name.
func FindChoice[T Choice](table []T, name string) (T, bool) {
	for _, c := range table {
		if c.ChoiceName() == name {
			return c, true
		}
	}
	var zero T
	return zero, false
}
