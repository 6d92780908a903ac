package testenv

import (
	"time"

	"golang.org/x/sys/unix"
)

// Exits waits at most within for pid to end (a zombie counts) and says
// whether it did. It waits on the process's pidfd, so it returns the moment
// the process ends; the process is a real one, which testing/synctest's
// clock cannot wait on.
func Exits(pid int, within time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return !ProcessRunning(pid) // ESRCH: it is gone
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(within)
	for ProcessRunning(pid) {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
		if err != nil && err != unix.EINTR {
			return !ProcessRunning(pid)
		}
	}
	return true
}
