// Package adapter is what each debug adapter needs that the session does
// not know: its row of facts (Spec, in Table), the arguments of the
// requests that start it (an Adapter), how the agent's program or process
// picks it, and its exception filters. One file per adapter (delve.go,
// debugpy.go, lldb.go, dart.go) holds its row and its type; nothing
// outside those files asks which adapter it has. Package dap runs the
// session and the supervisor on top of it.
package adapter
