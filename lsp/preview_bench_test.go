package lsp

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/diag"
)

// BenchmarkPreview measures, on a warm server and in the same run, a
// plain write's diagnostics (the file written with a new error, then
// AfterWrite) beside a one-file preview of the same text (Preview, which
// also restores the document); each iteration does both, alternating
// which goes first. Both must find the new error.
func BenchmarkPreview(b *testing.B) {
	for _, bs := range benchServers {
		b.Run(bs.name, func(b *testing.B) {
			s, at, orig := warmSession(b, bs)
			write := func(i int) time.Duration {
				d := bs.timedBreak(b, s, at, orig, i)
				s.write(bs.file, orig)
				if _, err := s.sup.AfterWrite(s.ctx, at); err != nil {
					b.Fatal(err)
				}
				return d
			}
			preview := func(i int) time.Duration {
				text, want := bs.broken(orig, 1_000_000+i)
				t0 := time.Now()
				p, err := s.sup.Preview(s.ctx, []Proposed{{File: at, Text: []byte(text)}})
				d := time.Since(t0)
				if err != nil || p.Files[0].State != diag.Checked ||
					!slices.ContainsFunc(p.Files[0].New, func(v diag.Finding) bool { return strings.Contains(v.Message, want) }) {
					b.Fatalf("preview %d: %v, %+v lacks %q", i, err, p, want)
				}
				return d
			}
			var writes, previews []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%2 == 0 {
					writes = append(writes, write(i))
					previews = append(previews, preview(i))
				} else {
					previews = append(previews, preview(i))
					writes = append(writes, write(i))
				}
			}
			b.StopTimer()
			b.ReportMetric(medianMS(writes), "write-median-ms")
			b.ReportMetric(medianMS(previews), "preview-median-ms")
			b.ReportMetric(medianMS(previews)/medianMS(writes), "preview/write")
		})
	}
}
