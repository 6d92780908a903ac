package dap

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/stack"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// A core file is a crash's memory, opened read-only: delve's core mode
// (launch with mode core, program and coreFilePath) or lldb-dap's attach
// with coreFile. Nothing runs, so nothing resumes.

// errCoreReadOnly is the error of an operation that would run the
// program of a core file session.
const errCoreReadOnly = "a core file is read-only: nothing runs, so it cannot %s; stack, threads, scopes, variables and evaluate read the crash; to run the program, terminate and launch it without core"

// openCore opens a core file named core (abs through the guard) and
// checks it is an ELF core; the file checked is the one the adapter reads
// (heldPath), so a name swapped after the check changes nothing (R10).
func openCore(g *pathguard.Guard, abs, core string) (*os.File, error) {
	if info, err := g.Stat(abs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, adapter.BadArg("core %s does not exist (paths are relative to the root)", core)
		}
		return nil, adapter.BadArg("core %s cannot be read: %v", core, err)
	} else if info.IsDir() {
		return nil, adapter.BadArg("core %s is a folder; give the core file the crash wrote", core)
	}
	f, _, err := g.Open(abs)
	if err != nil {
		return nil, adapter.BadArg("core %s cannot be opened: %v", core, err)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		f.Close()
		return nil, adapter.BadArg("core %s is not a core file (not an ELF file); give the file the crash wrote (core or core.PID)", core)
	}
	if ef.Type != elf.ET_CORE {
		f.Close()
		return nil, adapter.BadArg("core %s is an ELF %s, not a core file; give the crash's core as core and the executable as program", core, strings.TrimPrefix(ef.Type.String(), "ET_"))
	}
	return f, nil
}

// openExecutable opens the program of a core session (abs through the
// guard) and checks it is an ELF file; like the core, the adapter reads
// the file checked.
func openExecutable(g *pathguard.Guard, abs, program string) (*os.File, error) {
	f, info, err := g.Open(abs)
	if err != nil {
		if info != nil && info.IsDir() {
			return nil, adapter.BadArg("program %s is a folder; with core, program is the executable that crashed", program)
		}
		return nil, adapter.BadArg("program %s cannot be opened: %v", program, err)
	}
	if _, err := elf.NewFile(f); err != nil {
		f.Close()
		return nil, adapter.BadArg("program %s is not an executable (%v); with core, program is the executable that crashed (debugpy opens no core files)", program, err)
	}
	return f, nil
}

// heldPath names an open file so that another process (the adapter) opens
// that very file, whatever its name leads to now: /proc/PID/fd/N, which
// reopens the descriptor's file, not a path. The file stays open for the
// session's life.
func heldPath(f *os.File) string {
	return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd())
}

// chooseCore picks the adapter for a core: the one named (it must open
// core files), else the one that claims a core of exe (open): delve for a
// Go executable, lldb for other native code.
func chooseCore(id string, exe *os.File) (adapter.Spec, error) {
	if id != "" {
		a, err := adapter.Named(id)
		if err != nil {
			return adapter.Spec{}, err
		}
		if err := opensCores(a); err != nil {
			return adapter.Spec{}, err
		}
		return a, nil
	}
	if a, ok := adapter.Claimed(adapter.Claim{Kind: adapter.ClaimCore, Path: heldPath(exe)}); ok {
		return a, nil
	}
	return adapter.Spec{}, adapter.BadArg("no adapter opens a core of %s; core works with %s", exe.Name(), coreAdapters())
}

// opensCores refuses an adapter that opens no core files.
func opensCores(a adapter.Spec) error {
	if _, ok := a.Adapter.(adapter.CoreOpener); !ok {
		return adapter.BadArg("%s cannot open a core file; core works with %s", a.ID, coreAdapters())
	}
	return nil
}

// coreAdapters names the adapters that open core files and their
// languages: "delve (Go) and lldb (C, C++, Rust)".
func coreAdapters() string {
	var names []string
	for _, a := range adapter.Table {
		if _, ok := a.Adapter.(adapter.CoreOpener); ok {
			names = append(names, a.ID+" ("+a.Language+")")
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// readOnly refuses what would run the program of a core file session.
func (sess *Session) readOnly(what string) error {
	if sess.core == "" {
		return nil
	}
	return adapter.BadArg(errCoreReadOnly, what)
}

// CoreInfo is what a core file session opened.
type CoreInfo struct {
	File    string        `json:"file" jsonschema:"the core file, relative to the root"`
	Threads []ThreadGroup `json:"threads,omitempty" jsonschema:"the crash's threads, grouped by where they were"`
	Total   int           `json:"total_threads,omitempty"`
	Stack   []stack.Frame `json:"stack,omitempty" jsonschema:"the crashing thread's stack, from the frame above the checkout's first"`
	// Above counts the frames above Stack (the runtime's, in a Go crash);
	// Frames is the whole stack's, as far as it was read.
	Above  int `json:"frames_above,omitempty" jsonschema:"frames above the stack shown (stack shows them)"`
	Frames int `json:"frames,omitempty" jsonschema:"frames in the whole stack"`
}

// coreFiles checks a core launch and opens its core and executable (the
// files the adapter is given); it returns the core's absolute path.
func coreFiles(g *pathguard.Guard, l adapter.LaunchSpec, program string) (abs string, core, exe *os.File, err error) {
	if a, ok := adapter.Lookup(l.Adapter); ok {
		if err := opensCores(a); err != nil {
			return "", nil, nil, err
		}
	}
	switch {
	case l.Attach:
		return "", nil, nil, adapter.BadArg("core goes with launch (program: the executable that crashed), not attach")
	case l.Module != "" || l.Test != "":
		return "", nil, nil, adapter.BadArg("core takes program (the executable that crashed), not module or test")
	case program == "":
		return "", nil, nil, adapter.BadArg("core needs program: the executable that crashed and wrote it")
	}
	if abs, err = g.Of(l.Core); err != nil {
		return "", nil, nil, adapter.BadArg("%v", err)
	}
	if core, err = openCore(g, abs, l.Core.Rel()); err != nil {
		return "", nil, nil, err
	}
	if exe, err = openExecutable(g, program, relOr(g, program)); err != nil {
		core.Close()
		return "", nil, nil, err
	}
	if coreHook != nil {
		coreHook()
	}
	return abs, core, exe, nil
}

// coreHook, set by a test, runs once a core launch's files are checked and
// open, before the adapter starts: where a swap of their names lands.
var coreHook func()

// openCore describes a core file session once open: the crash's stop (the
// thread that crashed, its frame quoted, its locals), its threads and the
// top of that thread's stack.
func (s *Supervisor) openCore(ctx context.Context, sess *Session, wait time.Duration) (*StopResult, error) {
	res, err := s.waitStop(ctx, sess, 0, s.cfg.waitFor(wait))
	if err != nil {
		return nil, err
	}
	info := &CoreInfo{File: s.g.Rel(sess.core)}
	res.Core = info
	if res.Outcome != "stopped" {
		return res, nil
	}
	if th, err := s.Threads(ctx); err == nil {
		info.Threads, info.Total = th.Groups, th.Total
	}
	if frames, total, err := sess.stack.Frames(ctx, res.Stop.N, res.Stop.ThreadID, 30); err == nil {
		// From the frame above the checkout's first: a Go crash's top
		// frames are the runtime's signal handling.
		start := max(stack.InRoot(frames)-1, 0)
		info.Above = start
		info.Stack = frames[start:min(start+coreFrames, len(frames))]
		info.Frames = max(total, len(frames))
	}
	return res, nil
}

// coreFrames is how much of the crashing thread's stack a core's result
// shows; stack gives the rest.
const coreFrames = 8

// coreBreakpointsNote says why breakpoints set in a core session wait.
const coreBreakpointsNote = "the session reads a core file, where nothing runs: they are kept and sent at the next launch"
