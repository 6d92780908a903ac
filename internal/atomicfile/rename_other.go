//go:build !linux

package atomicfile

import "golang.org/x/sys/unix"

// Without renameat2 the commit falls back to a plain rename, checked just
// before (see noRenameat2).

func renameNoReplace(dfd int, from, to string) error { return unix.ENOSYS }

func renameExchange(dfd int, a, b string) error { return unix.ENOSYS }
