package adapter

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Some virtual machines accept a hardware watchpoint and never fire it:
// the debug registers are set, the write happens, no trap comes. delve and
// lldb-dap then verify a watch and the program runs past every write. The
// kernel's own breakpoint events use the same registers, so counting
// writes to a variable of this process through one says whether they
// fire here.

var (
	hwOnce   sync.Once
	hwFires  bool
	hwReason string
	hwTarget atomic.Int32
)

// linux/hw_breakpoint.h
const (
	hwBreakpointW    = 2
	hwBreakpointLen4 = 4
	hwWrites         = 5
)

// HardwareWatchpoints says whether this machine's hardware watchpoints
// fire, and if they do not, why. When the check cannot run (the kernel
// refuses breakpoint events) it assumes they do: an adapter that cannot
// set one says so itself.
func HardwareWatchpoints() (bool, string) {
	hwOnce.Do(func() {
		hwFires, hwReason = probeHardwareWatch()
	})
	return hwFires, hwReason
}

func probeHardwareWatch() (bool, string) {
	runtime.LockOSThread() // the event counts this thread's writes
	defer runtime.UnlockOSThread()
	attr := unix.PerfEventAttr{
		Type:    unix.PERF_TYPE_BREAKPOINT,
		Size:    uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample:  1,
		Bits:    unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv,
		Bp_type: hwBreakpointW,
		Ext1:    uint64(uintptr(unsafe.Pointer(&hwTarget))),
		Ext2:    hwBreakpointLen4,
	}
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return true, ""
	}
	defer unix.Close(fd)
	for i := range hwWrites {
		hwTarget.Store(int32(i))
	}
	var buf [8]byte
	if n, err := unix.Read(fd, buf[:]); err != nil || n != 8 {
		return true, ""
	}
	if count := *(*uint64)(unsafe.Pointer(&buf[0])); count == 0 {
		return false, fmt.Sprintf("this machine's hardware watchpoints do not fire (a kernel breakpoint event on a written variable counted 0 of %d writes; a virtual machine that does not pass the debug registers through)", hwWrites)
	}
	return true, ""
}
