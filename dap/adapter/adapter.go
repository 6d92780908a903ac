package adapter

import (
	"context"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Adapter is what one debug adapter does its own way, beside the facts in
// its row (Spec): the arguments of the request that starts a
// session, the checks before it starts, and the quirks of its answers.
// Each adapter is a type in a file of its own (delve.go, debugpy.go,
// lldb.go, dart.go) that embeds Generic for what it does the common way; nothing else in dap
// asks which adapter it has. An Adapter keeps no state: one value serves
// every session, and its methods may be called concurrently.
type Adapter interface {
	// Launch is the launch request's arguments, a struct the way the
	// adapter documents them.
	Launch(t Target) (any, error)
	// Claims says whether, when the agent names no adapter, this one
	// debugs what it gave. The first adapter of the table that claims it
	// is picked, so a catch-all (native code) comes after the adapters
	// for one language.
	Claims(c Claim) bool
	// Preflight checks before the adapter starts what the session needs
	// of this machine, and may fill in l (debugpy: the checkout's own
	// interpreter).
	Preflight(ctx context.Context, spec Spec, g *pathguard.Guard, l *LaunchSpec) error
	// Describe adds the adapter's own facts to its row of `adapters`;
	// command is its resolved command line.
	Describe(ctx context.Context, g *pathguard.Guard, command []string, st *Status)
	// DefaultExceptions are the exception kinds a launch that names none
	// stops on (kinds the adapter has no filter for are dropped after).
	DefaultExceptions(l LaunchSpec) []string
	// Noise says whether a variable reads as a value and is none; it is
	// left out of a listing, and named.
	Noise(v godap.Variable) bool
	// Explain is the message of the adapter's refusal of command, with
	// what it means added where the adapter's words do not say it; said
	// is what the adapter printed before it refused.
	Explain(command, msg, said string) string
	// Function is the name and condition a function breakpoint on name
	// with condition cond is sent as.
	Function(t Target, name, cond string) (string, string)
}

// Attacher is an Adapter that attaches to a running program.
type Attacher interface {
	// Attach is the attach request's arguments, and an address to dial
	// instead of starting the adapter ("": start it).
	Attach(t Target) (args any, dial string, err error)
}

// CoreOpener is an Adapter that opens core files.
type CoreOpener interface {
	// Core is the request (launch or attach) and its arguments that open
	// core, the crash of program, both named so the adapter opens the
	// files checked (heldPath).
	Core(program, core, cwd string) (command string, args any)
}

// LaunchSpec says what to debug.
type LaunchSpec struct {
	Adapter string
	// Program is a file, a Go package folder, or an executable, from the
	// run's guard.
	Program pathguard.Path
	// Module is a Python module to run instead of a program (pytest).
	Module string
	Args   []string
	Cwd    pathguard.Path // default the root
	Env    map[string]string
	// Test names Go tests to run under delve's test mode (-test.run).
	Test string
	// Python, when set, is the interpreter debugpy runs the program with;
	// by default the checkout's own (internal/pyenv), else the adapter's.
	Python string
	// Exceptions are the exception kinds (uncaught, raised,
	// user_unhandled) or the adapter's own filter names to stop on; nil
	// is the default (Spec.DefaultExceptions), empty stops on none.
	Exceptions []string
	// Attach: connect to a running program instead (debugpy: Port or
	// PID; delve and lldb: PID).
	Attach bool
	Port   int
	PID    int
	// Core, with Program the executable that crashed, opens a core file
	// read-only instead of running the program (delve, lldb).
	Core pathguard.Path
}

// Target is a launch or an attach, checked, as an adapter's arguments
// need it.
type Target struct {
	LaunchSpec
	// Guard is the run's root.
	Guard *pathguard.Guard
	// Cwd is the program's folder: the one asked for, else the root.
	Cwd string
	// Dir is the session's own folder, removed with it (delve builds the
	// program there).
	Dir string
	// Terminal is the path of a terminal the session made for a launched
	// program's standard streams (Spec.OwnTerminal); "" leaves them to the
	// adapter.
	Terminal string
}

// ProgramArgs are the program's arguments, [] for none.
func (t Target) ProgramArgs() []string {
	if t.Args == nil {
		return []string{}
	}
	return t.Args
}

// ClaimKind is what the agent gave in place of an adapter's name.
type ClaimKind int

// What an adapter may be picked for.
const (
	// ClaimModule: a module to run instead of a program (python -m).
	ClaimModule ClaimKind = iota + 1
	// ClaimFolder: a folder, Path, as the program.
	ClaimFolder
	// ClaimExecutable: an executable file, Path, as the program.
	ClaimExecutable
	// ClaimPort: attach to a program listening on a port.
	ClaimPort
	// ClaimProcess: attach to a running process whose executable is Path
	// (/proc/PID/exe).
	ClaimProcess
	// ClaimCore: open a core of the executable Path.
	ClaimCore
)

// Claim is what an adapter is asked to claim (Adapter.Claims).
type Claim struct {
	Kind  ClaimKind
	Path  string
	Guard *pathguard.Guard
}

// Generic is what an adapter does unless it says otherwise; an adapter
// type embeds it and writes only what differs.
type Generic struct{}

// programLaunch is the launch request most adapters read: the program,
// its arguments and its folder.
type programLaunch struct {
	Program string   `json:"program"`
	Args    []string `json:"args"`
	Cwd     string   `json:"cwd"`
}

func (Generic) Launch(t Target) (any, error) {
	return programLaunch{Program: t.Program.Abs(), Args: t.ProgramArgs(), Cwd: t.Cwd}, nil
}

func (Generic) Claims(Claim) bool { return false }

func (Generic) Preflight(context.Context, Spec, *pathguard.Guard, *LaunchSpec) error {
	return nil
}

func (Generic) Describe(context.Context, *pathguard.Guard, []string, *Status) {}

func (Generic) DefaultExceptions(LaunchSpec) []string { return []string{ExceptUncaught} }

func (Generic) Noise(godap.Variable) bool { return false }

func (Generic) Explain(_, msg, _ string) string { return msg }

func (Generic) Function(_ Target, name, cond string) (string, string) { return name, cond }
