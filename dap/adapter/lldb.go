package adapter

import "slices"

// lldb (lldb-dap) debugs native code: C, C++ and Rust executables, a
// running process, a core file.
var lldbSpec = Spec{
	ID: "lldb", Language: "C, C++, Rust", Markers: []string{"Cargo.toml", "CMakeLists.txt", "Makefile", "compile_commands.json"},
	Commands:  [][]string{{"lldb-dap"}, {"lldb-dap-19"}, {"lldb-dap-18"}, {"lldb-vscode"}},
	Transport: Stdio,
	Install:   "apt-get install lldb-19 (gives lldb-dap-19)",
	// An uncaught C++ exception ends in abort(), a signal lldb stops on
	// with no filter; cpp_throw stops at every throw, caught or not.
	ExceptionKinds:  map[string][]string{"uncaught": {"rust_panic"}, "raised": {"cpp_throw", "rust_panic"}},
	ExceptionNote:   "lldb stops on the signal an uncaught C++ exception ends in (SIGABRT) without a filter; raised is cpp_throw (and rust_panic where lldb-dap offers it); its own filters (cpp_catch, objc_throw …) may be named too",
	ExprContext:     "watch",
	StopBursts:      true,
	Restart:         true,
	DataBreakpoints: true,
	HardwareWatch:   true,
	// lldb-dap 19 given an empty list of exception filters leaves a
	// launched program held in the dynamic loader's rendezvous (a pause
	// finds it there).
	NoEmptyFilters: true,
	// The program is an executable built before the session.
	StaleSource: true,
	// lldb-dap hands a program's output on 1,024 bytes at a time, each
	// erased from the front of what is still waiting: once a program
	// prints faster than that, the rest costs time quadratic in the
	// backlog (50 MB took 13-50 s where 2 s is usual, N15).
	OwnTerminal: true,
	Adapter:     lldb{},
}

type lldb struct{ Generic }

// lldbLaunch is the launch request lldb-dap reads.
type lldbLaunch struct {
	Program string   `json:"program"`
	Args    []string `json:"args"`
	Cwd     string   `json:"cwd"`
	// Env is the program's extra environment, NAME=value, sorted.
	Env         []string `json:"env,omitempty"`
	StopOnEntry bool     `json:"stopOnEntry"`
	// PreRunCommands run before the program starts: with a terminal of the
	// session's, they point its standard streams there.
	PreRunCommands []string `json:"preRunCommands,omitempty"`
}

// lldbAttach is the attach request lldb-dap reads: a process by Pid, or
// a core file of Program.
type lldbAttach struct {
	Pid      int    `json:"pid,omitempty"`
	Program  string `json:"program,omitempty"`
	CoreFile string `json:"coreFile,omitempty"`
}

// Launch runs the executable.
func (lldb) Launch(t Target) (any, error) {
	c := lldbLaunch{Program: t.Program.Abs(), Args: t.ProgramArgs(), Cwd: t.Cwd}
	for k, v := range t.Env {
		c.Env = append(c.Env, k+"="+v)
	}
	slices.Sort(c.Env)
	if t.Terminal != "" {
		for _, stream := range []string{"input", "output", "error"} {
			c.PreRunCommands = append(c.PreRunCommands, "settings set target."+stream+"-path "+t.Terminal)
		}
	}
	return c, nil
}

// Attach attaches to the process PID.
func (lldb) Attach(t Target) (any, string, error) {
	if t.PID <= 0 {
		return nil, "", BadArg("attach with lldb needs pid")
	}
	return lldbAttach{Pid: t.PID}, "", nil
}

// Core opens a core in an attach with coreFile.
func (lldb) Core(program, core, _ string) (string, any) {
	return "attach", lldbAttach{Program: program, CoreFile: core}
}

// Claims an executable, a process and a core that no adapter for one
// language claimed first: native code.
func (lldb) Claims(c Claim) bool {
	switch c.Kind {
	case ClaimExecutable, ClaimProcess, ClaimCore:
		return true
	}
	return false
}
