package registry

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Key names a resource and its Go type. The package that owns the resource
// declares it, so the registry keeps no list of kinds and a handler built
// with With receives the resource already typed: a mismatch does not compile.
type Key[T any] struct{ name string }

// NewKey declares the key of a resource of type T.
func NewKey[T any](name string) Key[T] { return Key[T]{name: name} }

// Name is the key's name, also its family's name.
func (k Key[T]) Name() string { return k.name }

// Of returns the resource attached to r under k.
func (k Key[T]) Of(r *Run) (T, bool) {
	v, ok := r.table.resource(k.name)
	t, ok2 := v.(T)
	return t, ok && ok2
}

// Attach gives r a resource under k; tools that needed it are registered
// now, on every peer already serving. A resource with a Close() error method
// is closed with the run, in reverse attach order.
func Attach[T any](r *Run, k Key[T], v T) error {
	if k.name == "" {
		return fmt.Errorf("registry: attach: a key without a name")
	}
	if any(v) == nil {
		return fmt.Errorf("registry: attach %s: nil resource", k.name)
	}
	if err := r.table.attach(k.name, v); err != nil {
		return err
	}
	// After the table's lock: a client's handler of the notification may
	// call back into the run.
	r.servers.toolsChanged()
	return nil
}

// Env is what a family's Open sees of the run being made.
type Env struct {
	Run            *Run
	Root           string // absolute, symlinks resolved
	Guard          *pathguard.Guard
	ConversationID string
	// Trusted says the harness trusts the checkout: tools may run programs
	// inside it.
	Trusted bool
	// settings holds each family's own configuration by family name.
	settings map[string]any
}

// Setting returns the configuration the harness gave the family name as a
// C; the zero C when it gave none. A value of another type is an error, so
// a harness that passes the wrong type hears about it at NewRun.
func Setting[C any](env *Env, name string) (C, error) {
	var zero C
	v, ok := env.settings[name]
	if !ok || v == nil {
		return zero, nil
	}
	c, ok := v.(C)
	if !ok {
		return zero, fmt.Errorf("registry: the setting for family %s is a %T; it takes a %T", name, v, zero)
	}
	return c, nil
}

// Configured is an Open that reads the family's setting as a C (Setting
// under key's name) and makes the resource from it with open.
func Configured[C, T any](key Key[T], open func(env *Env, cfg C) (T, error)) func(env *Env) (T, error) {
	return func(env *Env) (T, error) {
		cfg, err := Setting[C](env, key.Name())
		if err != nil {
			var zero T
			return zero, err
		}
		return open(env, cfg)
	}
}

// ErrSkip, returned by a family's Open, leaves its resource unattached
// without failing the run (the options give it nothing to work with, such
// as no ask port).
var ErrSkip = errors.New("registry: nothing to attach")

// None is the resource of a family that needs none (the file tools).
type None struct{}

// Family is the unit of extension: one package declares, in one value, its
// resource key, how the resource opens from the run's options, its tools and
// its wrappers. Adding a family to the command is this value and one line in
// its list.
type Family[T any] struct {
	Key Key[T]
	// Doc is one line on what the family gives an agent.
	Doc string
	// Open makes the resource for a run; nil for a family that needs none.
	// ErrSkip leaves it unattached.
	Open func(env *Env) (T, error)
	// Tools are the family's descriptors, each built with Func or With.
	Tools []Descriptor
	// Wrappers wrap tools of every family in the run; for a family with a
	// resource, only while that resource is attached.
	Wrappers []Wrapper
	// Requires lists what the family's tools use of other families'
	// resources (Requires, RequiresService), each with the tools that lose
	// something without it; the run checks them when it opens.
	Requires []Requirement
	// Provides lists the services the family's resource offers other
	// families, each found by its Go type (Provide).
	Provides []Provision[T]
}

// Extension is a Family of any resource type, as Config.Families lists them.
type Extension interface {
	// Name is the family's name: what --without takes.
	Name() string
	// Summary is the family's one-line doc.
	Summary() string
	// Descriptors lists the family's tools.
	Descriptors() []Descriptor
	open(r *Run, env *Env) error
	wrappers() []Wrapper
	requires() []*requirement
	provides() []providing
	resourceType() reflect.Type
}

// Name returns the family's name.
func (f Family[T]) Name() string { return f.Key.name }

// Summary returns the family's one-line doc.
func (f Family[T]) Summary() string { return f.Doc }

// Descriptors returns the family's tools.
func (f Family[T]) Descriptors() []Descriptor { return f.Tools }

func (f Family[T]) requires() []*requirement {
	out := make([]*requirement, len(f.Requires))
	for i, q := range f.Requires {
		out[i] = q.requirement()
	}
	return out
}

func (f Family[T]) provides() []providing {
	out := make([]providing, len(f.Provides))
	for i, p := range f.Provides {
		out[i] = providing{typ: p.typ, provider: provider{family: f.Key.name, get: func(r *Run) (any, bool) {
			res, ok := f.Key.Of(r)
			if !ok {
				return nil, false
			}
			return p.get(res), true
		}}}
	}
	return out
}

func (f Family[T]) resourceType() reflect.Type { return reflect.TypeFor[T]() }

func (f Family[T]) wrappers() []Wrapper {
	out := make([]Wrapper, len(f.Wrappers))
	for i, w := range f.Wrappers {
		if f.Open != nil {
			w.family = f.Key.name
		}
		out[i] = w
	}
	return out
}

func (f Family[T]) open(r *Run, env *Env) error {
	if f.Open == nil {
		return nil
	}
	v, err := f.Open(env)
	if errors.Is(err, ErrSkip) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", f.Key.name, err)
	}
	if err := Attach(r, f.Key, v); err != nil {
		if c, ok := any(v).(interface{ Close() error }); ok {
			c.Close()
		}
		return err
	}
	return nil
}

// Wrapper wraps the handlers of the tools it applies to, inside the tier
// check, validation, approval and serialization of the call path. A family
// declares its wrappers; they select tools by what the tools declare (for
// example WritesFiles), never by tier.
type Wrapper struct {
	Name    string
	Applies func(d *Descriptor) bool
	Wrap    func(next HandlerFunc) HandlerFunc

	family string // set by Family: applies only while its resource is attached
}

// WritesFiles selects tools that declare they write files.
func WritesFiles(d *Descriptor) bool { return d.Writes }
