package debugsock

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// sameUser refuses a socket client of another user (the folder's mode
// already keeps them out; this holds if it is ever loosened) and returns
// the client's process id.
func sameUser(conn net.Conn) (pid int, err error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if cerr != nil {
		return 0, cerr
	}
	if int(cred.Uid) != os.Getuid() {
		return 0, fmt.Errorf("the debug socket serves its own user only (uid %d), not uid %d", os.Getuid(), cred.Uid)
	}
	return int(cred.Pid), nil
}
