// Package vibe is the roster of background workers behind the vibe_*
// tools (VB-1..3): workers started by a backend per tier (a command line,
// or a harness's own agent loop), at most a few running at once, each in
// its own process group with a time limit, and a journal on disk so that
// no finished worker's result is ever lost, whether or not anyone was
// waiting when it arrived.
//
// Status is one of a closed set: queued, running, succeeded, failed,
// timed_out, killed, lost. A run that gives no final result is failed,
// never succeeded. Every answer lists the finished workers whose results
// have not been read yet.
package vibe
