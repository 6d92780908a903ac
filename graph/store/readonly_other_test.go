//go:build !linux

package store

import (
	"os"
	"path/filepath"
	"testing"
)

// readOnly makes dir read-only by permissions; root, whom permissions do
// not stop, needs Linux's read-only bind mount, so the test skips.
func readOnly(t *testing.T, dir string) {
	if os.Geteuid() == 0 {
		t.Skip("a read-only folder for root needs a Linux bind mount")
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	for _, sub := range []string{"records", "manifests", "tmp"} {
		os.Chmod(filepath.Join(dir, sub), 0o500)
		t.Cleanup(func() { os.Chmod(filepath.Join(dir, sub), 0o700) })
	}
}
