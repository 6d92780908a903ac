package graph

// RenderText is render.Text (graph/graphtool/render), linked in by
// render_link_test.go: package graph cannot import the package that
// writes its text, yet its tests read answers as an agent does.
var RenderText func(a *Answer, budget int) string

// Text is the answer's text with no budget, as code_graph writes it.
func (a *Answer) Text() string { return RenderText(a, 0) }
