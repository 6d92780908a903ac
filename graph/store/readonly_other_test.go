//go:build !linux

package store

import (
	"os"
	"testing"
)

// readOnly makes dir read-only by permissions; root, whom permissions do
// not stop, needs Linux's read-only bind mount, so the test skips.
func readOnly(t *testing.T, dir string) {
	if os.Geteuid() == 0 {
		t.Skip("a read-only folder for root needs a Linux bind mount")
	}
	readOnlyByPermissions(t, dir)
}
