//go:build unix

package proc

import "os/exec"

// StartOld, KillGroup and Done are the spawn-only interface the families
// are moving off; they go once none uses them.
//
// Deprecated: use Start.
func StartOld(cmd *exec.Cmd) error {
	spawnMu.Lock()
	defer spawnMu.Unlock()
	if err := spawn(cmd); err != nil {
		return err
	}
	known.add(cmd.Process.Pid, "")
	return nil
}

// Deprecated: use Process.Kill.
func KillGroup(pid int) { killGroup(pid) }

// Deprecated: use Process.Wait.
func Done(pid int) { reap.remove(pid); known.remove(pid) }
