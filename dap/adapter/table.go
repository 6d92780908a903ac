package adapter

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/walk"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Transport is how the client reaches an adapter.
type Transport string

// Transports.
const (
	// Stdio: the adapter speaks DAP on its stdin and stdout.
	Stdio Transport = "stdio"
	// UnixClient: we listen on a unix socket in a private folder and the
	// adapter dials it (dlv dap --client-addr unix:…); never TCP.
	UnixClient Transport = "unix-client"
)

// Spec is one debug adapter, as data (DBG-4), with the Adapter that
// does what differs in code. Adding an adapter is a file holding both
// (delve.go is one) and its row in Table.
type Spec struct {
	ID       string
	Language string
	// Markers are files whose presence in the checkout says the adapter
	// fits it (the same intersection as language servers: marker and
	// binary).
	Markers []string
	// Extensions of a program file this adapter debugs.
	Extensions []string
	// Commands are the ways to start the adapter, tried in order; the
	// first whose program resolves on PATH wins. {addr} is replaced by the
	// socket address for UnixClient.
	Commands  [][]string
	Transport Transport
	// Probe, when set, are arguments for a command's program that must exit
	// 0 for that command to count (python3 -c "import debugpy": the first
	// python that has debugpy wins).
	Probe   []string
	Install string
	// ExceptionKinds maps the tool's exception kinds (uncaught, raised,
	// user_unhandled) to the adapter's own filters, sent when its
	// initialize answer offers them; a kind absent has no filter here.
	ExceptionKinds map[string][]string
	// ExceptionNote says what the adapter stops on without a filter, for
	// the adapters listing and a launch's result.
	ExceptionNote string
	// ExprContext is the evaluate context for expressions.
	ExprContext string
	// Banners are console messages of the adapter's own, not the
	// program's output.
	Banners []string
	// StopBursts: a stop comes as one stopped event per thread that has a
	// reason (lldb-dap), so a stop is described once the burst is over.
	StopBursts bool
	// DataBreakpoints: the version installed here advertises
	// supportsDataBreakpoints (watch checks the session's own answer).
	DataBreakpoints bool
	// HardwareWatch: its data breakpoints are the CPU's debug registers,
	// which some virtual machines accept and never fire (checked once per
	// process).
	HardwareWatch bool
	// Restart: the adapter's restart request is used when it offers one
	// (otherwise restart ends the session and launches again).
	Restart bool
	// BuildsInLaunch: the adapter builds the program inside the launch
	// request, before initialized (a launch reports it as the build time).
	BuildsInLaunch bool
	// NoEmptyFilters: setExceptionBreakpoints is not sent with no filters.
	NoEmptyFilters bool
	// StaleSource: a frame's source file changed after the program file
	// is marked newer (the program is an executable built earlier).
	StaleSource bool
	// OwnTerminal: a launched program is given a terminal the session
	// makes and reads itself (Target.Terminal), where the adapter would
	// relay its output slower than the program writes it.
	OwnTerminal bool
	// Adapter is what the adapter does its own way.
	Adapter Adapter
}

// Table is the debug adapters, each a row of data with its
// Adapter, in a file of its own. The order is the order of choice (see
// Adapter.Claims).
var Table = []Spec{delveSpec, debugpySpec, lldbSpec, dartSpec}

// Lookup returns the adapter with id.
func Lookup(id string) (Spec, bool) {
	for _, a := range Table {
		if a.ID == id {
			return a, true
		}
	}
	return Spec{}, false
}

// IDs lists the table's ids.
func IDs() []string {
	ids := make([]string, len(Table))
	for i, a := range Table {
		ids[i] = a.ID
	}
	return ids
}

// probeTimeout bounds one probe of an adapter's program.
const probeTimeout = 15 * time.Second

// Command resolves the first of a's commands whose program is on PATH (and
// passes the probe, run in a neutral folder and bounded), with its absolute
// path in place; nil and why if none does.
func (a Spec) Command(ctx context.Context) ([]string, string) {
	why := ""
	for _, c := range a.Commands {
		p, err := exec.LookPath(c[0])
		if err != nil {
			continue
		}
		if len(a.Probe) > 0 {
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			out, err := proc.Probe(pctx, p, a.Probe...)
			cancel()
			if err != nil {
				var te *proc.TimeoutError
				if errors.As(err, &te) {
					why = te.Error()
				} else {
					why = p + ": " + lastLine(string(out))
				}
				continue
			}
		}
		return append([]string{p}, c[1:]...), ""
	}
	return nil, why
}

// Status is one row of `adapters`: whether the adapter works for
// this checkout, and which half is missing when it does not.
type Status struct {
	ID       string   `json:"id"`
	Language string   `json:"language"`
	Markers  []string `json:"markers" jsonschema:"the files that make it fit a checkout"`
	// MarkerDirs are folders of the checkout holding one, relative, "."
	// for the root.
	MarkerDirs []string `json:"marker_dirs,omitempty"`
	Binary     string   `json:"binary,omitempty" jsonschema:"the adapter program found"`
	// State is available, no_marker, no_binary or no_marker_no_binary.
	State   string `json:"state"`
	Install string `json:"install,omitempty" jsonschema:"how to install it, when missing"`
	Why     string `json:"why,omitempty" jsonschema:"why the probe failed, when it did"`
	// Interpreter, for debugpy, is the Python a launched program runs
	// with: the checkout's own (relative to the root) or, without one, the
	// adapter's.
	Interpreter string `json:"interpreter,omitempty" jsonschema:"debugpy: the Python a launched program runs with"`
	// InterpreterProblem says why that Python cannot run debugpy's side
	// of a launch (a launch would fail), "" when it can.
	InterpreterProblem string `json:"interpreter_problem,omitempty" jsonschema:"debugpy: why that Python cannot run a launched program under debugpy"`
	// Exceptions are the exception kinds it has filters for.
	Exceptions    []string `json:"exceptions,omitempty" jsonschema:"the exception kinds launch's exceptions may name for it"`
	ExceptionNote string   `json:"exception_note,omitempty" jsonschema:"what it stops on without a filter"`
	// Watchpoints says whether it has data breakpoints (watch).
	Watchpoints bool `json:"watchpoints" jsonschema:"it has data breakpoints (watch) that fire on this machine"`
	// WatchpointsNote says why watch does not work here although the
	// adapter has data breakpoints.
	WatchpointsNote string `json:"watchpoints_note,omitempty" jsonschema:"why watch does not work on this machine, when the adapter has data breakpoints"`
}

// Adapter states.
const (
	StateAvailable        = "available"
	StateNoMarker         = "no_marker"
	StateNoBinary         = "no_binary"
	StateNoMarkerNoBinary = "no_marker_no_binary"
)

// Statuses checks every adapter against the checkout at call time (REG-3).
func Statuses(ctx context.Context, g *pathguard.Guard) []Status {
	dirs := markerDirs(ctx, g)
	out := make([]Status, 0, len(Table))
	for _, a := range Table {
		st := Status{ID: a.ID, Language: a.Language, Markers: append([]string{}, a.Markers...), Exceptions: a.Kinds(), ExceptionNote: a.ExceptionNote, Watchpoints: a.DataBreakpoints}
		if a.DataBreakpoints && a.HardwareWatch {
			if fires, why := HardwareWatchpoints(); !fires {
				st.Watchpoints, st.WatchpointsNote = false, why
			}
		}
		for _, m := range a.Markers {
			for _, d := range dirs[m] {
				if !slices.Contains(st.MarkerDirs, d) {
					st.MarkerDirs = append(st.MarkerDirs, d)
				}
			}
		}
		slices.Sort(st.MarkerDirs)
		cmd, why := a.Command(ctx)
		st.Why = why
		if cmd != nil {
			st.Binary = cmd[0]
			a.Adapter.Describe(ctx, g, cmd, &st)
		}
		switch {
		case cmd != nil && len(st.MarkerDirs) > 0:
			st.State = StateAvailable
		case cmd != nil:
			st.State = StateNoMarker
		case len(st.MarkerDirs) > 0:
			st.State = StateNoBinary
		default:
			st.State = StateNoMarkerNoBinary
		}
		if cmd == nil {
			st.Install = a.Install
		}
		out = append(out, st)
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// markerDirs finds every adapter marker in the checkout with the run's one
// walk policy, down to four levels.
func markerDirs(ctx context.Context, g *pathguard.Guard) map[string][]string {
	want := map[string]bool{}
	for _, a := range Table {
		for _, m := range a.Markers {
			want[m] = true
		}
	}
	found := map[string][]string{}
	entries := 0
	opts := walk.Options{MaxDepth: 4, SkipDirs: []string{"target", "build"}, Want: func(name string) bool { return want[name] }}
	_ = walk.Walk(ctx, g, g.Root(), opts, func(e walk.Entry) error {
		if entries++; entries > 20000 {
			return walk.SkipAll
		}
		name := path.Base(e.Rel)
		found[name] = append(found[name], path.Dir(e.Rel))
		return nil
	})
	return found
}

// Named is the adapter the agent named, or an error listing them.
func Named(id string) (Spec, error) {
	a, ok := Lookup(id)
	if !ok {
		return Spec{}, BadArg("unknown adapter %q; the adapters are %s", id, strings.Join(IDs(), ", "))
	}
	return a, nil
}

// Claimed is the first adapter that claims c.
func Claimed(c Claim) (Spec, bool) {
	for _, a := range Table {
		if a.Adapter.Claims(c) {
			return a, true
		}
	}
	return Spec{}, false
}

// ForProgram picks the adapter for a program: the one named, else the
// one that claims a module, else by the program's extension, else the one
// that claims what it is (a folder, an executable).
func ForProgram(g *pathguard.Guard, id, program, module string, abs string) (Spec, error) {
	if id != "" {
		return Named(id)
	}
	if module != "" {
		if a, ok := Claimed(Claim{Kind: ClaimModule}); ok {
			return a, nil
		}
	}
	ext := strings.ToLower(filepath.Ext(program))
	for _, a := range Table {
		if slices.Contains(a.Extensions, ext) {
			return a, nil
		}
	}
	info, err := g.Stat(abs)
	switch {
	case err != nil:
		return Spec{}, BadArg("program %s does not exist", program)
	case info.IsDir():
		if a, ok := Claimed(Claim{Kind: ClaimFolder, Path: abs, Guard: g}); ok {
			return a, nil
		}
		return Spec{}, BadArg("program %s is a folder without Go files; give a file, a Go package folder, or adapter", program)
	case info.Mode()&0o111 != 0:
		if a, ok := Claimed(Claim{Kind: ClaimExecutable, Path: abs, Guard: g}); ok {
			return a, nil
		}
	}
	return Spec{}, BadArg("cannot tell which adapter debugs %s; pass adapter (%s)", program, strings.Join(IDs(), ", "))
}

// ForAttach picks the adapter for an attach: the one named, else the
// one that claims what the agent gave: a port (debugpy.listen in the
// program), or a pid, by what that process runs (/proc/PID/exe).
func ForAttach(id string, port, pid int) (Spec, error) {
	if id != "" {
		return Named(id)
	}
	switch {
	case port > 0 && pid > 0:
		return Spec{}, BadArg("attach takes port (a Python program that called debugpy.listen) or pid (a running process), not both")
	case port > 0:
		if a, ok := Claimed(Claim{Kind: ClaimPort}); ok {
			return a, nil
		}
		return Spec{}, BadArg("no adapter attaches to a port; pass pid")
	case pid <= 0:
		return Spec{}, BadArg("attach needs port (a Python program that called debugpy.listen on it) or pid (a running Go, Python, C, C++ or Rust program)")
	}
	exe := "/proc/" + strconv.Itoa(pid) + "/exe"
	if _, err := os.Readlink(exe); err != nil {
		if _, serr := os.Stat("/proc/" + strconv.Itoa(pid)); serr != nil {
			return Spec{}, BadArg("no process %d is running", pid)
		}
		return Spec{}, BadArg("cannot tell what pid %d runs (%v); pass adapter (%s)", pid, err, orList(attachers()))
	}
	if a, ok := Claimed(Claim{Kind: ClaimProcess, Path: exe}); ok {
		return a, nil
	}
	return Spec{}, BadArg("no adapter claims what pid %d runs; pass adapter (%s)", pid, orList(attachers()))
}

// attachers are the ids of the adapters that attach.
func attachers() []string {
	var ids []string
	for _, a := range Table {
		if _, ok := a.Adapter.(Attacher); ok {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// orList is "a, b or c".
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}
