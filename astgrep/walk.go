package astgrep

import (
	"context"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/pathguard"
	ignore "github.com/sabhiram/go-gitignore"
)

// skippedDirs are folders of code someone else maintains or a tool
// generated; a walk never descends into them (naming one as Path still
// searches it).
var skippedDirs = map[string]bool{
	"vendor":           true,
	"node_modules":     true,
	"bower_components": true,
	"__pycache__":      true,
	"site-packages":    true,
}

// candidate is a file the walk found in a language of interest.
type candidate struct {
	rel   string // slash-separated, relative to the root
	abs   string
	size  int64
	mtime time.Time
	lang  *language
}

// ignoreLayer is one .gitignore and the folder it sits in.
type ignoreLayer struct {
	dir string // absolute
	gi  *ignore.GitIgnore
}

type walker struct {
	g       *pathguard.Guard
	root    string
	langs   *languageSet
	want    *language // nil: every known language
	layers  []ignoreLayer
	out     []candidate
	visited int
}

// walkTree lists the files under dir (inside root) a developer would
// expect a search to see: .gitignore'd paths (nested files too), hidden
// entries, vendored folders and symlinks are left out.
func walkTree(ctx context.Context, g *pathguard.Guard, root, dir string, langs *languageSet, want *language) ([]candidate, error) {
	w := &walker{g: g, root: root, langs: langs, want: want}
	// .gitignore files of the folders between root and dir apply too.
	if rel, err := filepath.Rel(root, dir); err == nil && rel != "." {
		cur := root
		w.pushIgnore(cur)
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			cur = filepath.Join(cur, part)
			if cur != dir {
				w.pushIgnore(cur)
			}
		}
		// A folder named explicitly is searched even if it is ignored.
		if w.ignored(dir, true) {
			w.layers = nil
		}
	}
	if err := w.walk(ctx, dir); err != nil {
		return nil, err
	}
	sort.Slice(w.out, func(i, j int) bool { return w.out[i].rel < w.out[j].rel })
	return w.out, nil
}

// maxIgnoreBytes bounds a .gitignore read into memory.
const maxIgnoreBytes = 1 << 20

func (w *walker) pushIgnore(dir string) bool {
	data, _, err := w.g.ReadFile(filepath.Join(dir, ".gitignore"), maxIgnoreBytes)
	if err != nil {
		return false
	}
	gi := ignore.CompileIgnoreLines(strings.Split(string(data), "\n")...)
	w.layers = append(w.layers, ignoreLayer{dir: dir, gi: gi})
	return true
}

func (w *walker) ignored(abs string, isDir bool) bool {
	for _, l := range w.layers {
		rel, err := filepath.Rel(l.dir, abs)
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		if isDir {
			rel += "/"
		}
		if l.gi.MatchesPath(rel) {
			return true
		}
	}
	return false
}

func (w *walker) walk(ctx context.Context, dir string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := w.g.ReadDir(dir)
	if err != nil {
		// An unreadable folder is left out, like grep -r does.
		return nil
	}
	pushed := w.pushIgnore(dir)
	defer func() {
		if pushed {
			w.layers = w.layers[:len(w.layers)-1]
		}
	}()
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		typ := e.Type()
		if typ&fs.ModeSymlink != 0 {
			continue
		}
		abs := filepath.Join(dir, name)
		if typ.IsDir() {
			if skippedDirs[name] || w.ignored(abs, true) {
				continue
			}
			if err := w.walk(ctx, abs); err != nil {
				return err
			}
			continue
		}
		if !typ.IsRegular() {
			continue
		}
		lang := w.langs.forFile(name)
		if lang == nil || w.want != nil && lang != w.want {
			continue
		}
		if w.ignored(abs, false) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		rel, _ := filepath.Rel(w.root, abs)
		w.out = append(w.out, candidate{rel: filepath.ToSlash(rel), abs: abs, size: info.Size(), mtime: info.ModTime(), lang: lang})
	}
	return nil
}
