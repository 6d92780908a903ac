// Package dap drives debuggers over the Debug Adapter Protocol: real delve
// (dlv dap, dialling a unix socket in a private folder, never TCP),
// debugpy and lldb-dap (stdio), and any adapter added as a row of
// Adapters.
//
// The Client sits on framing: one reader goroutine, responses matched to
// requests by request_seq, every event in a numbered log. A Session runs
// the handshake every adapter accepts — launch sent without waiting,
// initialized awaited, breakpoints and exception filters, configurationDone,
// then the launch response — and keeps what the program did: numbered
// stops (a burst of per-thread stops is one stop), its exit, its output.
// The Supervisor holds at most one session for the run's conversation, with
// a hard time limit, and the breakpoints, which outlive sessions.
//
// Resumes never lose a stop: a resume notes how many stops there were,
// sends, and waits (bounded) for a later one, the program's end or the
// session's; a stop that came between calls is reported by the next call
// before anything is resumed. Frame, variable and scope references carry
// the stop they came from ("1000@3") and one from another stop is refused,
// never sent to the adapter. Every frame inside the root quotes its source;
// files outside the root are named and never read.
//
// Teardown, whatever ends a session: disconnect with terminateDebuggee, the
// adapter's process group, the program's own process group (adapters put
// the program in a group of its own; its id comes from the process event
// and is recorded with internal/proc so it dies with this process too),
// then the session's folder with delve's build output and the socket.
//
// The engine returns data (results.go); package dap/debugtool formats it.
package dap
