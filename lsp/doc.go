// Package lsp drives real language servers (gopls, pyright,
// typescript-language-server, clangd, rust-analyzer, the Dart analyzer) for
// one agent run: it is the library behind the `lsp` and `lsp_rename` tools
// and behind diagnostics on write. It is not an MCP tool itself (the
// registry's descriptors call it) and not a general LSP client library.
//
// A [Supervisor] owns the servers of one checkout. It starts nothing when
// created (LSP-1); the first call that needs a server starts it, for the
// nearest folder holding one of the server's root markers, so a monorepo
// gets one server per module. A server is used only when its root marker is
// present and its binary resolves (LSP-2); [Supervisor.Status] says which
// half is missing. Idle servers are reaped, a crashed one is reported on the
// failing call and replaced on the next, and [Supervisor.Close] shuts them
// all down (shutdown, exit, then a kill of the process group, so helper
// processes such as tsserver do not outlive the run). With [Config.Pool]
// the runs of a process over the same folder share each server (a
// [pool.Pool] counts the runs holding it, and the last one to close stops it); each
// run keeps what it was shown, and a preview holds its server alone.
//
// Servers are data: [langserver.Table] is a table of [langserver.Spec]
// rows, and adding a language is adding a row.
//
// # Trust
//
// `lsp` is a read tool, and a read runs no code from the checkout. Unless
// [Config.Trusted] is set, programs are resolved on PATH only (never in the
// checkout's node_modules/.bin or .venv/bin), a checker that executes the
// project's code (cargo check runs build.rs) is skipped with the reason,
// typescript-language-server is pointed at the TypeScript installed beside
// it rather than the checkout's, and rust-analyzer runs no build script or
// procedural macro. The toolchain managers behind PATH are kept from the
// checkout's per-folder files (rust-toolchain.toml, .python-version,
// .tool-versions, a package.json Volta reads, a go.mod toolchain line):
// every server, probe and checker runs with the user's own choices pinned
// in its environment, probes run outside the root, and rust-analyzer does
// not start where the checkout has a .cargo/config.toml or
// rust-analyzer.toml (packages lsp/toolenv and lsp/langserver). Whatever
// the trust, servers keep caches and indexes in a private folder outside
// the root (clangd's background index included), and what a start reads
// of the checkout (a compilation database, the root markers) goes through
// the run's path guard: a regular file inside the root, never a pipe or a
// device.
//
// Nothing outside the root is quoted: locations there are named, not
// read; hover text for a symbol declared there is withheld, as is the
// title of a code action whose edit changes a file there.
//
// # Operations
//
// Every query takes a file and a [protocol.Place]: a 1-based line and a symbol — a
// substring of that line — never a column (LSP-3). The column is where the
// substring stands (a whole word first; of a qualified name such as
// stats.Sum, its last part; of a name the line holds more than once, the
// occurrence asked for), converted to the position encoding the server negotiated (utf-8
// is offered through general.positionEncodings and clangd's offsetEncoding;
// UTF-16 code units otherwise). Results are data with JSON names, not
// prose (package [answer]: [answer.Locations], [answer.Hover],
// [answer.Symbols], [answer.Status] ...): paths relative to the root,
// 1-based lines, the source line quoted, long lists capped with the total
// (LSP-4, LSP-5); package lsptool renders them for the agent.
// [Supervisor.IncomingCalls] and [Supervisor.OutgoingCalls] ask the
// server's call hierarchy (prepareCallHierarchy, then incomingCalls or
// outgoingCalls) and return one [answer.CallSite] per call, the call's
// line quoted and the function at the other end named with where it is
// declared.
// Errors are typed (see the Err* sentinels, [PositionError],
// [UnavailableError], [ServerError]) and their text says what to do.
//
// Before each query the files the server has open are re-synced from disk
// when their size or modification time changed and their text differs, so
// no answer is computed on stale text. Documents are synced with full text
// (didOpen, then didChange with increasing versions, then didSave).
//
// # Diagnostics on write
//
// [Supervisor.CheckWritten] is the hook the write wrapper calls after write,
// edit or apply_patch (WRT-1), and says what came of it in a [diag.Verdict]
// (WRT-4; [Supervisor.AfterWrite] is the same check as diagnostics and an
// error): it syncs the file and awaits the diagnostics
// for that exact version — pulled when the server offers it
// (textDocument/diagnostic: pyright) or its row has a pull of its own
// (typescript-language-server, which publishes nothing after a change that
// leaves a clean file clean, is asked through tsserver's diagnostics
// commands), otherwise published ones: the first publish for the version
// from a server that publishes once ([langserver.Spec.PublishesOnce]: gopls,
// clangd), else once a publish for the version has arrived and no further
// publish followed within a short settle window, bounded by
// [Config.DiagnosticsWait]. There is no fixed sleep. What comes after the
// bound is watched for, up to [LateWait], and handed to the caller then
// ([diag.WriteCheck].Late; WRT-5). A [diag.Ledger]
// per run keeps only new diagnostics (WRT-2), says which reported ones a
// later check no longer finds, and a file no server owns costs no wait
// (WRT-3). Every path a result names, in a server's or a checker's words
// too, is relative to the root ([Supervisor.RelText]).
//
// # Preview
//
// [Supervisor.Preview] gives the servers proposed contents as unsaved
// versions (didChange, or didOpen; never didSave), awaits those versions'
// diagnostics as AfterWrite does, and puts every document back to the
// disk's text, also when it fails or is cancelled. Previews of one server
// are serialized with each other and with its document syncs. Each file's
// [diag.Verdict] says what the version would introduce and fix, keyed as the
// [diag.Ledger] keys, or why it was not checked.
//
// # Rename
//
// [Supervisor.Rename] applies the server's WorkspaceEdit (package [wsedit]) — `changes` and
// `documentChanges`, including file create, rename and delete — in memory
// first, then writes every file through internal/atomicfile all or nothing
// (a moved file with its source's mode and owner), and re-syncs the
// server; the write wrapper then checks every file it changed, as after an
// edit.
//
// # Fixes
//
// [Supervisor.CodeActions] gives each enabled action an id held for the
// run with the file's text it was computed from. [Supervisor.PlanAction]
// works one out (refused, with the actions offered now, once the file has
// changed) and [Supervisor.PlanFix] organize imports, fix-all or
// formatting by kind, writing nothing: the [FixPlan] holds the files and
// their text before and after, for an approval card. [Supervisor.CommitFix]
// writes exactly that plan, then runs the action's command through
// workspace/executeCommand while the server's workspace/applyEdit requests
// are taken for that one call (refused at any other time), each put to a
// [Confirm] before it is written, bounded by [Config.ApplyEditWait].
// [Supervisor.ApplyAction] and [Supervisor.Fix] do both with no one to
// confirm. An edit that would make a file larger than 16 MiB is refused
// before anything is written, by lsp_rename too.
//
// Below this package: [protocol] (the LSP types and positions in a
// document), [wsedit] (a WorkspaceEdit worked out and written all or
// nothing), [diag] (diagnostics, the run's ledger, a write's verdict),
// [answer] (what the operations return, as data), [langserver] (the
// server table and each row's Prepare and hooks), [checkout] (the root,
// its path guard, how results name its files), [projcheck] (the project
// checkers of diagnostics "*") and [pool] (the running servers a
// process's runs share, their reaping and memory budget). The operations
// and their errors are package lsp's own.
//
// Inside, a Supervisor is its operations over four parts, each with the
// data its methods use: the checkout (package checkout; edits are planned
// and written into it here, through wsedit), the launcher (which server
// owns a file, the toolchain pins, probes and starts), the fleet (the
// servers the run holds, as entries of a pool, their crashes and start
// failures) and the
// actions listed (fix.go). A server is one process and its connection;
// the documents it was sent and their diagnostics are its documents
// (docsync.go).
//
// JSON-RPC is github.com/sourcegraph/jsonrpc2, over the project's framing
// package (framing.NewObjectStream), which is the only code that knows the
// Content-Length header.
package lsp
