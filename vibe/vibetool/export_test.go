package vibetool

import "time"

// SetProgressEvery makes vibe_wait report the running workers' output
// more often, for a test; it returns the previous setting.
func SetProgressEvery(d time.Duration) time.Duration {
	old := progressEvery
	progressEvery = d
	return old
}
