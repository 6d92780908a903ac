//go:build !linux

package dap

// hardwareWatchpoints is not checked outside Linux: the adapter's own
// answer stands.
func hardwareWatchpoints() (bool, string) { return true, "" }
