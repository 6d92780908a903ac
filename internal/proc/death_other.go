//go:build unix && !linux

package proc

import "syscall"

// No parent-death signal here; the reaper alone stops orphans.
func setDeathSignal(a *syscall.SysProcAttr) {}
