//go:build !unix

package lsp

// groupAlive reports whether any process of group pgid is still running;
// there are no process groups to look at here.
func groupAlive(pgid int) bool { return false }
