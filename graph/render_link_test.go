package graph_test

import (
	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/graph/graphtool/render"
)

func init() { graph.RenderText = render.Text }
