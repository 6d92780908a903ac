package eval

import "golang.org/x/sys/unix"

// totalRAM is the machine's memory in bytes, 0 when unknown.
func totalRAM() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// limitMemory sets pid's soft address-space limit to at most lim and
// returns the limit set, 0 when none could be.
func limitMemory(pid int, lim int64) int64 {
	var old unix.Rlimit
	if unix.Prlimit(pid, unix.RLIMIT_AS, nil, &old) != nil {
		return 0
	}
	rl := unix.Rlimit{Cur: min(uint64(lim), old.Max), Max: old.Max}
	if unix.Prlimit(pid, unix.RLIMIT_AS, &rl, nil) != nil {
		return 0
	}
	return int64(rl.Cur)
}
