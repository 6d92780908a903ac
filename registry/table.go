package registry

import (
	"fmt"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/internal/similar"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// table is the run's tools and what is attached to it: the catalog and the
// wrappers, fixed once the run opened, and the resources attached since,
// which say which tools are registered and how each is wrapped. It also
// admits calls, and knows whether the run is closed.
//
// One lock guards closed, resources, attached and chains, because closing
// is a matter of all of them at once: a call is admitted (calls.Add) under
// the lock Close sets closed under, so Close waits for every call it did not
// refuse; an attach is refused under it once Close has taken the resources
// to close, so none is left open; and a call's chain of wrappers is built
// from the resources attached at the instant it was admitted.
type table struct {
	tools    map[string]*entry // the whole catalog, by name
	names    []string          // catalog names, sorted
	wrappers []Wrapper

	calls sync.WaitGroup // calls in flight

	mu        sync.Mutex
	closed    bool
	resources map[string]any
	attached  []string               // attach order, for Close
	chains    map[*entry]HandlerFunc // wrapped handlers, reset on attach
}

func (t *table) add(d Descriptor) error {
	if d.Name == "" || d.Handler.h == nil {
		return fmt.Errorf("registry: tool %q has no name or no handler", d.Name)
	}
	if _, dup := t.tools[d.Name]; dup {
		return fmt.Errorf("registry: tool %q is declared twice", d.Name)
	}
	if _, err := tiers.ParseTier(string(d.Tier)); err != nil {
		return fmt.Errorf("registry: tool %s: %w", d.Name, err)
	}
	if _, err := d.Handler.h.validator(d.Name); err != nil {
		return err
	}
	e := &entry{d: d, tool: d.MCPTool()}
	if d.Serial {
		e.serial = newFIFO()
	}
	t.tools[d.Name] = e
	return nil
}

// admit looks name up for a call: registered says the tool is in the
// catalog and its need attached, and h is then its wrapped handler. A call
// admitted while the run is open is counted in calls; the caller calls
// calls.Done when it ends. closed says it was not admitted.
func (t *table) admit(name string) (e *entry, h HandlerFunc, registered, closed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, known := t.tools[name]
	registered = known && t.registeredLocked(e)
	if registered {
		h = t.chainLocked(e)
	}
	if t.closed {
		return e, h, registered, true
	}
	t.calls.Add(1)
	return e, h, registered, false
}

// attach adds a resource under name: the tools that need it are
// registered from now on.
func (t *table) attach(name string, resource any) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	if _, dup := t.resources[name]; dup {
		return fmt.Errorf("registry: a %s resource is already attached to this run", name)
	}
	t.resources[name] = resource
	t.attached = append(t.attached, name)
	clear(t.chains)
	return nil
}

// resource returns the resource attached under name.
func (t *table) resource(name string) (any, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.resources[name]
	return v, ok
}

// shut closes the table to calls and attaches, and returns the resources
// attached, in attach order, for Close to close; ok is false if it was
// closed already.
func (t *table) shut() (names []string, resources map[string]any, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, nil, false
	}
	t.closed = true
	return t.attached, t.resources, true
}

// registeredLocked reports whether e's need is attached.
func (t *table) registeredLocked(e *entry) bool {
	need := e.d.Needs()
	if need == "" {
		return true
	}
	_, ok := t.resources[need]
	return ok
}

// Registered lists the tools registered in this run (needs attached),
// sorted by name, whatever the mode.
func (t *table) Registered() []Descriptor {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Descriptor
	for _, n := range t.names {
		if e := t.tools[n]; t.registeredLocked(e) {
			out = append(out, e.d)
		}
	}
	return out
}

// Visible lists the tools mode sees, as MCP tools, sorted by name.
func (t *table) Visible(mode tiers.Mode) []mcp.Tool {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []mcp.Tool
	for _, n := range t.names {
		if e := t.tools[n]; t.registeredLocked(e) && mode.Sees(e.d.Tier) {
			out = append(out, e.tool)
		}
	}
	return out
}

// chainLocked returns e's handler inside the wrappers that apply to it,
// built once per attach state.
func (t *table) chainLocked(e *entry) HandlerFunc {
	if h, ok := t.chains[e]; ok {
		return h
	}
	h := e.d.Handler.h.call
	for i := len(t.wrappers) - 1; i >= 0; i-- {
		w := t.wrappers[i]
		if w.family != "" {
			if _, ok := t.resources[w.family]; !ok {
				continue
			}
		}
		if w.Applies == nil || w.Applies(&e.d) {
			h = w.Wrap(h)
		}
	}
	t.chains[e] = h
	return h
}

// refusal says why name cannot be called in mode: not in the catalog, not
// registered in this run, or outside the mode. It is the one refusal of a
// tool the caller cannot see, on every path.
func (t *table) refusal(mode tiers.Mode, name string) string {
	var names []string
	for _, tool := range t.Visible(mode) {
		names = append(names, tool.Name)
	}
	list := strings.Join(names, ", ")
	t.mu.Lock()
	e, known := t.tools[name]
	registered := known && t.registeredLocked(e)
	t.mu.Unlock()
	switch {
	case known && !registered:
		return fmt.Sprintf("tool %q is not registered in this run: it needs the %s resource, which the run does not have; tools available in %s mode: %s",
			name, e.d.Needs(), mode, list)
	case known:
		return mode.Refusal(name, e.d.Tier)
	}
	msg := fmt.Sprintf("unknown tool %q", name)
	if s := similar.Closest(name, t.names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + fmt.Sprintf("; tools available in %s mode: %s", mode, list)
}
