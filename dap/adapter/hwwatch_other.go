//go:build !linux

package adapter

// HardwareWatchpoints is not checked outside Linux: the adapter's own
// answer stands.
func HardwareWatchpoints() (bool, string) { return true, "" }
