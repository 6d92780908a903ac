package store

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// readOnly makes dir read-only: a read-only bind mount when running as
// root (whom permissions do not stop), else permissions.
func readOnly(t *testing.T, dir string) {
	if os.Geteuid() != 0 {
		readOnlyByPermissions(t, dir)
		return
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind mount (root without CAP_SYS_ADMIN cannot make a read-only folder): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("read-only remount: %v", err)
	}
}
