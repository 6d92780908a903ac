// Package dap drives debuggers over the Debug Adapter Protocol: real delve
// (dlv dap, dialling a unix socket in a private folder, never TCP),
// debugpy and lldb-dap (stdio), and any adapter added as a file of its
// own in package dap/adapter: its row of adapter.Table and its
// adapter.Adapter, the type that does what differs. Package dap keeps the
// session and the supervisor; nothing in it asks which adapter it has.
//
// The connection is package dap/dapclient's Client, on framing: one reader
// goroutine, responses matched to requests by request_seq, every event in a
// numbered log. A Session runs
// the handshake every adapter accepts — launch sent without waiting,
// initialized awaited (it may come before the launch, or after its
// response), breakpoints and exception filters, configurationDone, then
// the launch response — and keeps what the program did: numbered stops (a
// burst of per-thread stops is one stop, described once the burst is
// over), its exit, its output (at least the newest 1 MiB, each byte copied
// at most once more). The adapter runs under internal/proc, and a session
// ends only once its connection has been read to the end, so the events an
// adapter sends right before it exits count.
// The Supervisor holds at most one session for the run's conversation, with
// a hard time limit, and the breakpoints, which outlive sessions (package
// dap/breakpoint keeps them).
//
// Resumes never lose a stop: a resume notes how many stops there were,
// sends, and waits (bounded) for a later one, the program's end or the
// session's; a stop that came between calls is reported by the next call
// before anything is resumed. Frame, variable and scope references carry
// the stop they came from ("1000@3") and one from another stop is refused,
// never sent to the adapter. Every frame inside the root quotes its source;
// files outside the root are named and never read. A pause that lands
// outside the checkout (delve's interrupted thread, idle in the runtime)
// is shown on the thread whose stack reaches it, at its frame there. A
// child count is the adapter's, never invented; what reads as a value and
// is none (debugpy's variable groups, delve's unset result slots) is left
// out and named. Every wait is bounded and configurable (Config): the
// adapter's start, the launch, a resume, an evaluate, the session's life.
//
// Attach picks its adapter from what it is given (a port is debugpy's; a
// pid's /proc/PID/exe says Go, Python or other native code). Attaching to
// this process, its ancestors or a process it started is refused before
// any adapter starts: the debugger would stop the tools themselves.
// Terminate detaches from an attached program and leaves it running, or
// ends it when asked; what became of it is looked at, not assumed.
//
// Teardown, whatever ends a session: disconnect (with terminateDebuggee
// for a program we launched, or when asked), the adapter's process group
// and every process carrying its environment tag
// (the debuggee inherits it under delve, debugpy and lldb-dap, and so do
// its children, a setsid'd one included), the program's own process group
// (adapters put the program in a group of its own; its id comes from the
// process event and is tracked with internal/proc so it dies with this
// process too), then the session's folder (proc.TempDir) with delve's build
// output and the socket.
//
// The engine returns data (package dap/result); package dap/debugtool
// formats it.
package dap
