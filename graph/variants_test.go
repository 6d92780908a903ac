package graph

import (
	"os"
	"path/filepath"
	"testing"
)

// TagOnly names the //go:build line of a file no GOOS and GOARCH build:
// a type checker has no package for it (issue 26 §2). A file of another
// system is built there, so it is not named.
func TestTagOnly(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":    "module m\n",
		"plain.go":  "package m\n",
		"hard.go":   "//go:build hardening\n\npackage m\n",
		"both.go":   "// Copyright\n\n//go:build linux && integration\n\npackage m\n",
		"win.go":    "//go:build windows\n\npackage m\n",
		"other.go":  "//go:build !linux && !darwin\n\npackage m\n",
		"neg.go":    "//go:build !hardening\n\npackage m\n",
		"ios.go":    "//go:build darwin && arm64\n\npackage m\n",
		"notes.txt": "//go:build hardening\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	x := buildRoot(t, root)
	want := map[string]string{
		"plain.go": "", "win.go": "", "other.go": "", "neg.go": "", "ios.go": "", "notes.txt": "", "missing.go": "",
		"hard.go": "//go:build hardening", "both.go": "//go:build linux && integration",
	}
	for rel, w := range want {
		if got := x.TagOnly(rel); got != w {
			t.Errorf("TagOnly(%s) = %q, want %q", rel, got, w)
		}
	}
}
