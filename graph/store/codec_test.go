package store

import (
	"flag"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/codecgen"
)

var update = flag.Bool("update", false, "rewrite codec_gen.go")

// The manifest's codec is the one its types give; -update rewrites it.
func TestCodecUpToDate(t *testing.T) {
	if err := codecgen.UpToDate(codecgen.Config{
		Package: "store",
		Roots:   []any{Manifest{}},
		Hash:    "ManifestSchema",
		Header:  "Regenerate: go test ./graph/store -run TestCodecUpToDate -update",
	}, "codec_gen.go", *update); err != nil {
		t.Fatal(err)
	}
}
