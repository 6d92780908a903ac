//go:build !linux

package testenv

import "time"

// Exits waits at most within for pid to end and says whether it did,
// polling: pidfds are Linux's.
func Exits(pid int, within time.Duration) bool {
	return Until(within, func() bool { return !ProcessRunning(pid) })
}
