//go:build unix && !linux

package broker

import (
	"net"
	"os"
)

// peerUID relies on the broker folder's mode (0700) here: the peer is
// taken to be this user.
func peerUID(*net.UnixConn) (int, error) { return os.Getuid(), nil }
