// Package protocol is the part of the Language Server Protocol that package
// lsp speaks, as data: the request, notification and result structs it sends
// and reads, the capabilities it announces, and positions in a document —
// a file's text split into lines, columns converted between UTF-8, UTF-16
// and UTF-32 (the encodings a server may negotiate), and a [Place] (a line
// and a symbol on it, as an agent names a position) found on that text;
// a path as a file:// URI and back; the protocol's union shapes read (a
// location, a list of locations or links, hover contents, a code
// action's command). It knows nothing of servers, processes or the checkout; every layer of lsp
// uses it and it uses none of them.
//
// # Why the types are hand-written
//
// The structs are a minimal subset written here
// rather than imported. go.lsp.dev/protocol (v0.12.0, the newest) predates
// LSP 3.17: it has no positionEncodings and no pull diagnostics, and its
// WorkspaceEdit.DocumentChanges holds only text edits, so the file renames
// lsp_rename must apply cannot even be decoded; it would also bring zap, a
// second JSON-RPC library and a JSON encoder. gopls's generated types are
// internal to gopls. The subset covers only the fields this client sends or
// reads, with the specification's JSON names; result shapes that vary by
// server are decoded where they are used.
package protocol
