package lsp

import (
	"cmp"
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/lsp/toolenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Supervisor holds the language servers of one run: it starts them on
// demand, one per (server, root marker folder), restarts crashed ones on
// the next call, and lets go of them all on Close. With [Config.Pool] set
// the servers are shared with the other runs of the process over the same
// folder (LSP-7), and a server stops when its last run closes; otherwise
// they are the run's own. Idle ones are reaped either way. Its methods are
// safe for concurrent use.
type Supervisor struct {
	co       *checkout.Checkout // the folder and how results name its files (package checkout)
	ownGuard bool               // the guard was opened here, and Close closes it
	cfg      Config

	tools launcher // which server owns a file, and its start (launcher.go; its environment, package toolenv)
	fleet fleet    // the servers the run holds (fleet.go)

	// actions are the code actions listed in this run, by id (fix.go).
	actions actionTable
}

// Guard is the path guard the supervisor reads and confines through: the
// locations its methods take come from it (Guard.Path).
func (s *Supervisor) Guard() *pathguard.Guard { return s.co.Guard() }

// Root returns the checkout root the supervisor works in.
func (s *Supervisor) Root() string { return s.co.Root() }

// RelText rewrites the paths in text — a server's message, a checker's
// output line, an error — as every result names files: relative to the
// root.
func (s *Supervisor) RelText(text string) string { return s.co.RelText(text) }

// NewSupervisor returns a Supervisor for the checkout at root, with a path
// guard of its own. It starts nothing (LSP-1): servers start on the first
// call that needs them.
func NewSupervisor(root string, cfg Config) *Supervisor {
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = filepath.Clean(root)
	}
	roots := []string{abs}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil && resolved != abs {
		roots = []string{resolved, abs}
	}
	guard, _ := pathguard.New(roots[0])
	s := newSupervisor(roots, guard, cfg)
	s.ownGuard = guard != nil
	return s
}

// OpenSupervisor returns a Supervisor over the run's path guard g (a
// family's Open passes registry.Env.Guard), which Close leaves open.
func OpenSupervisor(g *pathguard.Guard, cfg Config) *Supervisor {
	return newSupervisor([]string{g.Root()}, g, cfg)
}

func newSupervisor(roots []string, guard *pathguard.Guard, cfg Config) *Supervisor {
	s := &Supervisor{co: checkout.New(roots, guard), cfg: cfg.withDefaults()}
	s.tools = launcher{co: s.co, cfg: &s.cfg, env: toolenv.New(roots, s.cfg.Trusted)}
	s.fleet = fleet{co: s.co, la: &s.tools, cfg: &s.cfg,
		servers:  map[serverKey]*pool.Entry{},
		ownPool:  pool.New(),
		crashes:  map[serverKey]answer.Crash{},
		failures: map[serverKey]*startFailure{},
		told:     map[string]bool{},
		stop:     make(chan struct{}),
	}
	if cfg.MemoryBudget != 0 {
		s.fleet.ownPool.SetBudget(cfg.MemoryBudget)
		if cfg.Pool != nil {
			cfg.Pool.SetBudget(cfg.MemoryBudget)
		}
	}
	return s
}

// DiagnosticsWait is the bound on one version's diagnostics.
func (s *Supervisor) DiagnosticsWait() time.Duration { return s.cfg.DiagnosticsWait }

// Close lets go of every server the run holds: each that no other run
// holds is shut down (shutdown and exit, then kill of its process group)
// and waited for. Calls after Close fail with ErrClosed.
func (s *Supervisor) Close() error {
	if s.fleet.close() && s.ownGuard {
		s.co.Guard().Close()
	}
	return nil
}

// Reload restarts the server that owns file (file "" restarts every
// running server) and returns what it did. On an error it returns what
// was reloaded before it.
func (s *Supervisor) Reload(ctx context.Context, file pathguard.Path) (*answer.ReloadResult, error) {
	if file.IsZero() {
		res := &answer.ReloadResult{All: true, Servers: []answer.Reloaded{}}
		for _, srv := range s.fleet.running() {
			key := serverKey{srv.spec.ID, srv.root}
			s.fleet.stopKey(ctx, key)
			t0 := time.Now()
			c := &choice{spec: srv.spec, root: srv.root, bin: srv.bin}
			started, err := s.fleet.serverFor(ctx, c)
			if err != nil {
				return res, err
			}
			started.release()
			res.Servers = append(res.Servers, answer.Reloaded{Server: srv.spec.ID, Root: started.relRoot, WasRunning: true,
				PID: started.PID(), ReadyMS: time.Since(t0).Round(time.Millisecond).Milliseconds()})
		}
		return res, nil
	}
	path, err := s.fleet.checkFile(file)
	if err != nil {
		return nil, err
	}
	c, err := s.tools.choose(path)
	if err != nil {
		return nil, err
	}
	key := serverKey{c.spec.ID, c.root}
	was := s.fleet.stopKey(ctx, key)
	t0 := time.Now()
	srv, err := s.fleet.serverFor(ctx, c)
	if err != nil {
		return nil, err
	}
	srv.release()
	return &answer.ReloadResult{Servers: []answer.Reloaded{{Server: c.spec.ID, Root: srv.relRoot, WasRunning: was,
		PID: srv.PID(), ReadyMS: time.Since(t0).Round(time.Millisecond).Milliseconds()}}}, nil
}

// Status says, per language in the table, whether its root marker is in the
// checkout and its binary resolves, and which servers run for which roots.
// It starts nothing.
func (s *Supervisor) Status(ctx context.Context) *answer.Status {
	markers := s.co.ScanMarkers(ctx, s.cfg.Servers)
	running := s.fleet.runningEntries()
	st := &answer.Status{Root: s.co.Root(), Trusted: s.cfg.Trusted, Servers: make([]answer.ServerStatus, 0, len(s.cfg.Servers))}
	for i := range s.cfg.Servers {
		spec := &s.cfg.Servers[i]
		dirs := markers[spec.ID]
		probeRoot := s.co.Root()
		if len(dirs) > 0 {
			probeRoot = filepath.Join(s.co.Root(), filepath.FromSlash(dirs[0]))
		}
		bin, binErr := s.tools.program(spec.Command[0], spec.LocalBinDirs, s.co.Root())
		if binErr != nil && len(dirs) > 0 {
			bin, binErr = s.tools.program(spec.Command[0], spec.LocalBinDirs, probeRoot)
		}
		// Lists the schema requires are [] when empty, never null (a
		// RootAtTop row has no markers).
		row := answer.ServerStatus{ID: spec.ID, Language: spec.Language, Extensions: append([]string{}, slices.Sorted(maps.Keys(spec.Extensions))...),
			RootMarkers: append([]string{}, spec.RootMarkers...), MarkerDirs: dirs, Program: spec.Command[0], Install: spec.Install}
		if binErr == nil {
			row.Binary = s.co.Rel(bin) // a program inside a trusted checkout, relative
		}
		for _, r := range running {
			if srv := r.srv; srv.spec.ID == spec.ID {
				n := srv.docs.count()
				row.Running = append(row.Running, answer.RunningServer{Root: srv.relRoot, PID: srv.PID(),
					UptimeSeconds: int64(time.Since(srv.started).Round(time.Second) / time.Second), OpenFiles: n, Encoding: srv.encoding,
					Clients: r.clients, MemoryKB: proc.RSSKB(srv.PID()), IdleSeconds: int64(srv.idleFor().Round(time.Second) / time.Second)})
			}
		}
		switch {
		case len(row.Running) > 0:
			row.State = answer.StateRunning
		case len(dirs) > 0 && binErr == nil:
			if err := s.tools.probe(spec, bin, probeRoot); err != nil {
				row.State, row.RunError = answer.StateBroken, err.Error()
			} else {
				row.State = answer.StateAvailable
			}
		case len(dirs) > 0:
			row.State = answer.StateNoBinary
		case binErr == nil:
			row.State = answer.StateNoMarker
		default:
			row.State = answer.StateNoMarkerNoBinary
		}
		row.Crashes, row.StartFailures = s.fleet.troubles(spec.ID)
		slices.SortFunc(row.Crashes, func(a, b answer.Crash) int {
			return cmp.Or(strings.Compare(a.Root, b.Root), strings.Compare(a.Error, b.Error))
		})
		slices.SortFunc(row.StartFailures, func(a, b answer.StartFailure) int { return strings.Compare(a.Root, b.Root) })
		if !s.cfg.Trusted {
			var roots []string
			for _, d := range dirs {
				roots = append(roots, filepath.Join(s.co.Root(), filepath.FromSlash(d)))
			}
			for _, p := range localBins(spec.Command[0], spec.LocalBinDirs, append(roots, s.co.Root())...) {
				row.PassedOver = append(row.PassedOver, s.co.Rel(p))
			}
			if spec.CheckerRunsCode != "" && len(dirs) > 0 {
				row.Checker, row.CheckerSkipped = spec.Checker, spec.CheckerRunsCode
			}
		}
		st.Servers = append(st.Servers, row)
	}
	st.Pool = s.fleet.poolStatus(ctx)
	// One figure for a server's memory in both lists: with its children.
	mem := map[int]int64{}
	for _, p := range st.Pool.Servers {
		mem[p.PID] = p.MemoryKB
	}
	for i := range st.Servers {
		for j := range st.Servers[i].Running {
			r := &st.Servers[i].Running[j]
			if kb, ok := mem[r.PID]; ok {
				r.MemoryKB = kb
			}
			r.OverBudget = st.Pool.BudgetKB > 0 && r.MemoryKB >= st.Pool.BudgetKB
		}
	}
	return st
}
