package graph

import (
	"slices"

	"github.com/builtin-tools/builtin-tools/graph/lang"
)

// view is the index as import rules read it (lang.View). x.mu is held.
type view struct{ x *Index }

func (v view) Lookup(rel string) (lang.FileID, bool) {
	if f := v.x.files[rel]; f != nil {
		return f.ID, true
	}
	return 0, false
}

func (v view) table(l *lang.Language) *langIndex { return v.x.langIx[l] }

func ids(fs []*File) []lang.FileID {
	if len(fs) == 0 {
		return nil
	}
	out := make([]lang.FileID, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

func (v view) Dir(l *lang.Language, dir string) []lang.FileID {
	if ix := v.table(l); ix != nil {
		return ids(ix.dirs[dir])
	}
	return nil
}

func (v view) EachDir(l *lang.Language, fn func(string, []lang.FileID) bool) {
	ix := v.table(l)
	if ix == nil {
		return
	}
	dirs := make([]string, 0, len(ix.dirs))
	for d := range ix.dirs {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for _, d := range dirs {
		if !fn(d, ids(ix.dirs[d])) {
			return
		}
	}
}

func (v view) Module(l *lang.Language, name string) []lang.FileID {
	if ix := v.table(l); ix != nil {
		return ids(ix.modules[name])
	}
	return nil
}

func (v view) Base(l *lang.Language, base string) []lang.FileID {
	if ix := v.table(l); ix != nil {
		return ids(ix.base[base])
	}
	return nil
}

func (v view) Modules() []lang.Module { return v.x.mods }

func (v view) Rel(id lang.FileID) string { return v.x.byID[id].Rel }

// filesOf maps file ids to the index's files.
func (x *Index) filesOf(ids []lang.FileID) []*File {
	if len(ids) == 0 {
		return nil
	}
	out := make([]*File, len(ids))
	for i, id := range ids {
		out[i] = x.byID[id]
	}
	return out
}
