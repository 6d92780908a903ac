//go:build race

package astgrep

func init() { raceEnabled = true }
