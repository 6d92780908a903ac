package lsp

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// BenchmarkIncomingCalls compares `lsp incoming_calls` through the
// Supervisor (validation, re-sync check, prepare, incomingCalls, quoting)
// with the same two requests sent straight over the same gopls connection.
func BenchmarkIncomingCalls(b *testing.B) {
	s := newSession(b, "go", "gopls", Config{})
	shapes := s.at("shapes/shapes.go")
	place := protocol.Place{Line: 28, Symbol: "Total"}
	if _, err := s.sup.IncomingCalls(s.ctx, shapes, place); err != nil {
		b.Fatal(err)
	}
	r, err := s.sup.fleet.at(s.ctx, shapes, place)
	if err != nil {
		b.Fatal(err)
	}
	r.srv.release()
	b.Run("supervisor", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			out, err := s.sup.IncomingCalls(s.ctx, shapes, place)
			if err != nil || out.Total != 1 {
				b.Fatalf("%v: %+v", err, out)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var items []protocol.CallHierarchyItem
			if err := r.srv.conn.Call(context.Background(), "textDocument/prepareCallHierarchy", r.params(), &items); err != nil || len(items) != 1 {
				b.Fatalf("prepare: %v %+v", err, items)
			}
			var calls []protocol.CallHierarchyCall
			if err := r.srv.conn.Call(context.Background(), "callHierarchy/incomingCalls", map[string]any{"item": items[0]}, &calls); err != nil || len(calls) != 1 {
				b.Fatalf("incoming: %v %+v", err, calls)
			}
		}
	})
}

// BenchmarkFix measures lsp_fix format on gopls — the request, the
// all-or-nothing write, the re-sync, then the diagnostics of the new text
// (AfterWrite, as the write wrapper does) — beside the bare
// textDocument/formatting round trip on the same connection.
func BenchmarkFix(b *testing.B) {
	s := newSession(b, "go", "gopls", Config{})
	const ugly = "package main\n\nfunc  helper( n  int )  int {\n  return n*2\n}\n"
	s.write("ugly.go", ugly)
	at := s.at("ugly.go")
	if _, err := s.sup.Fix(s.ctx, at, FixFormat, 0, 0, false); err != nil {
		b.Fatal(err)
	}
	var apply, diags []time.Duration
	b.Run("fix+diagnostics", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			s.write("ugly.go", ugly)
			b.StartTimer()
			t0 := time.Now()
			res, err := s.sup.Fix(s.ctx, at, FixFormat, 0, 0, false)
			if err != nil || res.Unchanged {
				b.Fatalf("%v: %+v", err, res)
			}
			t1 := time.Now()
			if _, err := s.sup.AfterWrite(s.ctx, at); err != nil {
				b.Fatal(err)
			}
			apply, diags = append(apply, t1.Sub(t0)), append(diags, time.Since(t1))
		}
		reportLatencies(b, apply)
		ms := func(ds []time.Duration) float64 {
			var sum time.Duration
			for _, d := range ds {
				sum += d
			}
			return float64(sum) / float64(len(ds)) / float64(time.Millisecond)
		}
		b.ReportMetric(ms(diags), "diagnostics-mean-ms")
	})
	s.write("ugly.go", ugly)
	srv, doc, _, err := s.sup.fleet.sync(s.ctx, s.path("ugly.go"))
	if err != nil {
		b.Fatal(err)
	}
	srv.release()
	b.Run("raw-formatting", func(b *testing.B) {
		params := map[string]any{"textDocument": protocol.TextDocumentIdentifier{URI: doc.uri}, "options": formattingOptions(ugly)}
		for i := 0; i < b.N; i++ {
			var edits json.RawMessage
			if err := srv.conn.Call(context.Background(), "textDocument/formatting", params, &edits); err != nil || len(edits) < 10 {
				b.Fatalf("%v: %s", err, edits)
			}
		}
	})
}
