package progout

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Terminal is a pseudo-terminal the session makes for a launched program
// whose adapter would relay its output too slowly (adapter.Spec.
// OwnTerminal): the program's standard streams are the terminal, as they
// were the adapter's, and the session reads what it prints straight into
// the output buffer.
type Terminal struct {
	master *os.File
	// slave stays open so that the master never reads EIO, as it would
	// between a program's end and its restart.
	slave *os.File
	// Path names the terminal for the adapter to open as the program's
	// standard streams.
	Path string

	mu   sync.Mutex
	busy bool          // reading: what the master had is not all in the buffer yet
	idle chan struct{} // closed and replaced when a read ends
}

// NewTerminal makes a terminal; Start begins reading it.
func NewTerminal() (*Terminal, error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Terminal, error) {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		return fail(err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		return fail(err)
	}
	path := fmt.Sprintf("/dev/pts/%d", n)
	sfd, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	// The master is non-blocking, so reads wait in Go's poller.
	return &Terminal{master: os.NewFile(uintptr(fd), "ptmx"), slave: os.NewFile(uintptr(sfd), path), Path: path, idle: make(chan struct{})}, nil
}

// Start reads the program's output into out until the terminal closes;
// out's results drain it first.
func (t *Terminal) Start(out *Buffer) {
	if t == nil {
		return
	}
	out.mu.Lock()
	out.term = t
	out.mu.Unlock()
	rc, err := t.master.SyscallConn()
	if err != nil {
		return
	}
	go func() {
		buf := make([]byte, 64<<10)
		rc.Read(func(fd uintptr) bool {
			t.setBusy(true)
			defer t.setBusy(false)
			for {
				n, err := unix.Read(int(fd), buf)
				switch {
				case n > 0:
					out.Write(buf[:n])
				case err == unix.EINTR:
				default:
					// EAGAIN: all read, wait for more; anything else ends it.
					return err != unix.EAGAIN
				}
			}
		})
	}()
}

func (t *Terminal) setBusy(b bool) {
	t.mu.Lock()
	t.busy = b
	if !b {
		close(t.idle)
		t.idle = make(chan struct{})
	}
	t.mu.Unlock()
}

// Drain waits, at most d, until what the program printed so far is in
// the buffer: a stop or an exit result shows it all, as the adapter's
// events did. A program printing on and on ends the wait at d.
func (t *Terminal) Drain(d time.Duration) {
	if t == nil {
		return
	}
	rc, err := t.master.SyscallConn()
	if err != nil {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		t.mu.Lock()
		busy, idle := t.busy, t.idle
		t.mu.Unlock()
		// poll, unlike TIOCINQ, first pushes on to the master what the
		// program wrote and the kernel has not handed over yet.
		waiting := false
		rc.Control(func(fd uintptr) {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(p, 0)
			for err == unix.EINTR {
				n, err = unix.Poll(p, 0)
			}
			waiting = err == nil && n > 0 && p[0].Revents&unix.POLLIN != 0
		})
		if !busy && !waiting {
			return
		}
		select {
		case <-idle:
		case <-timer.C:
			return
		}
	}
}

func (t *Terminal) Close() {
	if t == nil {
		return
	}
	t.master.Close()
	t.slave.Close()
}
