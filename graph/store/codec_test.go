package store

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/codecgen"
)

var update = flag.Bool("update", false, "rewrite codec_gen.go")

// The manifest's codec is the one its types give; -update rewrites it.
func TestCodecUpToDate(t *testing.T) {
	src, err := codecgen.Generate(codecgen.Config{
		Package: "store",
		Roots:   []any{Manifest{}},
		Hash:    "ManifestSchema",
		Header:  "Regenerate: go test ./graph/store -run TestCodecUpToDate -update",
	})
	if err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile("codec_gen.go")
	if bytes.Equal(old, src) {
		return
	}
	if *update {
		if err := os.WriteFile("codec_gen.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("codec_gen.go is stale: run go test ./graph/store -run TestCodecUpToDate -update")
}
