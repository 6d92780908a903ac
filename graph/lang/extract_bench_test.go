package lang

import (
	"context"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep"
)

// BenchmarkExtract measures extraction alone (the query's matches and the
// record, trees and steps included) over the samples, parsed once.
func BenchmarkExtract(b *testing.B) {
	e, s := bundled(b)
	type parsed struct {
		l   *Language
		src []byte
		r   *astgrep.CaptureResult
	}
	var ps []parsed
	for _, sm := range samples(b, s) {
		if sm.l.ID != "go" {
			continue
		}
		r, err := e.CaptureSnippet(context.Background(), sm.l.Query(), sm.src)
		if err != nil {
			b.Fatal(err)
		}
		ps = append(ps, parsed{sm.l, sm.src, r})
	}
	b.ResetTimer()
	for range b.N {
		for _, p := range ps {
			p.l.Extractor().Extract(p.src, p.r)
		}
	}
}
