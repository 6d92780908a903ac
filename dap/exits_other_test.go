//go:build !linux

package dap

import "time"

// exits waits at most within for pid to end, polling: pidfds are Linux's.
func exits(pid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for alive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
