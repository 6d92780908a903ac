//go:build unix && !linux

package proc

import "syscall"

// Containment reports that children get no cgroup here: cgroups are a
// Linux feature.
func Containment() (bool, string) {
	return false, "this system has no cgroups (a Linux feature), so a helper that both clears its environment " +
		"and calls setsid (env -i setsid …) escapes the process group and the environment tag, and outlives a " +
		"SIGKILL of this process"
}

type cgroupState struct{}

func (cgroupState) setup() {}

var cgroups cgroupState

func intoCgroup(a *syscall.SysProcAttr) (string, func(bool)) { return "", func(bool) {} }

func endCgroup(dir string) {}

// DaemonCgroup is "": there are no cgroups here.
func DaemonCgroup() string { return "" }

func intoDaemonCgroup(a *syscall.SysProcAttr) (string, func()) { return "", func() {} }

func removeDaemonCgroup(dir string) {}

func endDaemonCgroups() {}
