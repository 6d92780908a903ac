package index

import (
	"cmp"
	"context"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/graph/index/ondisk"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/snap"
	"github.com/builtin-tools/builtin-tools/internal/walk"
)

// AheadMinFiles is the smallest tree a Partial is made for; below it the
// whole build is about as quick.
const AheadMinFiles = 200

// Partial is a snapshot under construction from a few of the tree's
// files, while the index's own build goes on: every file of the tree is
// in it, unparsed (an empty record: which modules and folders exist is as
// the full index knows), and the files a query needs are parsed into it.
// It shares the index's languages, guard and engine and nothing else.
type Partial struct {
	x      *Index
	mu     sync.Mutex
	b      *snap.Builder
	files  []walk.Entry          // the tree's files
	byRel  map[string]walk.Entry // the same, by path
	parsed map[string]bool
}

// NewPartial walks the tree into a new Partial holding every file
// unparsed; nil when the tree has fewer than AheadMinFiles files.
func (x *Index) NewPartial(ctx context.Context) (*Partial, error) {
	p := &Partial{x: x, b: snap.New(x.langs), parsed: map[string]bool{}}
	var found []walk.Entry
	if err := walk.Walk(ctx, x.guard, x.root, x.walkOpts(), func(e walk.Entry) error {
		found = append(found, e)
		return nil
	}); err != nil {
		return nil, err
	}
	modAt := map[string]string{}
	for _, e := range found {
		switch {
		case e.Dir: // a Partial is never refreshed: no folder stamps
		case x.langs.Manifest(path.Base(e.Rel)) != nil:
			p.b.SetModules(readManifest(x.guard, x.langs, modAt, e))
		case e.TooLarge:
			p.b.Skip(e.Rel, tooLarge(x.opts.MaxFileSize))
		default:
			p.files = append(p.files, e)
		}
	}
	if len(p.files) < AheadMinFiles {
		return nil, nil
	}
	p.byRel = make(map[string]walk.Entry, len(p.files))
	for _, e := range p.files {
		p.byRel[e.Rel] = e
		if l := x.langs.ForFile(e.Rel); l != nil {
			putWithin(p.b, &snap.Entry{Rel: e.Rel, Dir: path.Dir(e.Rel), Lang: l, Record: record.Empty()}, x.opts.MaxBytes)
		}
	}
	return p, nil
}

// Files are the tree's files.
func (p *Partial) Files() []walk.Entry { return p.files }

// Snapshot is the partial snapshot as parsed so far.
func (p *Partial) Snapshot() *snap.Snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.Snapshot()
}

// Scan says, for each of es, whether its bytes hold one of names (with
// fold, in any ASCII case; names are then lower case).
func (p *Partial) Scan(ctx context.Context, es []walk.Entry, names [][]byte, fold bool) []bool {
	return ondisk.Scan(ctx, p.x.guard, es, names, fold, p.x.opts.MaxFileSize)
}

// Parse reads and extracts those of es not parsed yet.
func (p *Partial) Parse(ctx context.Context, es []walk.Entry) error {
	var todo []walk.Entry
	p.mu.Lock()
	for _, e := range es {
		if !p.parsed[e.Rel] {
			p.parsed[e.Rel] = true
			todo = append(todo, e)
		}
	}
	p.mu.Unlock()
	if len(todo) == 0 {
		return ctx.Err()
	}
	// Largest first: the parse workers then finish together instead of
	// one waiting on a large file that came last.
	slices.SortStableFunc(todo, func(a, b walk.Entry) int { return cmp.Compare(size(b), size(a)) })
	return p.x.read(ctx, todo, false, func(rel string, f *snap.Entry, err error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if f != nil {
			putWithin(p.b, f, p.x.opts.MaxBytes)
			return
		}
		p.b.Remove(rel)
		p.b.Skip(rel, err.Error())
	})
}

func size(e walk.Entry) int64 {
	if e.Info == nil {
		return 0
	}
	return e.Info.Size()
}

// Parsed lists the files parsed, by path.
func (p *Partial) Parsed() []*snap.Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*snap.Entry
	for rel := range p.parsed {
		if f := p.b.Entry(rel); f != nil {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b *snap.Entry) int { return strings.Compare(a.Rel, b.Rel) })
	return out
}

// ParsedSet is the paths parsed so far.
func (p *Partial) ParsedSet() map[string]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.parsed)
}

// Unparsed lists those of es not parsed.
func (p *Partial) Unparsed(es []walk.Entry) []walk.Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []walk.Entry
	for _, e := range es {
		if !p.parsed[e.Rel] {
			out = append(out, e)
		}
	}
	return out
}

// Walked maps files of the snapshot to the tree's walk entries.
func (p *Partial) Walked(fs []*snap.Entry) []walk.Entry {
	out := make([]walk.Entry, 0, len(fs))
	for _, f := range fs {
		if e, ok := p.byRel[f.Rel]; ok {
			out = append(out, e)
		}
	}
	return out
}
