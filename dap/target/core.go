package target

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// A core file is a crash's memory: the core and the executable that wrote
// it are checked to be ELF files of the right kind, and held open for the
// session's life.

// openCore opens a core file named core (abs through the guard) and
// checks it is an ELF core; the file checked is the one the adapter reads
// (HeldPath), so a name swapped after the check changes nothing (R10).
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

// HeldPath names an open file so that another process (the adapter) opens
// that very file, whatever its name leads to now: /proc/PID/fd/N, which
// reopens the descriptor's file, not a path. The file stays open for the
// session's life.
func HeldPath(f *os.File) string {
	return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd())
}

// ChooseCore picks the adapter for a core: the one named (it must open
// core files), else the one that claims a core of exe (open): delve for a
// Go executable, lldb for other native code.
func ChooseCore(id string, exe *os.File) (adapter.Spec, error) {
	if id != "" {
		a, err := adapter.Named(id)
		if err != nil {
			return adapter.Spec{}, err
		}
		if err := OpensCores(a); err != nil {
			return adapter.Spec{}, err
		}
		return a, nil
	}
	if a, ok := adapter.Claimed(adapter.Claim{Kind: adapter.ClaimCore, Path: HeldPath(exe)}); ok {
		return a, nil
	}
	return adapter.Spec{}, adapter.BadArg("no adapter opens a core of %s; core works with %s", exe.Name(), coreAdapters())
}

// OpensCores refuses an adapter that opens no core files.
func OpensCores(a adapter.Spec) error {
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

// CoreFiles checks a core launch and opens its core and executable (the
// files the adapter is given, by HeldPath); it returns the core's absolute
// path.
func CoreFiles(g *pathguard.Guard, l adapter.LaunchSpec, program string) (abs string, core, exe *os.File, err error) {
	if a, ok := adapter.Lookup(l.Adapter); ok {
		if err := OpensCores(a); err != nil {
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
	if exe, err = openExecutable(g, program, g.Rel(program)); err != nil {
		core.Close()
		return "", nil, nil, err
	}
	return abs, core, exe, nil
}
