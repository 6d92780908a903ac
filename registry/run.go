package registry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry/elicit"
	"github.com/mark3labs/mcp-go/mcp"
)

// Config describes a run.
type Config struct {
	// Root is the folder every path argument is confined to.
	Root string
	// ConversationID identifies the conversation the run belongs to.
	ConversationID string
	// Families are the tool families of the run; each opens its resource
	// from the run's options, and its tools are registered while that
	// resource is attached.
	Families []Extension
	// Without names families not to open; an unknown name is an error.
	Without []string
	// Settings holds each family's configuration, by family name; the
	// family's Open reads it with Setting.
	Settings map[string]any
	// Trusted says the harness trusts the checkout (see Env.Trusted).
	Trusted bool
	// Policy gates write and exec calls; nil allows them.
	Policy Policy
	// Approver answers calls the policy marks Ask; without one such calls
	// are refused.
	Approver Approver
	// Name and Version identify the run's MCP server to clients.
	Name, Version string
	// OutputBudget bounds the text of one result in characters (default
	// DefaultOutputBudget, REG-12). Tools size their output by it and say
	// what they left out; the call path cuts whatever exceeds it.
	OutputBudget int
	// MaxFrameBytes bounds one message ServeStdio reads (default
	// DefaultMaxFrameBytes); a longer one is answered with an error.
	MaxFrameBytes int
	// ClientProtocol is the MCP revision Run.Client negotiates. The default,
	// 2025-11-25, is the newest without 2026-07-28's per-request envelope,
	// which exists for HTTP gateways and costs an in-process call about
	// 30 µs (BENCHMARKS.md); both revisions work in process.
	ClientProtocol string
	// CloseTimeout bounds how long Close waits for calls in flight after
	// cancelling them (default 5 s).
	CloseTimeout time.Duration
	// QuestionTimeout bounds how long a call waits for a peer to come back
	// with the answer to a question it asked (default 10 minutes).
	QuestionTimeout time.Duration
}

// DefaultOutputBudget is the default size of one result, in characters.
const DefaultOutputBudget = 8000

// DefaultQuestionTimeout bounds how long a parked call waits for its peer.
const DefaultQuestionTimeout = 10 * time.Minute

// Run is one agent run: a root, a conversation, attached resources and the
// tools they enable. It is safe for concurrent use. Its state is split by
// what uses it; each part has its methods and, if it changes, its lock.
type Run struct {
	cfg      Config // with NewRun's defaults filled in
	guard    *pathguard.Guard
	families []Extension

	table                       // the tools, what is attached, the calls in flight (table.go)
	requirements                // what the families use of each other (requires.go)
	servers                     // the MCP servers, one per mode, and their sessions (servers.go)
	gate         gate           // the approval policy and its approver (approval.go)
	parked       elicit.Parking // calls waiting for their peer's answer

	ctx    context.Context
	cancel context.CancelCauseFunc

	mu      sync.Mutex // guards onClose
	onClose []func() error
}

// NewRun checks the families' tools (unique names, known tiers, object
// schemas) and what they declare they use of each other (Family.Requires),
// makes a run over root and opens each family's resource. A use whose
// value is missing once they opened does not fail the run: Degraded lists
// it. Servers and kernels start later, on first use.
func NewRun(cfg Config) (*Run, error) {
	g, err := pathguard.New(cfg.Root)
	if err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = "builtin-tools"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.ClientProtocol == "" {
		cfg.ClientProtocol = mcp.ProtocolVersion20251125
	}
	if cfg.OutputBudget <= 0 {
		cfg.OutputBudget = DefaultOutputBudget
	}
	if cfg.CloseTimeout <= 0 {
		cfg.CloseTimeout = 5 * time.Second
	}
	if cfg.QuestionTimeout <= 0 {
		cfg.QuestionTimeout = DefaultQuestionTimeout
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	r := &Run{
		cfg:    cfg,
		guard:  g,
		table:  table{tools: map[string]*entry{}, resources: map[string]any{}, chains: map[*entry]HandlerFunc{}},
		gate:   gate{policy: cfg.Policy, approver: cfg.Approver},
		ctx:    ctx,
		cancel: cancel,
	}
	fail := func(err error) (*Run, error) {
		r.Close()
		return nil, err
	}
	families, err := selectFamilies(cfg.Families, cfg.Without)
	if err != nil {
		return fail(err)
	}
	if err := r.requirements.check(cfg.Families, families); err != nil {
		return fail(err)
	}
	for _, f := range families {
		for _, d := range f.Descriptors() {
			if err := r.table.add(d); err != nil {
				return fail(err)
			}
		}
		r.table.wrappers = append(r.table.wrappers, f.wrappers()...)
	}
	r.table.names = slices.Sorted(maps.Keys(r.table.tools))
	r.families = families
	env := &Env{Run: r, Root: g.Root(), Guard: g, ConversationID: cfg.ConversationID, Trusted: cfg.Trusted, settings: cfg.Settings}
	for name := range cfg.Settings {
		if !slices.ContainsFunc(cfg.Families, func(f Extension) bool { return f.Name() == name }) {
			return fail(fmt.Errorf("registry: a setting for family %q, which the run does not have; families: %s", name, familyNames(cfg.Families)))
		}
	}
	for _, f := range families {
		if err := f.open(r, env); err != nil {
			return fail(err)
		}
	}
	r.requirements.degrade(r, families, cfg.Families, cfg.Without)
	return r, nil
}

func selectFamilies(all []Extension, without []string) ([]Extension, error) {
	seen := map[string]bool{}
	for _, f := range all {
		if f.Name() == "" {
			return nil, fmt.Errorf("registry: a family without a name")
		}
		if seen[f.Name()] {
			return nil, fmt.Errorf("registry: family %q is listed twice", f.Name())
		}
		seen[f.Name()] = true
	}
	for _, w := range without {
		if !seen[w] {
			return nil, fmt.Errorf("unknown family %q in without; the families are: %s", w, familyNames(all))
		}
	}
	var out []Extension
	for _, f := range all {
		if !slices.Contains(without, f.Name()) {
			out = append(out, f)
		}
	}
	return out, nil
}

func familyNames(fs []Extension) string {
	var names []string
	for _, f := range fs {
		names = append(names, f.Name())
	}
	return strings.Join(names, ", ")
}

// Root returns the run's root, absolute with symlinks resolved.
func (r *Run) Root() string { return r.guard.Root() }

// Guard returns the run's path guard.
func (r *Run) Guard() *pathguard.Guard { return r.guard }

// ConversationID returns the conversation the run belongs to.
func (r *Run) ConversationID() string { return r.cfg.ConversationID }

// Context is the run's lifetime: Close cancels it. Background work a tool
// starts (readers, notifications) derives from it.
func (r *Run) Context() context.Context { return r.ctx }

// Families lists the run's families after Without, in order.
func (r *Run) Families() []Extension { return slices.Clone(r.families) }

// ErrClosed is returned by operations on a closed run, and is the cause of
// every call the closing cancelled. It is lifetime.ErrClosed, the one value
// errors.Is matches however deep an engine said it.
var ErrClosed = lifetime.ErrClosed

// OnClose registers fn to run when the run closes (after resources close),
// for state a tool keeps per run.
func (r *Run) OnClose(fn func() error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onClose = append(r.onClose, fn)
}

// Close ends the run (REG-13): it cancels the run's context and every call
// in flight, waits for those calls (at most CloseTimeout), then closes the
// resources in reverse attach order and runs OnClose functions. Calls after
// Close are refused.
func (r *Run) Close() error {
	names, res, ok := r.table.shut()
	if !ok {
		return nil
	}
	r.mu.Lock()
	fns := slices.Clone(r.onClose)
	r.mu.Unlock()

	r.cancel(ErrClosed)
	var errs []error
	if !waitTimeout(&r.table.calls, r.cfg.CloseTimeout) {
		errs = append(errs, fmt.Errorf("registry: calls still running %s after the run was cancelled; closing their resources under them", r.cfg.CloseTimeout))
	}
	for i := len(names) - 1; i >= 0; i-- {
		if c, ok := res[names[i]].(interface{ Close() error }); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing %s: %w", names[i], err))
			}
		}
	}
	for i := len(fns) - 1; i >= 0; i-- {
		if err := fns[i](); err != nil {
			errs = append(errs, err)
		}
	}
	r.guard.Close()
	return errors.Join(errs...)
}

// waitTimeout waits for wg, at most d; false if it gave up.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return lifetime.Await(context.Background(), done, d)
}
