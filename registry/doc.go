// Package registry holds one agent run's tools: which are registered (only
// those whose backing resource is attached, REG-2), which each mode sees
// (REG-5), and the one call path every caller goes through — the run's MCP
// peer today, an interpreter cell's tool() bridge later (REG-8).
//
// A tool is a Descriptor: name, tier, the resources it needs, an input schema
// derived from a params struct, and a handler. Tool packages export
// descriptors; a harness lists them in Config.Tools. The call path applies,
// in order: the mode's tier check, argument validation against the schema,
// the approval gate for write and exec tools (REG-7), serialization for tools
// that are not parallel-safe (REG-10), the run's wrappers (for example
// diagnostics after a write), and finally the handler.
//
// Each mode gets its own mcp-go server bound to the run. Its tool filter hides
// tools outside the mode from tools/list and also refuses tools/call to them
// by name; a request hook turns that refusal into a message that says why.
// Peers are reached in process (mcp-go's in-process client) or over stdio
// (ServeStdio). Nothing here listens on a network.
//
// Tool failures are tool error results (IsError) whose text says what went
// wrong and what to do; a handler's Go error is reserved for protocol faults.
package registry
