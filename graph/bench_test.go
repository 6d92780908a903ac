package graph

import "testing"

// BenchmarkQueries times answers on a built index of GOROOT/src/go (a few
// hundred files): callers of a function and of a method name many types
// define, callees, and an impact walk.
func BenchmarkQueries(b *testing.B) {
	root := b.TempDir()
	copyGoroot(b, root, "go")
	x := buildRoot(b, root)
	for _, q := range []struct{ op, sym string }{
		{"callers", "ast.Inspect"}, {"callers", "Pos"}, {"callees", "Checker.expr"}, {"impact", "token.NewFileSet"},
	} {
		b.Run(q.op+"/"+q.sym, func(b *testing.B) {
			cpu := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op") }()
			for range b.N {
				var err error
				switch q.op {
				case "callers":
					_, err = x.Callers(Spec{Symbol: q.sym}, 0)
				case "callees":
					_, err = x.Callees(Spec{Symbol: q.sym}, 0)
				default:
					_, err = x.Impact(Spec{Symbol: q.sym}, 3, 0, 0)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
