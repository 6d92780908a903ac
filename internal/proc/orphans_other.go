//go:build unix && !linux

package proc

import (
	"errors"
	"time"
)

// Without /proc there is no environment to scan: a helper that left its
// group is stopped only by the parent-death signal where there is one.
func endTagged(tag string) {}

// AdoptOrphans is not available here.
func AdoptOrphans() error { return errors.New("child subreapers are a Linux feature") }

// Shutdown ends the reaper, which ends the recorded groups.
func Shutdown() { reap.finish(2 * time.Second) }
