package adapter

import (
	"slices"
	"strings"
)

// The tool's exception kinds, mapped per adapter (Spec.ExceptionKinds).
const (
	ExceptUncaught      = "uncaught"
	ExceptRaised        = "raised"
	ExceptUserUnhandled = "user_unhandled"
)

// ExceptionKinds lists the kinds, in the order they are described.
var ExceptionKinds = []string{ExceptUncaught, ExceptRaised, ExceptUserUnhandled}

// Kinds lists the kinds a has filters for.
func (a Spec) Kinds() []string {
	var out []string
	for _, k := range ExceptionKinds {
		if _, ok := a.ExceptionKinds[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// DefaultExceptions is what a launch stops on when it names none: the
// adapter's default kinds (uncaught exceptions; debugpy's test runners add
// user_unhandled) that it has filters for.
func (spec Spec) DefaultExceptions(l LaunchSpec) []string {
	want := slices.Clone(spec.Adapter.DefaultExceptions(l))
	return slices.DeleteFunc(want, func(k string) bool { _, ok := spec.ExceptionKinds[k]; return !ok })
}

// CheckExceptions refuses, before any adapter starts, a kind the adapter
// has no filter for. Other names are the adapter's own filters, checked
// against its initialize answer (ResolveExceptions).
func (spec Spec) CheckExceptions(names []string) error {
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			return BadArg("exceptions holds an empty name; use %s", strings.Join(ExceptionKinds, ", "))
		}
		if !slices.Contains(ExceptionKinds, n) {
			continue
		}
		if _, ok := spec.ExceptionKinds[n]; !ok {
			return BadArg("%s has no filter for %s exceptions; it has %s (%s)", spec.ID, n, orNone(spec.Kinds()), spec.ExceptionNote)
		}
	}
	return nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// ResolveExceptions turns kinds and filter names into the filters to send:
// a kind's filters that the adapter offers (none may be: lldb-dap 19 has
// no rust_panic), a filter name as it is. A name that is neither a kind
// nor one of the adapter's filters is an error listing what it has.
func (spec Spec) ResolveExceptions(offered []string, names []string) ([]string, error) {
	filters := []string{}
	add := func(f string) {
		if !slices.Contains(filters, f) {
			filters = append(filters, f)
		}
	}
	for _, n := range names {
		if fs, ok := spec.ExceptionKinds[n]; ok {
			for _, f := range fs {
				if slices.Contains(offered, f) {
					add(f)
				}
			}
			continue
		}
		if slices.Contains(ExceptionKinds, n) {
			return nil, BadArg("%s has no filter for %s exceptions; it has %s (%s)", spec.ID, n, orNone(spec.Kinds()), spec.ExceptionNote)
		}
		if !slices.Contains(offered, n) {
			return nil, BadArg("%s offers no exception filter %q; use %s, or one of its own filters: %s", spec.ID, n, orNone(spec.Kinds()), orNone(offered))
		}
		add(n)
	}
	return filters, nil
}
