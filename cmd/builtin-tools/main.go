// Command builtin-tools serves one agent run's built-in tools over stdio,
// lists what a mode sees, or runs one call from a shell. It never listens on
// a network (CLI-2).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/eval/evaltool"
	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/graph/graphtool"
	"github.com/builtin-tools/builtin-tools/graph/store"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/broker"
	"github.com/builtin-tools/builtin-tools/lsp/lsptool"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/structural"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/builtin-tools/builtin-tools/vibe/vibetool"
	"golang.org/x/term"
)

const usage = `builtin-tools — an agent run's built-in tools, over MCP, for one client only.

Usage:
  builtin-tools serve [flags]              serve one run over stdin/stdout (MCP)
  builtin-tools tools [flags]              list the tools a mode sees
  builtin-tools call [flags] TOOL [JSON]   run one call in a fresh run and print the result
  builtin-tools attach SOCKET              bridge stdin/stdout to a live run's debug socket (Run.ServeDebug)
  builtin-tools lsp-broker [flags]         hold language servers for the user's processes (started by serve)
  builtin-tools version

Run 'builtin-tools COMMAND --help' for a command's flags.
`

func main() {
	// The command starts every child through internal/proc, so it may be
	// the subreaper of what they leave behind (N18); tests call run and
	// are not.
	if err := proc.AdoptOrphans(); err != nil && runtime.GOOS == "linux" {
		fmt.Fprintf(os.Stderr, "builtin-tools: orphans of children are not adopted: %v\n", err)
	}
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	proc.Shutdown()
	os.Exit(code)
}

// run is main without os.Exit, for tests: 0 success, 1 a failed call or
// serve error, 2 bad usage.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return cmdServe(args[1:], stdin, stdout, stderr)
	case "tools":
		return cmdTools(args[1:], stdout, stderr)
	case "call":
		return cmdCall(args[1:], stdin, stdout, stderr)
	case "attach":
		return cmdAttach(args[1:], stdin, stdout, stderr)
	case "lsp-broker":
		return cmdBroker(args[1:], stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "builtin-tools", builtintools.Version)
		// What can outlive a run here (R15): said where a user looks.
		if ok, why := proc.Cgroups.Containment(); ok {
			fmt.Fprintln(stdout, "children: "+why)
		} else {
			fmt.Fprintln(stdout, "children: no cgroup of their own, because "+why)
		}
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "builtin-tools: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// common holds the flags every command shares.
type common struct {
	root, mode, approve, ask, conversation, without, grammars string
	graphCache, vibeState                                     string
	askTimeout, graphWait                                     time.Duration
	trust, vibe, gitWrites, broker                            bool
	workers                                                   tierCommands
	maxFrame, budget                                          int
	evalOutputCap, evalMemory, graphCacheSize, lspMemory      byteSize
}

func (c *common) register(fs *flag.FlagSet, defaultAsk string) {
	fs.StringVar(&c.root, "root", ".", "the run's root folder; every path is confined to it")
	fs.StringVar(&c.mode, "mode", "normal", "normal (all tools), plan or readonly (read tools only)")
	fs.StringVar(&c.approve, "approve", "", "approval policy for write and exec tools, e.g. write=ask,exec=deny (default: allow)")
	fs.StringVar(&c.ask, "ask", defaultAsk, "where questions go: elicit (the MCP client), terminal, or none")
	fs.DurationVar(&c.askTimeout, "ask-timeout", askuser.DefaultTimeout, "how long a question waits for an answer")
	fs.StringVar(&c.conversation, "conversation", "", "conversation id (default: one made for this process)")
	fs.StringVar(&c.without, "without", "", "tool families not to open, comma-separated: "+familyNames())
	fs.BoolVar(&c.trust, "trust-checkout", false, "trust the checkout: run programs inside it (node_modules/.bin, .venv/bin) and checkers that execute its code (cargo check); off, a read tool runs no code from the checkout")
	fs.BoolVar(&c.gitWrites, "allow-git-writes", false, "let write tools change repository metadata (.git/); changes to what git executes (config, hooks, info/) still need exec approval")
	fs.IntVar(&c.budget, "output-budget", registry.DefaultOutputBudget, "characters of text one result may hold; a longer one says what it left out and how to get it")
	fs.StringVar(&c.grammars, "grammars", defaultGrammars(), "folders of tree-sitter grammar libraries (libtree-sitter-<id>.so) loaded at run time, separated by "+string(os.PathListSeparator))
	fs.StringVar(&c.graphCache, "graph-cache", store.DefaultDir(), "the graph store: code_graph's per-file records by content, shared by every root, worktree and process of the user, so a file whose bytes were read before is not parsed again (\"\" keeps none)")
	fs.Var(&c.graphCacheSize, "graph-cache-size", "bound of the graph store on disk, e.g. 1GiB (the default), or none; past it the least recently used roots' records are removed (hourly, by one process)")
	wait := 5 * time.Second
	if fs.Name() == "call" {
		wait = 2 * time.Minute // one call per process: wait for the whole index
	}
	fs.DurationVar(&c.graphWait, "graph-wait", wait, "how long a code_graph query waits for the index to be built before answering from what is indexed")
	fs.BoolVar(&c.vibe, "vibe", false, "vibe mode: the vibe_* background-worker tools (needs --worker-command)")
	fs.Var(&c.evalOutputCap, "eval-output-cap", "bytes one eval cell may print before it is interrupted, e.g. 64MiB (the default); none for no cap")
	fs.Var(&c.evalMemory, "eval-memory-limit", "address-space limit of each eval kernel, e.g. 8GiB (the default, or three quarters of the machine's memory when that is less); none for no limit")
	fs.Var(&c.lspMemory, "lsp-memory-budget", "resident memory all language servers of this process may use together, e.g. 4GiB (default: a quarter of the machine's memory), or none; before a server starts past it, the least recently used idle ones are stopped")
	fs.BoolVar(&c.broker, "lsp-broker", true, "share language servers with the user's other builtin-tools processes through one broker process (started on first need, ended when unused; its socket in $XDG_RUNTIME_DIR/builtin-tools); --lsp-broker=false: this process starts its own, shared by its runs only")
	fs.Var(&c.workers, "worker-command", "with --vibe, what runs a worker of a tier, as TIER=CMD (fast='claude -p' good='codex exec -') for calls in normal mode and TIER@MODE=CMD (fast@plan='CMD') for plan or readonly, whose workers must run their tools in that mode (the command gets VIBE_MODE and VIBE_APPROVE, and {mode} and {approve} in its line); a call in a mode with no command is refused; repeat for each")
	fs.StringVar(&c.vibeState, "vibe-state", vibetool.DefaultStateDir(), "with --vibe, the folder where workers' records, results and worktrees are kept per root, so the next process over the same root finds them")
}

// tierCommands collects --worker-command TIER=CMD and TIER@MODE=CMD flags.
type tierCommands map[string]string

func (t *tierCommands) String() string {
	var parts []string
	for k, v := range *t {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, " ")
}

func (t *tierCommands) Set(v string) error {
	tier, line, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(tier) == "" || strings.TrimSpace(line) == "" {
		return fmt.Errorf("want TIER=CMD or TIER@MODE=CMD (fast='CMD', good='CMD', fast@plan='CMD'), got %q", v)
	}
	if *t == nil {
		*t = tierCommands{}
	}
	(*t)[strings.TrimSpace(tier)] = line
	return nil
}

// byteSize is a size flag: a number of bytes with an optional binary
// suffix (KiB, MiB, GiB; K, M, G and KB, MB, GB mean the same), or none
// (negative: no limit). Zero means the default.
type byteSize int64

func (b *byteSize) String() string {
	switch {
	case *b == 0:
		return ""
	case *b < 0:
		return "none"
	}
	return strconv.FormatInt(int64(*b), 10)
}

// storeBytes is the size as the graph store's bound: 0 its default,
// none no bound.
func (b byteSize) storeBytes() int64 {
	if b < 0 {
		return 1 << 62
	}
	return int64(b)
}

func (b *byteSize) Set(v string) error {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "none") {
		*b = -1
		return nil
	}
	num := strings.TrimRight(v, "KMGBikmgb")
	unit := strings.ToLower(strings.TrimSpace(v[len(num):]))
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("want a size such as 512MiB or 8GiB, or none; got %q", v)
	}
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
		"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}[unit]
	if mult == 0 {
		return fmt.Errorf("unknown unit %q in %q: use KiB, MiB or GiB", unit, v)
	}
	*b = byteSize(n * mult)
	return nil
}

// defaultGrammars is $BUILTIN_TOOLS_GRAMMARS, else the per-user grammar
// folder when it exists.
func defaultGrammars() string {
	if v := os.Getenv("BUILTIN_TOOLS_GRAMMARS"); v != "" {
		return v
	}
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		if home, err := os.UserHomeDir(); err == nil {
			data = filepath.Join(home, ".local", "share")
		}
	}
	dir := filepath.Join(data, "builtin-tools", "grammars")
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		return dir
	}
	return ""
}

// newRun builds the run the flags describe. stdio says whether stdin and
// stdout carry MCP, so a terminal port must use the controlling terminal.
func (c *common) newRun(stdin io.Reader, stdout io.Writer, stdio bool) (*registry.Run, tiers.Mode, error) {
	mode, err := tiers.ParseMode(c.mode)
	if err != nil {
		return nil, "", err
	}
	policy, err := registry.ParsePolicy(c.approve)
	if err != nil {
		return nil, "", err
	}
	var port askuser.Port
	switch c.ask {
	case "elicit":
		port = askuser.Elicitation{}
	case "terminal":
		port = terminalPort(stdin, stdout, stdio)
	case "none", "":
	default:
		return nil, "", fmt.Errorf("--ask %q: use elicit, terminal or none", c.ask)
	}
	var without []string
	for _, w := range strings.Split(c.without, ",") {
		if w = strings.TrimSpace(w); w != "" {
			without = append(without, w)
		}
	}
	conv := c.conversation
	if conv == "" {
		conv = fmt.Sprintf("cli-%d-%d", os.Getpid(), time.Now().Unix())
	}
	var grammarDirs []string
	if c.grammars != "" {
		grammarDirs = filepath.SplitList(c.grammars)
	}
	r, err := builtintools.NewRun(builtintools.Options{
		Root: c.root, ConversationID: conv, Policy: policy,
		Ask: port, AskTimeout: c.askTimeout, Without: without, TrustCheckout: c.trust, AllowGitWrites: c.gitWrites,
		Settings: map[string]any{
			structural.Key.Name(): astgrep.Options{GrammarDirs: grammarDirs},
			graphtool.Key.Name():  graphtool.Config{Options: graph.Options{StoreDir: c.graphCache, StoreBytes: c.graphCacheSize.storeBytes(), GrammarDirs: grammarDirs}, Wait: c.graphWait},
			vibetool.Key.Name():   vibetool.Config{On: c.vibe, Commands: c.workers, StateDir: c.vibeState},
			evaltool.Key.Name():   eval.Config{OutputCap: int64(c.evalOutputCap), MemoryLimit: int64(c.evalMemory)},
			lsptool.Key.Name():    c.lspConfig(),
		},
		MaxFrameBytes: c.maxFrame,
		OutputBudget:  c.budget,
	})
	if t, ok := port.(*askuser.Terminal); ok {
		if err != nil {
			t.Close()
		} else {
			r.OnClose(t.Close)
		}
	}
	return r, mode, err
}

// lspConfig is the lsp family's setting from the flags.
func (c *common) lspConfig() lsp.Config {
	cfg := lsp.Config{MemoryBudget: int64(c.lspMemory)}
	if c.broker {
		if exe, err := os.Executable(); err == nil {
			cfg.Broker = broker.Dir()
			// The broker this process starts keeps its budget for good.
			cfg.BrokerCommand = []string{exe, "lsp-broker", "--dir", cfg.Broker}
			if c.lspMemory != 0 {
				cfg.BrokerCommand = append(cfg.BrokerCommand, "--memory-budget", c.lspMemory.String())
			}
		}
	}
	return cfg
}

// cmdBroker is the language-server broker: it serves the user's other
// processes until it has had no server and no client for --grace.
func cmdBroker(args []string, stderr io.Writer) int {
	fs := flagSet("lsp-broker", "lsp-broker [flags]\n\nHolds language servers for the user's builtin-tools processes (started by them unless --lsp-broker=false).", stderr)
	dir := fs.String("dir", broker.Dir(), "the private folder of its socket")
	grace := fs.Duration("grace", 5*time.Second, "how long it waits, with no server and no client, before it exits")
	idle := fs.Duration("idle", 0, "stop a server no client has held for this long (default: the idle time its first client asked for)")
	var budget byteSize
	fs.Var(&budget, "memory-budget", "resident memory all its servers may use together, e.g. 4GiB (default: a quarter of the machine's memory), or none; it governs whatever budget a later process has (serve passes its --lsp-memory-budget)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	budgetKB := pool.DefaultBudgetKB()
	switch {
	case budget < 0:
		budgetKB = 0
	case budget > 0:
		budgetKB = max(int64(budget)/1024, 1)
	}
	ctx, cancel := signalContext()
	defer cancel()
	if err := broker.Serve(ctx, *dir, *grace, *idle, budgetKB); err != nil {
		fmt.Fprintf(stderr, "builtin-tools lsp-broker: %v\n", err)
		return 1
	}
	return 0
}

// familyNames lists the families --without takes.
func familyNames() string {
	var names []string
	for _, f := range builtintools.Families() {
		names = append(names, f.Name())
	}
	return strings.Join(names, ", ")
}

// terminalPort asks on stdin/stdout when they are a terminal and not the MCP
// pipe, else on the controlling terminal; with neither there is no port.
func terminalPort(stdin io.Reader, stdout io.Writer, stdio bool) askuser.Port {
	if f, ok := stdin.(*os.File); ok && !stdio && term.IsTerminal(int(f.Fd())) {
		return askuser.NewTerminal(stdin, stdout)
	}
	t, err := askuser.OpenTTY()
	if err != nil {
		return nil // a nil *Terminal in the interface would look like a port
	}
	return t
}

func flagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: builtin-tools %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags, returning the exit code to use when it should stop.
func parse(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}

// openRun parses the flags of a command that takes no arguments and opens
// its run on stdin and stdout; without a run, code is the exit status
// (help, a bad flag or an argument, a run that cannot open, said on stderr).
func (c *common) openRun(fs *flag.FlagSet, args []string, stdin io.Reader, stdout, stderr io.Writer) (r *registry.Run, mode tiers.Mode, code int) {
	if code, ok := parse(fs, args); !ok {
		return nil, "", code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "builtin-tools %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return nil, "", 2
	}
	r, mode, err := c.newRun(stdin, stdout, true)
	if err != nil {
		fmt.Fprintf(stderr, "builtin-tools %s: %v\n", fs.Name(), err)
		return nil, "", 2
	}
	return r, mode, 0
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
