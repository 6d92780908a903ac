package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
)

// cmdAttach bridges stdin/stdout to the unix socket a harness opened with
// Run.ServeDebug, so an MCP client that starts a program (the Inspector)
// can talk to that live run. It ends when either side does.
func cmdAttach(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flagSet("attach", "attach SOCKET\n\nBridges stdin/stdout to a live run's debug socket, the path Run.ServeDebug returned: "+
		"npx @modelcontextprotocol/inspector --cli builtin-tools attach SOCKET --method tools/list", stderr)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "builtin-tools attach: give the socket's path, as Run.ServeDebug returned it")
		return 2
	}
	sock := fs.Arg(0)
	if fi, err := os.Stat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
		fmt.Fprintf(stderr, "builtin-tools attach: %s is not a socket (is the run still open? Run.ServeDebug's socket goes with it)\n", filepath.Clean(sock))
		return 2
	}
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		fmt.Fprintf(stderr, "builtin-tools attach: %v\n", err)
		return 1
	}
	defer conn.Close()
	go func() {
		io.Copy(conn, stdin)
		conn.CloseWrite() // the run sees the end of input, as serve does
	}()
	// Done when the run's side ends: after the end of input it still sends
	// the answers in flight.
	io.Copy(stdout, conn)
	return 0
}
