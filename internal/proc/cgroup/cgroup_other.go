//go:build unix && !linux

package cgroup

import (
	"sync"
	"syscall"
)

// Children is what a child gets of cgroups here: nothing, they are a
// Linux feature. Its fields are Linux's, unused.
type Children struct {
	Owner func() string
	Gone  func(owner string) bool
	Lock  sync.Locker
	Made  func(base string)
}

// Containment reports that children get no cgroup here: cgroups are a
// Linux feature.
func (*Children) Containment() (bool, string) {
	return false, "this system has no cgroups (a Linux feature), so a helper that both clears its environment " +
		"and calls setsid (env -i setsid …) escapes the process group and the environment tag, and outlives a " +
		"SIGKILL of this process"
}

// Setup does nothing here.
func (*Children) Setup() {}

// Into starts a child in no cgroup here.
func (*Children) Into(a *syscall.SysProcAttr) (string, func(bool)) { return "", func(bool) {} }

// End does nothing here.
func End(dir string) {}

// Daemons is "": there are no cgroups here.
func (*Children) Daemons() string { return "" }

// IntoDaemons starts a daemon in no cgroup here.
func (*Children) IntoDaemons(a *syscall.SysProcAttr) (string, func()) { return "", func() {} }

// RemoveDaemons does nothing here.
func RemoveDaemons(dir string) {}
