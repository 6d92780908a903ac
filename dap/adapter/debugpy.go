package adapter

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/pyenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// debugpy debugs Python: a program or a module (pytest) run with the
// checkout's own interpreter, a program that called debugpy.listen (by
// its port), or a running Python process (by pid, through gdb).
var debugpySpec = Spec{
	ID: "debugpy", Language: "Python", Markers: []string{"pyproject.toml", "setup.py", "requirements.txt"}, Extensions: []string{".py"},
	// Debian's debugpy is for /usr/bin/python3, which may not be the
	// python3 first on PATH.
	Commands:       [][]string{{"python3", "-m", "debugpy.adapter"}, {"/usr/bin/python3", "-m", "debugpy.adapter"}},
	Transport:      Stdio,
	Probe:          []string{"-c", "import debugpy"},
	Install:        "apt-get install python3-debugpy (or pip install debugpy)",
	ExceptionKinds: map[string][]string{"uncaught": {"uncaught"}, "raised": {"raised"}, "user_unhandled": {"userUnhandled"}},
	ExceptionNote:  "a launch of -m pytest or -m unittest also stops on user_unhandled by default: the runner catches every test's exception, so a failing assert would never count as uncaught",
	ExprContext:    "repl",
	Adapter:        debugpy{},
}

// debugpy does everything its own way: it embeds no Generic.
type debugpy struct{}

// debugpyLaunch is the launch request debugpy reads.
type debugpyLaunch struct {
	Program string `json:"program,omitempty"`
	// Module runs python -m Module instead of a program.
	Module string            `json:"module,omitempty"`
	Args   []string          `json:"args"`
	Cwd    string            `json:"cwd"`
	Env    map[string]string `json:"env,omitempty"`
	// Python is the interpreter's command line: the checkout's own, as a
	// developer's shell would run the program (debug is exec tier, behind
	// approvals); unset, the adapter's.
	Python []string `json:"python,omitempty"`
	// Console internalConsole sends the program's output as output
	// events.
	Console        string `json:"console"`
	RedirectOutput bool   `json:"redirectOutput"`
	// JustMyCode keeps steps and exceptions in the checkout's code.
	JustMyCode bool `json:"justMyCode"`
	// SubProcess false: the program's children are not debugged (debugpy
	// follows them by default).
	SubProcess  bool `json:"subProcess"`
	StopOnEntry bool `json:"stopOnEntry"`
}

// debugpyAttach is the attach request debugpy reads: Connect for a
// program that listens, ProcessID for one debugpy injects itself into.
type debugpyAttach struct {
	Connect        *debugpyConnect `json:"connect,omitempty"`
	ProcessID      int             `json:"processId,omitempty"`
	JustMyCode     bool            `json:"justMyCode"`
	RedirectOutput bool            `json:"redirectOutput,omitempty"`
}

type debugpyConnect struct {
	Host string `json:"host"`
	Port int    `json:"port"`
}

// Launch runs the program, or the module, under the interpreter Preflight
// chose.
func (debugpy) Launch(t Target) (any, error) {
	c := debugpyLaunch{Module: t.Module, Args: t.ProgramArgs(), Cwd: t.Cwd, Env: t.Env,
		Console: "internalConsole", RedirectOutput: true, JustMyCode: true}
	if t.Module == "" {
		c.Program = t.Program.Abs()
	}
	if t.Python != "" {
		c.Python = []string{t.Python}
	}
	return c, nil
}

// Attach connects to the adapter debugpy.listen runs inside the program
// on its port (dialled, not started), or injects debugpy into the process
// PID with gdb.
func (debugpy) Attach(t Target) (any, string, error) {
	if t.PID > 0 && t.Port <= 0 {
		return debugpyAttach{ProcessID: t.PID, JustMyCode: true}, "", nil
	}
	if t.Port <= 0 {
		return nil, "", BadArg("attach with debugpy needs port (the program runs debugpy.listen(port)) or pid")
	}
	return debugpyAttach{Connect: &debugpyConnect{Host: "127.0.0.1", Port: t.Port}, JustMyCode: true, RedirectOutput: true},
		fmt.Sprintf("127.0.0.1:%d", t.Port), nil
}

// Claims a module, a port (debugpy.listen) and a process that runs a
// Python interpreter.
func (debugpy) Claims(c Claim) bool {
	switch c.Kind {
	case ClaimModule, ClaimPort:
		return true
	case ClaimProcess:
		target, err := os.Readlink(c.Path)
		return err == nil && strings.HasPrefix(filepath.Base(target), "python")
	}
	return false
}

// Preflight: an attach by pid needs gdb; a launch runs with the
// checkout's interpreter, and one that cannot run debugpy is said now,
// not after the launch's bound.
func (debugpy) Preflight(ctx context.Context, spec Spec, g *pathguard.Guard, l *LaunchSpec) error {
	if l.Attach && l.PID > 0 && l.Port <= 0 {
		if _, err := exec.LookPath("gdb"); err != nil {
			return fmt.Errorf("debugpy attaches to a running Python program by pid with gdb, which is not installed here (apt-get install gdb); or have the program call debugpy.listen and attach with port")
		}
	}
	if !l.Attach && l.Python == "" {
		if py := pyenv.Interpreter(g.Root()); py != "" {
			if cmd, _ := spec.Command(ctx); cmd != nil {
				if why := interpreterProblem(ctx, py, g.Rel(py), cmd[0]); why != "" {
					return fmt.Errorf("cannot launch under debugpy: %s", why)
				}
			}
			l.Python = py
		}
	}
	return nil
}

// Describe names the Python a launched program runs with, and why it
// cannot run debugpy when it cannot.
func (debugpy) Describe(ctx context.Context, g *pathguard.Guard, command []string, st *Status) {
	st.Interpreter = command[0]
	if py := pyenv.Interpreter(g.Root()); py != "" {
		st.Interpreter = g.Rel(py)
		st.InterpreterProblem = interpreterProblem(ctx, py, st.Interpreter, command[0])
	}
}

// DefaultExceptions: a test runner (-m pytest, -m unittest) catches every
// test's exception, so nothing is uncaught: user_unhandled as well.
func (debugpy) DefaultExceptions(l LaunchSpec) []string {
	if !l.Attach && (l.Module == "pytest" || l.Module == "unittest") {
		return []string{ExceptUncaught, ExceptUserUnhandled}
	}
	return []string{ExceptUncaught}
}

// Noise: the "special variables" and "function variables" groups
// (dunders and methods, on every object).
func (debugpy) Noise(v godap.Variable) bool {
	return v.Value == "" && v.VariablesReference > 0 && (v.Name == "special variables" || v.Name == "function variables")
}

// gdbCannotInject is what gdb prints when ptrace cannot write a process's
// extended register state (some kernels and virtual machines): it cannot
// call a function in the process, which debugpy's attach by pid needs.
const gdbCannotInject = "Couldn't write extended state status"

// Explain says what gdb's failure to inject means, before the adapter's
// long log, which the output budget may cut.
func (debugpy) Explain(command, msg, said string) string {
	if command == "attach" && strings.Contains(msg+said, gdbCannotInject) {
		msg += "\n(gdb on this machine cannot run code inside another process: the kernel refused to write the process's extended register state, so debugpy cannot inject itself by pid, and the attempt may have disturbed the program. Start the program under debugpy instead — python -m debugpy --listen 5678 --wait-for-client prog.py, or debugpy.listen() in it — and attach with port, or use launch.)"
	}
	return msg
}

// Function is pyFunc, with the launched program's own module names.
func (debugpy) Function(t Target, name, cond string) (string, string) {
	var main []string
	if !t.Attach {
		main = pyMainModules(t.Guard, t.LaunchSpec)
	}
	return pyFunc(t.Guard, main, name, cond)
}

// pyFunc is what debugpy is sent for a function breakpoint named name.
// pydevd (debugpy 1.6) matches a called function's bare name (its code
// object's co_name) and nothing else, so module.func never stopped.
// module.func and module.Class.method are sent as the bare name with a
// condition: the frame is in that module (__name__; the launched
// program's own module runs as __main__), and its code is that function's
// (found in the module or the class, decorators unwrapped): the nearest
// frame of that name above the condition's own is the one called, since
// pydevd evaluates it from the trace of that call. The agent's condition
// is added. The condition never raises: pydevd stops on one that does. (A
// hit_condition still counts every call of the bare name: pydevd counts
// before it evaluates the condition.)
func pyFunc(g *pathguard.Guard, main []string, name, cond string) (string, string) {
	parts := strings.Split(name, ".")
	if len(parts) < 2 || slices.Contains(parts, "") {
		return name, cond
	}
	k := pyModuleLen(g, main, parts)
	mod, class, fn := strings.Join(parts[:k], "."), parts[k:len(parts)-1], parts[len(parts)-1]
	check := "__name__ == " + pyString(mod)
	if slices.Contains(main, mod) {
		check = "__name__ in (" + pyString(mod) + ", '__main__')"
	}
	obj := "globals().get(" + pyString(fn) + ")"
	if len(class) > 0 {
		c := "globals().get(" + pyString(class[0]) + ")"
		for _, p := range class[1:] {
			c = "getattr(" + c + ", " + pyString(p) + ", None)"
		}
		obj = "getattr(" + c + ", '__dict__', {}).get(" + pyString(fn) + ")"
	}
	code := "(lambda o: getattr(__import__('inspect').unwrap(getattr(o, '__func__', o)), '__code__', None))(" + obj + ")"
	check += " and (lambda c, w: w(w, __import__('sys')._getframe(), 64, c))(" + code +
		", lambda w, f, n, c: f is not None and n > 0 and (f.f_code is c if f.f_code.co_name == " + pyString(fn) +
		" else w(w, f.f_back, n - 1, c)))"
	if cond != "" {
		check = "(" + check + ") and (" + cond + ")"
	}
	return fn, check
}

// pyModuleLen is how many of parts name the module: the longest prefix
// that is the launched program's module or a module file in the checkout,
// else all but the last (module.func).
func pyModuleLen(g *pathguard.Guard, main []string, parts []string) int {
	for k := len(parts) - 1; k >= 1; k-- {
		mod := strings.Join(parts[:k], ".")
		if slices.Contains(main, mod) {
			return k
		}
		if g == nil {
			continue
		}
		p := filepath.Join(append([]string{g.Root()}, parts[:k]...)...)
		for _, f := range []string{p + ".py", filepath.Join(p, "__init__.py")} {
			if info, err := g.Stat(f); err == nil && !info.IsDir() {
				return k
			}
		}
	}
	return len(parts) - 1
}

// pyString quotes s as a Python string literal.
func pyString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

// pyMainModules are the names a launched Python program's own module may
// be given as: its file's name and its path from the root, dotted; or
// the module run with -m.
func pyMainModules(g *pathguard.Guard, l LaunchSpec) []string {
	if l.Module != "" {
		return []string{l.Module}
	}
	if l.Program.IsZero() || filepath.Ext(l.Program.Abs()) != ".py" {
		return nil
	}
	rel := strings.TrimSuffix(filepath.ToSlash(g.Rel(l.Program.Abs())), ".py")
	out := []string{path.Base(rel)}
	if d := strings.ReplaceAll(rel, "/", "."); d != out[0] {
		out = append(out, d)
	}
	return out
}

// interpreterProblem says why py cannot run a program under debugpy, ""
// when it can (or when that cannot be told). debugpy runs inside the
// program: from py's own packages, or from the adapter's, which its
// launcher puts on py's path; a distribution's debugpy may need packages
// py does not have (Debian's needs bytecode), and the launch then waits
// its full bound for a debuggee that died at once.
func interpreterProblem(ctx context.Context, py, name, adapterPython string) string {
	probe := func(bin string, args ...string) (string, error) {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		out, err := proc.Probe(pctx, bin, args...)
		return string(out), err
	}
	if _, err := probe(py, "-c", "import debugpy"); err == nil {
		return ""
	}
	dir, err := probe(adapterPython, "-c", "import debugpy, os; print(os.path.dirname(os.path.dirname(debugpy.__file__)))")
	if err != nil {
		return ""
	}
	// As debugpy's own __main__ does: its folder on the path only for the
	// import of debugpy itself.
	out, err := probe(py, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import debugpy; del sys.path[0]; import debugpy.server.api", lastLine(dir))
	if err == nil {
		return ""
	}
	return fmt.Sprintf("%s cannot run debugpy, which runs inside the program (%s); install it there: %s -m pip install debugpy", name, lastLine(out), name)
}
