//go:build unix && !linux

package lsp

// groupAlive reports whether any process of group pgid is still running.
// Without /proc a zombie of the group counts as running.
func groupAlive(pgid int) bool { return signalGroup(pgid) }
