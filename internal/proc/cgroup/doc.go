// Package cgroup is the cgroup v2 layer under internal/proc: the folder
// this process makes its children's cgroups in (builtin-tools-<owner>
// inside its own cgroup, [Children]), one cgroup per child that the kernel
// puts it in as it is forked (clone3 CLONE_INTO_CGROUP) so nothing it
// starts can leave, every process in one killed at the child's end ([End]),
// the cgroup daemons start in beside the outermost builtin-tools process
// and its removal once empty, and the sweep of folders whose process has
// gone. It starts no child but the probe that checks clone3 works: proc
// starts them, tags them and tells its reaper of the folder.
package cgroup
