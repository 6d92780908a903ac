// Package registry holds one agent run's tools and the one call path every
// caller goes through: the run's MCP peers (in process and over stdio), the
// direct Run.Call of a harness that links the library, and a handler's own
// child calls (an interpreter's tool() bridge).
//
// Tools come in families (Family): a package declares a typed resource key,
// how its resource opens from the run's options, its tools and its
// wrappers. A tool is a Descriptor, a struct literal whose Handler is built
// by Func or With; the input schema comes from the params struct and the
// output schema from the result type (package toolschema), whose text the
// agent reads and whose JSON is the result's structured content; its hooks
// on the call path (Approve, Interrupts) are given to Func or With beside
// it, typed by the same params. A tool is registered only while the resource it needs is
// attached (REG-2). What a family's tools use of other families it declares
// in Requires (a family's resource by its key, or a service by its type
// that another family Provides); NewRun checks the declarations and lists
// what is missing in Run.Degraded (requires.go).
//
// The call path applies, in order: the run is open and the tool registered
// and visible in the caller's mode (REG-5); argument validation; refusal of
// a serial tool re-entered from its own call chain (REG-11); the approval
// gate for write and exec tools (REG-7); serialization of serial tools
// (REG-10); the wrappers that apply; the handler; the output budget
// (REG-12). A run has a lifetime: Close cancels calls in flight and waits
// for them before closing resources (REG-13).
//
// A handler that asks its human something blocks in Call.Elicit; on a peer
// call that becomes MCP's multi round-trip input request
// (registry/elicit). Nothing
// here listens on a network.
//
// Tool failures are tool error results whose text says what went wrong and
// what to do; a Go error from a HandlerFunc is reserved for protocol faults.
package registry
