package atomicfile

import (
	"bytes"
	"errors"

	"golang.org/x/sys/unix"
)

// listXattrs reads every extended attribute of the open file fd (ACLs are
// stored as such attributes too); none, if the file system has none.
func listXattrs(fd int) map[string][]byte {
	size, err := unix.Flistxattr(fd, nil)
	if err != nil || size <= 0 {
		return nil
	}
	buf := make([]byte, size)
	size, err = unix.Flistxattr(fd, buf)
	if err != nil {
		return nil
	}
	out := map[string][]byte{}
	for _, name := range bytes.Split(buf[:size], []byte{0}) {
		if len(name) == 0 {
			continue
		}
		n, err := unix.Fgetxattr(fd, string(name), nil)
		if err != nil {
			continue
		}
		v := make([]byte, n)
		if n, err = unix.Fgetxattr(fd, string(name), v); err == nil {
			out[string(name)] = v[:n]
		}
	}
	return out
}

func setXattr(fd int, name string, value []byte) error {
	err := unix.Fsetxattr(fd, name, value, 0)
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	return err
}
