package rpcline

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// FuzzFrameFilter feeds arbitrary input to serve's frame reader (D10): it
// never panics, never passes on a line over the limit, answers every line
// it drops, and passes short well-formed requests on byte for byte.
func FuzzFrameFilter(f *testing.F) {
	for _, s := range []string{
		"",
		"garbage\n",
		`{"jsonrpc":"2.0","id":0,"method":"initialize"}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"read"}}`,
		"\xff\xfe{}\n",
		`{"id":5,"params":"` + string(bytes.Repeat([]byte("a"), 300)) + `"}` + "\n",
		"\n\n\r\n",
	} {
		f.Add([]byte(s))
	}
	const max = 128
	f.Fuzz(func(t *testing.T, in []byte) {
		var passed bytes.Buffer
		replies := 0
		ff := &Filter{Max: max, Reply: func(id json.RawMessage, code int, msg string) {
			replies++
			if len(id) > 0 && !json.Valid(id) {
				t.Fatalf("reply with an id that is not JSON: %q", id)
			}
		}}
		pass := func(l []byte) {
			passed.Write(l)
			if len(l) > 0 && l[len(l)-1] != '\n' {
				passed.WriteByte('\n')
			}
		}
		if err := ff.Run(context.Background(), bytes.NewReader(in), pass); err != nil {
			t.Fatalf("run: %v", err)
		}
		lines := bytes.Count(in, []byte("\n"))
		if len(in) > 0 && in[len(in)-1] != '\n' {
			lines++
		}
		out := bytes.SplitAfter(passed.Bytes(), []byte("\n"))
		passedLines := 0
		for _, l := range out {
			if len(l) == 0 {
				continue
			}
			passedLines++
			if len(l) > max+1 {
				t.Fatalf("passed a %d-byte line over the %d limit", len(l), max)
			}
			if !bytes.Contains(in, bytes.TrimSuffix(l, []byte("\n"))) {
				t.Fatalf("passed a line that is not in the input: %q", l)
			}
		}
		if passedLines+replies > lines {
			t.Fatalf("%d lines in, %d passed and %d answered", lines, passedLines, replies)
		}
	})
}
