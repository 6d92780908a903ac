//go:build unix

package lsp

import "syscall"

// signalGroup reports whether group pgid has a process that can be
// signalled (zombies included).
func signalGroup(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
