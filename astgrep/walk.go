package astgrep

import (
	"context"
	"io/fs"
	"path/filepath"

	"github.com/builtin-tools/builtin-tools/astgrep/parsecache"
	"github.com/builtin-tools/builtin-tools/internal/walk"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// candidate is a file the walk found in a language of interest.
type candidate struct {
	rel      string // slash-separated, relative to the root
	abs      string
	size     int64
	stamp    parsecache.Stamp
	stampOK  bool // stamp is complete: the file may be cached
	tooLarge bool // over Options.MaxFileSize: skipped, not read
	lang     *language
}

func newCandidate(rel, abs string, info fs.FileInfo, limit int64, l *language) candidate {
	c := candidate{rel: rel, abs: abs, size: info.Size(), tooLarge: info.Size() > limit, lang: l}
	c.stamp, c.stampOK = parsecache.StampOf(info)
	return c
}

// walkTree lists the files under dir (inside root) a developer would
// expect a search to see, by the policy of package internal/walk:
// .gitignore'd paths (nested files too), hidden entries, vendored folders
// and symlinks are left out; files over limit are listed, marked
// tooLarge. The list is sorted by rel.
func walkTree(ctx context.Context, g *pathguard.Guard, root, dir string, langs *languageSet, want *language, limit int64) ([]candidate, error) {
	opts := walk.Options{
		MaxFileSize: limit,
		Want: func(name string) bool {
			l := langs.forFile(name)
			return l != nil && (want == nil || l == want)
		},
	}
	entries, err := walk.Files(ctx, g, dir, opts)
	if err != nil {
		return nil, err
	}
	// Results are relative to root, which is the guard's root unless the
	// caller's guard was opened elsewhere; a fixed prefix taken off or put
	// on keeps the walk's order.
	sameRoot := root == g.Root()
	out := make([]candidate, 0, len(entries))
	for _, e := range entries {
		rel := e.Rel
		if !sameRoot {
			r, _ := filepath.Rel(root, e.Abs)
			rel = filepath.ToSlash(r)
		}
		out = append(out, newCandidate(rel, e.Abs, e.Info, limit, langs.forFile(e.Abs)))
	}
	return out, nil
}
