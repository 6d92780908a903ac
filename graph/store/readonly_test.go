package store

import (
	"os"
	"path/filepath"
	"testing"
)

// readOnlyByPermissions makes dir and the store's folders in it
// read-only by their permissions, restored when the test ends; they do not
// stop root (see readOnly).
func readOnlyByPermissions(t *testing.T, dir string) {
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	for _, sub := range []string{"records", "manifests", "tmp"} {
		os.Chmod(filepath.Join(dir, sub), 0o500)
		t.Cleanup(func() { os.Chmod(filepath.Join(dir, sub), 0o700) })
	}
}
