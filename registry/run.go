package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Decision is what the approval gate does with a call of some tier.
type Decision string

// Approval decisions (REG-7).
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Policy maps the write and exec tiers to a decision. A tier missing from
// the map is allowed; read tools never pass the gate.
type Policy map[tiers.Tier]Decision

// ParsePolicy reads "write=ask,exec=deny".
func ParsePolicy(s string) (Policy, error) {
	p := Policy{}
	if strings.TrimSpace(s) == "" {
		return p, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("approval policy %q: want TIER=DECISION pairs such as write=ask,exec=deny", s)
		}
		t, err := tiers.ParseTier(k)
		if err != nil {
			return nil, err
		}
		if t == tiers.Read {
			return nil, fmt.Errorf("approval policy: read tools are never gated; set write or exec")
		}
		d := Decision(v)
		if d != Allow && d != Ask && d != Deny {
			return nil, fmt.Errorf("approval policy: %q is not allow, ask or deny", v)
		}
		p[t] = d
	}
	return p, nil
}

// Approver decides calls whose tier the policy marks Ask.
type Approver interface {
	// Approve asks whether c may run. ok false refuses it with reason; an
	// error (no human, a timeout) refuses it too: the gate fails closed.
	Approve(ctx context.Context, c *Call) (ok bool, reason string, err error)
}

// Config describes a run.
type Config struct {
	// Root is the folder every path argument is confined to.
	Root string
	// ConversationID identifies the conversation the run belongs to.
	ConversationID string
	// Tools is the catalog; only tools whose needs are attached are
	// registered.
	Tools []Descriptor
	// Policy gates write and exec calls; nil allows them.
	Policy Policy
	// Approver answers calls the policy marks Ask; without one such calls
	// are refused.
	Approver Approver
	// Name and Version identify the run's MCP server to clients.
	Name, Version string
	// MaxResultBytes bounds the text of one result (default
	// DefaultMaxResultBytes); more is cut with a note.
	MaxResultBytes int
	// MaxFrameBytes bounds one message ServeStdio reads (default
	// DefaultMaxFrameBytes); a longer one is answered with an error.
	MaxFrameBytes int
	// ClientProtocol is the MCP revision Run.Client negotiates. The default,
	// 2025-11-25, is the newest without 2026-07-28's per-request envelope,
	// which exists for HTTP gateways and costs an in-process call about
	// 30 µs (BENCHMARKS.md); both revisions work in process.
	ClientProtocol string
}

// Run is one agent run: a root, a conversation, attached resources and the
// tools they enable. It is safe for concurrent use.
type Run struct {
	cfg   Config
	guard *pathguard.Guard
	tools map[string]*entry // the whole catalog, by name

	mu        sync.Mutex
	resources map[ResourceKind]any
	attached  []ResourceKind // attach order, for Close
	onClose   []func() error
	wrappers  []Wrapper
	servers   map[tiers.Mode]*server.MCPServer
	closed    bool
}

type entry struct {
	d      Descriptor
	tool   mcp.Tool
	schema *jsonschema.Schema
	serial *fifo
	params []string // argument names, for messages
}

// NewRun checks the catalog (unique names, known tiers, object schemas that
// compile) and makes a run over root. It starts nothing.
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
	r := &Run{
		cfg:       cfg,
		guard:     g,
		tools:     map[string]*entry{},
		resources: map[ResourceKind]any{},
		servers:   map[tiers.Mode]*server.MCPServer{},
	}
	for i := range cfg.Tools {
		d := cfg.Tools[i]
		if d.Name == "" || d.Handler == nil {
			return nil, fmt.Errorf("registry: tool %q has no name or no handler", d.Name)
		}
		if _, dup := r.tools[d.Name]; dup {
			return nil, fmt.Errorf("registry: tool %q is declared twice", d.Name)
		}
		if _, err := tiers.ParseTier(string(d.Tier)); err != nil {
			return nil, fmt.Errorf("registry: tool %s: %w", d.Name, err)
		}
		e := &entry{d: d, tool: d.MCPTool()}
		if e.schema, e.params, err = compileSchema(d.Name, d.Schema); err != nil {
			return nil, err
		}
		if d.Serial {
			e.serial = newFIFO()
		}
		r.tools[d.Name] = e
	}
	return r, nil
}

func compileSchema(name string, raw json.RawMessage) (*jsonschema.Schema, []string, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("registry: tool %s: schema is not JSON: %w", name, err)
	}
	obj, ok := doc.(map[string]any)
	if !ok || obj["type"] != "object" {
		return nil, nil, fmt.Errorf("registry: tool %s: input schema must be an object schema", name)
	}
	var params []string
	if props, ok := obj["properties"].(map[string]any); ok {
		for k := range props {
			params = append(params, k)
		}
	}
	sort.Strings(params)
	c := jsonschema.NewCompiler()
	url := "tool:" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, nil, fmt.Errorf("registry: tool %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, nil, fmt.Errorf("registry: tool %s: invalid input schema: %w", name, err)
	}
	return s, params, nil
}

// Root returns the run's root, absolute with symlinks resolved.
func (r *Run) Root() string { return r.guard.Root() }

// Guard returns the run's path guard.
func (r *Run) Guard() *pathguard.Guard { return r.guard }

// ConversationID returns the conversation the run belongs to.
func (r *Run) ConversationID() string { return r.cfg.ConversationID }

// ErrClosed is returned by operations on a closed run.
var ErrClosed = errors.New("the run is closed")

// Attach gives the run a resource; tools that needed it are registered now,
// on every peer already serving. A resource with a Close() error method is
// closed with the run.
func (r *Run) Attach(kind ResourceKind, resource any) error {
	if kind == Conversation {
		return fmt.Errorf("registry: the conversation is set by Config.ConversationID, not attached")
	}
	if resource == nil {
		return fmt.Errorf("registry: attach %s: nil resource", kind)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	if _, dup := r.resources[kind]; dup {
		r.mu.Unlock()
		return fmt.Errorf("registry: a %s resource is already attached to this run", kind)
	}
	before := r.registeredLocked()
	r.resources[kind] = resource
	r.attached = append(r.attached, kind)
	var added []server.ServerTool
	for _, e := range r.registeredLocked() {
		if !slices.Contains(before, e) {
			added = append(added, r.serverTool(e))
		}
	}
	servers := maps.Clone(r.servers)
	r.mu.Unlock()
	// Outside the lock: adding tools notifies clients (tools/list_changed),
	// whose handlers may call back into the run.
	for mode, s := range servers {
		if len(added) > 0 {
			s.AddTools(r.bindAll(mode, added)...)
		}
	}
	return nil
}

// Resource returns the attached resource of a kind as T.
func Resource[T any](r *Run, kind ResourceKind) (T, bool) {
	r.mu.Lock()
	v, ok := r.resources[kind]
	r.mu.Unlock()
	t, ok2 := v.(T)
	return t, ok && ok2
}

// OnClose registers fn to run when the run closes (after resources close),
// for state a tool keeps per run.
func (r *Run) OnClose(fn func() error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onClose = append(r.onClose, fn)
}

// Close stops everything the run started: resources are closed in reverse
// attach order, then OnClose functions run. Calls after Close fail.
func (r *Run) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	kinds := slices.Clone(r.attached)
	res := r.resources
	fns := slices.Clone(r.onClose)
	r.mu.Unlock()

	var errs []error
	for i := len(kinds) - 1; i >= 0; i-- {
		if c, ok := res[kinds[i]].(interface{ Close() error }); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing %s: %w", kinds[i], err))
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

func (r *Run) has(kind ResourceKind) bool {
	if kind == Conversation {
		return r.cfg.ConversationID != ""
	}
	_, ok := r.resources[kind]
	return ok
}

// missingLocked lists the needs of e that are not attached.
func (r *Run) missingLocked(e *entry) []ResourceKind {
	var out []ResourceKind
	for _, k := range e.d.Needs {
		if !r.has(k) {
			out = append(out, k)
		}
	}
	return out
}

func (r *Run) registeredLocked() []*entry {
	var out []*entry
	for _, e := range r.tools {
		if len(r.missingLocked(e)) == 0 {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].d.Name < out[j].d.Name })
	return out
}

// Registered lists the tools registered in this run (needs attached),
// sorted by name, whatever the mode.
func (r *Run) Registered() []Descriptor {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Descriptor
	for _, e := range r.registeredLocked() {
		out = append(out, e.d)
	}
	return out
}

// Visible lists the tools mode sees, as MCP tools, sorted by name.
func (r *Run) Visible(mode tiers.Mode) []mcp.Tool {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []mcp.Tool
	for _, e := range r.registeredLocked() {
		if mode.Sees(e.d.Tier) {
			out = append(out, e.tool)
		}
	}
	return out
}

// Wrapper wraps the handlers of the tools it applies to, inside the tier
// check, validation, approval and serialization of the call path.
type Wrapper struct {
	Name    string
	Applies func(d *Descriptor) bool
	Wrap    func(next HandlerFunc) HandlerFunc
}

// Use adds a wrapper; wrappers added first are outermost.
func (r *Run) Use(w Wrapper) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wrappers = append(r.wrappers, w)
}
