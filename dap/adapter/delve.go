package adapter

import (
	"debug/buildinfo"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

// delve (dlv dap) debugs Go: it builds a package or its tests inside the
// launch, runs an executable, attaches to a process and opens a core.
var delveSpec = Spec{
	ID: "delve", Language: "Go", Markers: []string{"go.mod"}, Extensions: []string{".go"},
	Commands:       [][]string{{"dlv", "dap", "--client-addr", "{addr}"}},
	Transport:      UnixClient,
	Install:        "go install github.com/go-delve/delve/cmd/dlv@latest",
	ExceptionKinds: map[string][]string{"uncaught": {"unrecovered-panic", "runtime-fatal-throw"}},
	ExceptionNote:  "delve stops on every unrecovered panic and fatal throw (uncaught) already; Go has no filter for a recovered panic (raised) or user_unhandled",
	ExprContext:    "repl",
	Banners:        []string{"Type 'dlv help' for list of commands.\n"},
	// delve's restart request leaves the new program held, with no
	// stopped event to say so: terminate and launch instead.
	Restart:         false,
	DataBreakpoints: true,
	HardwareWatch:   true,
	BuildsInLaunch:  true,
	Adapter:         delve{},
}

type delve struct{ Generic }

// delveLaunch is the launch request delve's DAP server reads (its
// LaunchConfig), the fields sent.
type delveLaunch struct {
	// Mode is debug (build the package and run it), test (build its
	// tests and run them), exec (run an executable) or core (open a core
	// file of Program).
	Mode string `json:"mode"`
	// Program is the package's folder or a file in it (debug, test), or
	// the executable (exec, core).
	Program string            `json:"program"`
	Args    []string          `json:"args,omitempty"`
	Cwd     string            `json:"cwd"`
	Env     map[string]string `json:"env,omitempty"`
	// Output is where debug and test build the binary: in the session's
	// folder, so it goes with the session.
	Output string `json:"output,omitempty"`
	// CoreFilePath is the core file, for mode core.
	CoreFilePath string `json:"coreFilePath,omitempty"`
	// OutputMode remote sends the program's output as output events;
	// local (delve's default) writes it to dlv's own stdout.
	OutputMode  string `json:"outputMode,omitempty"`
	StopOnEntry bool   `json:"stopOnEntry,omitempty"`
	// HideSystemGoroutines leaves the runtime's goroutines out of threads.
	HideSystemGoroutines bool `json:"hideSystemGoroutines"`
}

// delveAttach is the attach request delve reads (its AttachConfig).
type delveAttach struct {
	// Mode local attaches to a process on this machine.
	Mode      string `json:"mode"`
	ProcessID int    `json:"processId"`
}

// Launch builds and runs a package (or its tests matching Test), or runs
// an executable that is not a .go file.
func (delve) Launch(t Target) (any, error) {
	c := delveLaunch{Mode: "debug", Program: t.Program.Abs(), Args: t.ProgramArgs(), Cwd: t.Cwd, Env: t.Env,
		OutputMode: "remote", HideSystemGoroutines: true}
	if t.Test != "" {
		c.Mode = "test"
		c.Args = append([]string{"-test.run", t.Test}, c.Args...)
	} else if info, err := t.Guard.Stat(c.Program); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 && filepath.Ext(c.Program) != ".go" {
		c.Mode = "exec"
	}
	if c.Mode != "exec" {
		c.Output = filepath.Join(t.Dir, "__debug_bin")
	}
	return c, nil
}

// Attach attaches to the process PID.
func (delve) Attach(t Target) (any, string, error) {
	if t.PID <= 0 {
		return nil, "", BadArg("attach with delve needs pid")
	}
	return delveAttach{Mode: "local", ProcessID: t.PID}, "", nil
}

// Core opens a core in a launch of mode core.
func (delve) Core(program, core, cwd string) (string, any) {
	return "launch", delveLaunch{Mode: "core", Program: program, CoreFilePath: core, Cwd: cwd, HideSystemGoroutines: true}
}

// Claims a Go package's folder, and a process or core of a Go executable
// (one with Go's build information).
func (delve) Claims(c Claim) bool {
	switch c.Kind {
	case ClaimFolder:
		return hasGoFiles(c.Guard, c.Path)
	case ClaimProcess, ClaimCore:
		_, err := buildinfo.ReadFile(c.Path)
		return err == nil
	}
	return false
}

// Noise: a function's result slots (~r0, ~r1), garbage until it returns.
func (delve) Noise(v godap.Variable) bool {
	n, ok := strings.CutPrefix(v.Name, "~r")
	_, err := strconv.Atoi(n)
	return ok && err == nil
}

// hasGoFiles reports whether the folder abs holds a .go file.
func hasGoFiles(g *pathguard.Guard, abs string) bool {
	entries, err := g.ReadDir(abs)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e os.DirEntry) bool { return !e.IsDir() && strings.HasSuffix(e.Name(), ".go") })
}
