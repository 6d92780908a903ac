// Package vibe is the roster of background workers behind the vibe_*
// tools (VB-1..3): workers started by a backend per tier and per mode (a
// command line, or a harness's own agent loop), at most a few running at
// once, each a child owned by internal/proc with a time limit, and a
// journal in a state folder meant to outlive the process, so that no
// finished worker's result is ever lost: not when nobody was waiting, and
// not when the process that ran it died (the next roster over the folder
// takes its workers over).
//
// The vibe tools are read tier, so the gate is the worker's: a run gets
// the mode of the call that started it and the run's approval policy, a
// call outside normal mode starts only a backend meant for its mode, and
// such a worker runs in a git worktree of its own.
//
// A worker's output is read as it comes: its last lines are shown while
// it runs; the event streams of claude's and codex's CLIs give the result,
// usage, session and errors (package vibe/agentstream), a later run resumes the session
// with only the new message, and a budget of cost or tokens stops a run
// whose reported usage passes it. A worktree worker's commits are merged
// into the root's branch by Merge (the git is package vibe/worktree's),
// which on a conflict applies nothing.
//
// Status is one of a closed set: queued, running, succeeded, failed,
// timed_out, killed, lost. A run that gives no final result is failed,
// never succeeded. Every answer lists the finished workers whose results
// have not been read yet.
//
// Close keeps only what holds work: a record with an unread result, a
// worktree with commits or changes (Kept says which and why; the next
// roster's first answer names the worktrees again). A worktree without
// either is removed with its branch, and a root's state folder left with
// no record is emptied by the last roster over it to close, down to the
// highest worker id given there: ids go on, so that one never names two
// workers over a root.
package vibe
