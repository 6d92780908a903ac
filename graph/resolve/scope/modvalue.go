package scope

import (
	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// ViaModuleValue resolves a bare name bound to a whole module (const X =
// require('./x')) whose value is one definition of it (module.exports =
// X): calling or constructing the name reaches that definition.
func (sc *Scopes) ViaModuleValue(f *snap.Entry, name string, ok func(*record.Def) bool) (outcome.Resolution, bool) {
	for _, im := range f.Imports {
		if im.Name != "" || im.Local != name {
			continue
		}
		files, known := sc.ModuleFiles(f, im.Module)
		if !known {
			return outcome.Resolution{}, false
		}
		var ts []snap.Target
		for _, g := range files {
			if g.Exports != "" {
				ts = append(ts, outcome.Pick(g, g.Exports, func(d *record.Def) bool { return ok(d) && !d.Member() && !d.Local })...)
			}
		}
		if len(ts) == 0 {
			return outcome.Resolution{}, false
		}
		return outcome.Settle(f, lang.ViaImport, ts, "the value of "+im.Module+" (module.exports = "+ts[0].D().Name+")"), true
	}
	return outcome.Resolution{}, false
}
