package record

import (
	"flag"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/codecgen"
)

var update = flag.Bool("update", false, "rewrite codec_gen.go")

// The record's codec is the one its types give; -update rewrites it.
func TestCodec(t *testing.T) {
	if err := codecgen.UpToDate(codecgen.Config{
		Package: "record",
		Roots:   []any{Record{}},
		Checks:  map[string]string{"Record": "check"},
		Header:  "Regenerate: go test ./graph/record -run TestCodec -update",
	}, "codec_gen.go", *update); err != nil {
		t.Fatal(err)
	}
}
