package registry

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// A family's tools may use what another family's resource holds —
// lsp_rename's preview stages its edits among ast_edit's, edit_symbol finds
// definitions through the code graph — and the family says so in
// Family.Requires, as go/analysis's Analyzer.Requires does: the run checks
// every declaration when it opens, and a tool finds the value only through
// the use it declared. What one family offers the others without being
// named by them is a service, found by its Go type (an interface declared
// in a package both import, such as staged.Stager), so renaming the family
// that provides it, or changing its resource's type, cannot silently cut
// the link: the run either finds exactly one provider or says which tools
// lose what, and why.

// Requirement is one use in Family.Requires, made by Requires or
// RequiresService.
type Requirement interface {
	requirement() *requirement
}

// Use is a family's declared use of a value another family's resource
// holds, of type T. Declare it once, as a package variable listed in the
// family's Requires, and find the value with Of.
type Use[T any] struct{ q *requirement }

type requirement struct {
	family string       // the family whose resource is used; "" for a service
	typ    reflect.Type // the resource's type, or the service's
	why    string       // what the tools lose without it
	tools  []string     // the tools that lose it
}

// what names what the use needs: "the code_graph family" or "a staged.Stager
// (a service)".
func (q *requirement) what() string {
	if q.family != "" {
		return "the " + q.family + " family"
	}
	return "a " + q.typ.String()
}

// Requires declares a use of the resource of the family whose key is k:
// tools name the requiring family's tools that lose something without it,
// and why says what ("confirm asks the language servers").
func Requires[T any](k Key[T], why string, tools ...string) Use[T] {
	return Use[T]{&requirement{family: k.name, typ: reflect.TypeFor[T](), why: why, tools: tools}}
}

// RequiresService declares a use of the service of type S that some
// family of the run provides (Provide), whichever family that is.
func RequiresService[S any](why string, tools ...string) Use[S] {
	return Use[S]{&requirement{typ: reflect.TypeFor[S](), why: why, tools: tools}}
}

func (u Use[T]) requirement() *requirement { return u.q }

// Of returns the value in r: the family's resource, or the provider's
// service. It finds nothing while what it needs is not attached, and
// nothing for a use no family of r declared in its Requires.
func (u Use[T]) Of(r *Run) (T, bool) {
	var zero T
	if !slices.Contains(r.requirements.uses, u.q) {
		return zero, false
	}
	if u.q.family != "" {
		return Key[T]{name: u.q.family}.Of(r)
	}
	p, ok := r.requirements.providers[u.q.typ]
	if !ok {
		return zero, false
	}
	v, ok := p.get(r)
	if !ok {
		return zero, false
	}
	return v.(T), true
}

// Missing says why Of finds nothing in r, as a clause for a tool's answer
// ("the structural family was left out of this run"); "" when it finds
// the value.
func (u Use[T]) Missing(r *Run) string {
	if _, ok := u.Of(r); ok {
		return ""
	}
	if !slices.Contains(r.requirements.uses, u.q) {
		return fmt.Sprintf("no family of this run declares that it uses %s (this is a bug in the tool)", u.q.what())
	}
	for _, d := range r.requirements.degraded {
		if d.q == u.q {
			return d.Reason
		}
	}
	return u.q.what() + " is not attached (the run may be closing)"
}

// Provision is one service a family's resource offers the run's other
// families (Family.Provides), made by Provide.
type Provision[T any] struct {
	typ reflect.Type
	get func(res T) any
}

// Provide declares that a family's resource offers a service of type S,
// made from the resource by fn; a use declared with RequiresService[S]
// finds it.
func Provide[T, S any](fn func(res T) S) Provision[T] {
	return Provision[T]{typ: reflect.TypeFor[S](), get: func(res T) any { return fn(res) }}
}

// requirements is what the run's families declared they use of each
// other, the services they provide, and the uses missing as the run
// opened. NewRun writes it; it is read-only after, so it has no lock.
type requirements struct {
	uses      []*requirement
	providers map[reflect.Type]provider
	degraded  []Degraded
}

// provider is a service of the run, found from its family's resource.
type provider struct {
	family string
	get    func(r *Run) (any, bool)
}

// Degraded is what a family's tools lose in a run because something they
// declared they use is missing: a family left out (Config.Without), a
// family whose Open attached nothing, no family that provides a service.
// The run still opens; Run.Degraded lists these, the peers' instructions
// say them, and the tools say them when asked for what they lost.
type Degraded struct {
	// Family is the family whose tools lose something.
	Family string
	// Tools are those tools.
	Tools []string
	// Needs is what is missing: "the structural family", "a
	// staged.Stager".
	Needs string
	// Why is what the tools lose without it.
	Why string
	// Reason is why it is missing.
	Reason string

	q *requirement
}

// String is one line for a log or an agent.
func (d Degraded) String() string {
	return fmt.Sprintf("%s: %s is unavailable in this run: %s", strings.Join(d.Tools, ", "), d.Why, d.Reason)
}

// Degraded lists, as the run opened, what its families' tools lose because
// something they declared they use is missing.
func (rq *requirements) Degraded() []Degraded { return slices.Clone(rq.degraded) }

// check checks the declarations of the run's families before they
// open: a use names tools of its own family, a used family's resource has
// the type the use expects, and no service has two providers. It records
// the uses and the services' providers.
func (rq *requirements) check(all, families []Extension) error {
	for _, f := range families {
		for _, p := range f.provides() {
			if other, dup := rq.providers[p.typ]; dup {
				return fmt.Errorf("registry: families %s and %s both provide a %s; a run takes one (leave one out with Without)", other.family, f.Name(), p.typ)
			}
			if rq.providers == nil {
				rq.providers = map[reflect.Type]provider{}
			}
			rq.providers[p.typ] = p.provider
		}
	}
	for _, f := range families {
		for _, q := range f.requires() {
			for _, t := range q.tools {
				if !slices.ContainsFunc(f.Descriptors(), func(d Descriptor) bool { return d.Name == t }) {
					return fmt.Errorf("registry: family %s declares that its tool %s uses %s, but it has no tool %s", f.Name(), t, q.what(), t)
				}
			}
			if q.family != "" {
				i := slices.IndexFunc(all, func(g Extension) bool { return g.Name() == q.family })
				if i >= 0 && all[i].resourceType() != q.typ {
					return fmt.Errorf("registry: family %s uses the %s family's resource as a %s, but that resource is a %s", f.Name(), q.family, q.typ, all[i].resourceType())
				}
			}
			rq.uses = append(rq.uses, q)
		}
	}
	return nil
}

// degrade records, once the run's families opened in r, every use they
// declared whose value is missing, and why; all are the families the run
// was given, without those it was told to leave out.
func (rq *requirements) degrade(r *Run, families, all []Extension, without []string) {
	for _, f := range families {
		for _, q := range f.requires() {
			if rq.used(r, q) {
				continue
			}
			rq.degraded = append(rq.degraded, Degraded{Family: f.Name(), Tools: slices.Clone(q.tools), Needs: q.what(), Why: q.why, Reason: rq.absence(q, all, without), q: q})
		}
	}
}

// used reports whether q's value is attached to r now.
func (rq *requirements) used(r *Run, q *requirement) bool {
	if q.family != "" {
		_, ok := r.table.resource(q.family)
		return ok
	}
	p, ok := rq.providers[q.typ]
	if !ok {
		return false
	}
	_, ok = p.get(r)
	return ok
}

// absence says why q's value is missing: which family would hold it and
// what became of it.
func (rq *requirements) absence(q *requirement, all []Extension, without []string) string {
	family := q.family
	if family == "" {
		if p, ok := rq.providers[q.typ]; ok {
			family = p.family
		} else {
			for _, f := range all {
				if slices.ContainsFunc(f.provides(), func(p providing) bool { return p.typ == q.typ }) {
					family = f.Name()
					break
				}
			}
		}
		if family == "" {
			return fmt.Sprintf("no family of this run provides a %s", q.typ)
		}
	}
	switch {
	case slices.Contains(without, family):
		return fmt.Sprintf("the %s family was left out of this run", family)
	case !slices.ContainsFunc(all, func(f Extension) bool { return f.Name() == family }):
		return fmt.Sprintf("this run has no %s family", family)
	}
	return fmt.Sprintf("the %s family attached nothing in this run (its options gave it nothing to work with)", family)
}

// providing is a Provision with its family's key, as Extension gives it.
type providing struct {
	typ reflect.Type
	provider
}
