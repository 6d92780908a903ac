// Package astedit stages structural rewrites and applies them on request:
// the engine behind the ast_edit and resolve tools. Stage finds a
// pattern's matches with an astgrep.Engine, renders the rewrite template
// for each, and keeps the result in memory with the exact bytes it was
// computed from; nothing touches the disk until Resolve accepts it, and
// then every file is checked against those bytes and written all or
// nothing (internal/atomicfile). It does not describe MCP tools or confine
// paths; the caller does.
//
// # Templates
//
// A rewrite is text in which `$NAME` and `$$$NAME` stand for what the
// pattern's metavariables captured (names as in astgrep: upper-case
// letters, digits, `_`). Using a name the pattern does not capture, or
// `$_`, is an error. Indentation is kept sensible: every template line
// after the first gets the indentation of the line the match starts on,
// and every line after the first of a multi-line capture is re-indented
// from the indentation of the line it started on to that of the line it is
// inserted into. (Lines inside a multi-line string literal are re-indented
// too; a rewrite that moves such strings should be checked in the diff.)
//
// # Overlaps
//
// Matches nested in (or overlapping) an earlier, longer match are left
// out: the outermost wins, deterministically, and the proposal lists what
// was left out so the agent can run the edit again.
//
// # Safety
//
// Staging refuses a rewrite after which a file would have more ERROR or
// MISSING nodes than before, naming the file and lines. Resolve with
// accept compares every file with the bytes captured at staging; any
// difference rejects the whole edit and writes nothing. Writes are atomic
// per file (temp file + rename, mode kept) and all or nothing across
// files: if one fails, the files already written are restored.
package astedit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/aymanbagabas/go-udiff"
	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// ErrNoMatches is returned by Stage when the pattern matched nothing, so
// there is nothing to stage.
var ErrNoMatches = errors.New("the pattern matched nothing, so nothing was staged; check it with ast_grep first")

// ErrUnknownEdit is returned by Resolve for an id that was never staged in
// this run.
var ErrUnknownEdit = errors.New("unknown edit_id")

// ErrAlreadyResolved is returned by Resolve for an id that was already
// accepted, discarded or rejected.
var ErrAlreadyResolved = errors.New("edit already resolved")

// ErrDropped is wrapped by Resolve's error for an edit that was dropped
// unresolved to make room for newer ones (see Limits).
var ErrDropped = errors.New("staged edit dropped")

// ErrTooLargeToStage is wrapped by Stage's error for an edit that alone
// would hold more than Limits.MaxBytes.
var ErrTooLargeToStage = errors.New("edit too large to stage")

// ErrRewriteTooLarge is wrapped by Stage's error for a rewrite template
// over the pattern's limits (astgrep.MaxPatternBytes,
// astgrep.MaxPatternMetavariables).
var ErrRewriteTooLarge = errors.New("the rewrite is too large")

// MaxResultBytes is the largest file a rewrite may produce, the limit of
// the file tools (edit, apply_patch).
const MaxResultBytes = 16 << 20

// ResultTooLargeError refuses to stage a rewrite after which a file would
// pass MaxResultBytes; the result is not built.
type ResultTooLargeError struct {
	File  string
	Limit int
}

// Error implements error.
func (e *ResultTooLargeError) Error() string {
	return fmt.Sprintf("nothing was staged: the rewrite would make %s larger than %s, the limit for one rewritten file; the template's captures repeat too much text. Use fewer metavariables in the rewrite, or narrow path",
		e.File, formatBytes(int64(e.Limit)))
}

// StaleError rejects an accept because files changed after staging.
// Nothing was written.
type StaleError struct {
	ID    string
	Files []string // relative paths that differ from the staged bytes
	Redo  string   // how to stage it again; "" for ast_edit
}

// Error implements error.
func (e *StaleError) Error() string {
	if e.Redo != "" {
		return fmt.Sprintf("%s was rejected and nothing was written: %s changed since the edit was worked out. A half-applied edit leaves code that compiles in neither shape; %s",
			e.ID, strings.Join(e.Files, ", "), e.Redo)
	}
	return fmt.Sprintf("%s was rejected and nothing was written: %s changed since the edit was staged. A half-applied structural rewrite leaves code that compiles in neither shape; run ast_edit again to stage it against the current files",
		e.ID, strings.Join(e.Files, ", "))
}

// ParseBreakError refuses to stage a rewrite that would leave files with
// new syntax errors.
type ParseBreakError struct {
	Files []BrokenFile
}

// BrokenFile is one file a rewrite would break.
type BrokenFile struct {
	File          string
	Before, After int   // ERROR/MISSING nodes before and after the rewrite
	Lines         []int // 1-based lines with errors in the rewritten file (first few)
}

// Error implements error.
func (e *ParseBreakError) Error() string {
	var parts []string
	for _, f := range e.Files {
		parts = append(parts, fmt.Sprintf("%s (syntax errors at line %s of the rewritten file)", f.File, joinInts(f.Lines)))
	}
	return "nothing was staged: the rewrite would leave code that no longer parses in " + strings.Join(parts, "; ") + ". Fix the rewrite template (balanced brackets, separators) and try again"
}

// TemplateError reports a rewrite template that uses something the
// pattern does not capture.
type TemplateError struct {
	Name     string
	Captured []string
}

// Error implements error.
func (e *TemplateError) Error() string {
	if e.Name == "$_" || strings.HasPrefix(e.Name, "$_") || strings.HasPrefix(e.Name, "$$$_") || e.Name == "$$$" {
		return fmt.Sprintf("the rewrite uses %s, which binds nothing; name the metavariable in the pattern and the rewrite", e.Name)
	}
	caps := "no metavariables"
	if len(e.Captured) > 0 {
		caps = strings.Join(e.Captured, ", ")
	}
	return fmt.Sprintf("the rewrite uses %s, which the pattern does not capture (it captures %s)", e.Name, caps)
}

// Replacement is one match and what it becomes.
type Replacement struct {
	File               string // relative, slash-separated
	StartLine, EndLine int
	StartByte, EndByte int
	Old, New           string
}

// FileChange is one file a proposal rewrites.
type FileChange struct {
	File         string // relative, slash-separated
	Path         string // absolute
	Replacements int
	Lines        []int // start line of each replacement
	Diff         string

	before, after []byte
	dev, ino      uint64 // the file staged, so a swapped-in file is refused
}

// Proposal is a staged edit.
type Proposal struct {
	ID      string
	Pattern string
	// Rule is the rule matched instead of a pattern, as JSON.
	Rule     string
	Rewrite  string
	Language string
	Context  string // how the pattern was read
	// Replacements are applied in file then position order.
	Replacements []Replacement
	Files        []FileChange
	// Dropped are matches nested in or overlapping a match that was kept.
	Dropped []Replacement
	// Skipped are files the search left out (binary, too large).
	Skipped []astgrep.SkippedFile
	// Diff is the unified diff of every file.
	Diff string
	// Evicted are older pending edits dropped to make room for this one,
	// with the reason ("edit_1 (more than 16 edits were pending)").
	Evicted []string
	// Title, Redo and Edits are set for a change staged by StageChange:
	// what it does, how to stage it again, and its text edits.
	Title string
	Redo  string
	Edits int

	size      int64 // bytes held: see Limits.MaxBytes
	notes     []string
	accepting bool             // a Resolve is writing it; guarded by the Stager's mu
	guard     *pathguard.Guard // the root its files are read and written through
}

// What is what the edit matched: the pattern, or "rule" and the rule.
func (p *Proposal) What() string {
	if p.Rule != "" {
		return "rule " + p.Rule
	}
	return p.Pattern
}

// Outcome is what Resolve did.
type Outcome struct {
	ID       string
	Accepted bool
	Files    []string
	// Before holds each file's bytes before the edit, by Files' order.
	Before       [][]byte
	Replacements int
	// Notes say what the write could not keep (see atomicfile.Report).
	Notes []string
}

// Limits bound the edits a Stager holds unresolved, each of which keeps
// every file it rewrites in memory twice (before and after) plus its diff.
// When staging a new edit would pass either limit, the oldest pending
// edits are dropped; resolving one of those later fails with ErrDropped.
// Zero values pick the defaults.
type Limits struct {
	// MaxPending is how many edits may be pending at once. Default 16:
	// an agent resolves an edit soon after staging it, so older ones are
	// almost always forgotten.
	MaxPending int
	// MaxBytes bounds the bytes all pending edits hold together: the
	// files before and after, the diffs and the replaced texts. Default
	// 256 MiB: a rewrite of every `if err != nil` block in Go's standard
	// library (1,935 files) holds about 67 MB. An edit larger than this
	// alone is refused.
	MaxBytes int64
}

// Default limits.
const (
	DefaultMaxPending      = 16
	DefaultMaxPendingBytes = 256 << 20
)

// Stager holds one run's staged edits. Staged edits die with it. It is safe
// for concurrent use.
type Stager struct {
	e        *astgrep.Engine
	limits   Limits
	mu       sync.Mutex
	next     int
	pending  map[string]*Proposal
	held     int64             // size of every pending edit
	resolved map[string]string // id -> how it ended
	dropped  map[string]string // id -> why it was dropped
}

// NewStager makes a Stager that searches with e, with the default limits.
func NewStager(e *astgrep.Engine) *Stager { return NewStagerWithLimits(e, Limits{}) }

// NewStagerWithLimits makes a Stager that searches with e and holds at most
// what l allows.
func NewStagerWithLimits(e *astgrep.Engine, l Limits) *Stager {
	if l.MaxPending <= 0 {
		l.MaxPending = DefaultMaxPending
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxPendingBytes
	}
	return &Stager{e: e, limits: l, pending: map[string]*Proposal{}, resolved: map[string]string{}, dropped: map[string]string{}}
}

// Summary describes a pending edit for a human deciding on it: what it
// replaces, where, and the start of its diff; false when id is not
// pending.
func (s *Stager) Summary(id string) (string, bool) {
	s.mu.Lock()
	p := s.pending[id]
	s.mu.Unlock()
	if p == nil {
		return "", false
	}
	files := make([]string, 0, len(p.Files))
	for _, f := range p.Files {
		files = append(files, f.File)
	}
	var b strings.Builder
	if p.Title != "" {
		fmt.Fprintf(&b, "%s: %s: %s in %s (%s)", p.ID, textcut.Ellipsis(p.Title, 200), textcut.Count(p.Edits, "edit", "edits"),
			textcut.Count(len(files), "file", "files"), textcut.Ellipsis(strings.Join(files, ", "), 400))
	} else {
		fmt.Fprintf(&b, "%s: %d replacements of `%s` by `%s` in %d files (%s)", p.ID, len(p.Replacements),
			textcut.Ellipsis(p.What(), 200), textcut.Ellipsis(p.Rewrite, 200), len(files), textcut.Ellipsis(strings.Join(files, ", "), 400))
	}
	if diff := strings.Split(strings.TrimRight(p.Diff, "\n"), "\n"); len(diff) > 0 && p.Diff != "" {
		const show = 40
		b.WriteString("\n\n" + strings.Join(diff[:min(show, len(diff))], "\n"))
		if len(diff) > show {
			fmt.Fprintf(&b, "\n… (%d more diff lines)", len(diff)-show)
		}
	}
	return b.String(), true
}

// Pending lists the ids of staged, unresolved edits, in staging order.
func (s *Stager) Pending() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingLocked()
}

func (s *Stager) pendingLocked() []string {
	ids := make([]string, 0, len(s.pending))
	for id := range s.pending {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return editNumber(ids[i]) < editNumber(ids[j]) })
	return ids
}

func editNumber(id string) int {
	var n int
	fmt.Sscanf(id, "edit_%d", &n)
	return n
}

// Stage computes the rewrite of every match of q and stages it under a new
// id. It writes nothing. q.MaxResults is ignored: every match is staged.
func (s *Stager) Stage(ctx context.Context, q astgrep.Query, rewrite string) (*Proposal, error) {
	tmpl, err := parseTemplate(rewrite)
	if err != nil {
		return nil, err
	}
	guard := q.Path.Guard()
	if guard == nil {
		return nil, fmt.Errorf("%w: a rewrite needs a Path from the run's path guard", pathguard.ErrNoPath)
	}
	res, files, err := s.e.SearchFiles(ctx, q)
	if err != nil {
		return nil, err
	}
	for _, name := range tmpl.names() {
		if !slices.Contains(res.Metavariables, name) {
			return nil, &TemplateError{Name: name, Captured: res.Metavariables}
		}
	}
	if res.Total == 0 {
		return nil, ErrNoMatches
	}
	p := &Proposal{Pattern: q.Pattern, Rewrite: rewrite, Language: res.Language, Context: res.Context, Skipped: res.Skipped,
		guard: guard}
	if q.Rule != nil {
		b, _ := json.Marshal(q.Rule.Rule)
		p.Rule = string(b)
	}
	var broken []BrokenFile
	held := int64(0) // before and after of the files so far, checked as they come (N5)
	for _, fm := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fc, reps, dropped, err := rewriteFile(fm, tmpl, MaxResultBytes)
		if err != nil {
			return nil, err
		}
		if held += int64(len(fc.before) + len(fc.after)); held > s.limits.MaxBytes {
			return nil, fmt.Errorf("%w: nothing was staged: this edit would hold more than %s in memory until resolved (the files rewritten so far, before and after), the limit for staged edits; narrow path to fewer files and stage it in parts",
				ErrTooLargeToStage, formatBytes(s.limits.MaxBytes))
		}
		p.Dropped = append(p.Dropped, dropped...)
		before, err := s.e.ParseErrorLines(fm.Language, fc.before)
		if err != nil {
			return nil, err
		}
		after, err := s.e.ParseErrorLines(fm.Language, fc.after)
		if err != nil {
			return nil, err
		}
		if len(after) > len(before) {
			lines := slices.Compact(slices.Sorted(slices.Values(after)))
			if len(lines) > 5 {
				lines = lines[:5]
			}
			broken = append(broken, BrokenFile{File: fm.File, Before: len(before), After: len(after), Lines: lines})
			continue
		}
		if info, err := guard.Stat(fc.Path); err == nil {
			fc.dev, fc.ino = fileID(info)
		}
		fc.Diff = udiff.Unified("a/"+fm.File, "b/"+fm.File, string(fc.before), string(fc.after))
		p.Files = append(p.Files, fc)
		p.Replacements = append(p.Replacements, reps...)
	}
	if len(broken) > 0 {
		return nil, &ParseBreakError{Files: broken}
	}
	var diff strings.Builder
	for _, f := range p.Files {
		diff.WriteString(f.Diff)
	}
	p.Diff = diff.String()
	if err := s.hold(p, textcut.Count(len(p.Files), "file", "files")+" rewritten", "; narrow path to fewer files and stage it in parts"); err != nil {
		return nil, err
	}
	return p, nil
}

// hold gives p an id and keeps it pending, dropping the oldest edits when
// the limits need room; an edit over the byte limit by itself is refused.
// files says what it rewrites, hint (if any) what to do instead.
func (s *Stager) hold(p *Proposal, files, hint string) error {
	p.size = proposalSize(p)
	if p.size > s.limits.MaxBytes {
		return fmt.Errorf("%w: nothing was staged: this edit would hold %s in memory until resolved (%s, before and after, with the diff), over the limit of %s for staged edits%s",
			ErrTooLargeToStage, formatBytes(p.size), files, formatBytes(s.limits.MaxBytes), hint)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	p.ID = fmt.Sprintf("edit_%d", s.next)
	p.Evicted = s.makeRoomLocked(p.size)
	s.pending[p.ID] = p
	s.held += p.size
	return nil
}

// makeRoomLocked drops the oldest pending edits until one more of size
// bytes fits the limits, and says which it dropped and why. An edit being
// accepted is never dropped; while it finishes, the limits may be passed.
func (s *Stager) makeRoomLocked(size int64) []string {
	var out []string
	for _, id := range s.pendingLocked() {
		var why string
		switch {
		case len(s.pending)+1 > s.limits.MaxPending:
			why = fmt.Sprintf("more than %d edits were pending", s.limits.MaxPending)
		case s.held+size > s.limits.MaxBytes:
			why = fmt.Sprintf("staged edits held more than %s", formatBytes(s.limits.MaxBytes))
		default:
			return out
		}
		if s.pending[id].accepting {
			continue
		}
		s.finishLocked(id, "")
		s.dropped[id] = why
		out = append(out, fmt.Sprintf("%s (%s)", id, why))
	}
	return out
}

// proposalSize is what p holds in memory: every file before and after,
// the diffs (each file's and the whole) and the replaced texts.
func proposalSize(p *Proposal) int64 {
	n := int64(len(p.Diff))
	for _, f := range p.Files {
		n += int64(len(f.before) + len(f.after) + len(f.Diff))
	}
	for _, r := range p.Replacements {
		n += int64(len(r.Old) + len(r.New))
	}
	return n
}

// formatBytes renders n for a message: "256 MiB", "1.5 MiB", "300 KiB".
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", (n+512)>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Resolve accepts or discards a staged edit. Accept writes every file or
// none; see the package doc. A write failure leaves the edit staged (the
// files were restored), so it can be accepted again or discarded. The
// files are locked (atomicfile.Lock) from the staleness check to the last
// write, so an edit by another tool lands before (and rejects this one) or
// after, never in between.
func (s *Stager) Resolve(ctx context.Context, id string, accept bool, opts atomicfile.Options) (*Outcome, error) {
	s.mu.Lock()
	p, ok := s.pending[id]
	if !ok {
		defer s.mu.Unlock()
		if why, gone := s.dropped[id]; gone {
			return nil, fmt.Errorf("%w: %s was dropped because %s; nothing was written: run ast_edit again (or lsp_rename with preview) to stage it against the current files (and resolve each edit before staging many more)",
				ErrDropped, id, why)
		}
		if how, done := s.resolved[id]; done {
			return nil, fmt.Errorf("%w: %s was already %s", ErrAlreadyResolved, id, how)
		}
		pend := "none are pending"
		if ids := s.pendingLocked(); len(ids) > 0 {
			pend = "pending: " + strings.Join(ids, ", ")
		}
		return nil, fmt.Errorf("%w %q (%s); edit ids come from ast_edit's result or lsp_rename's preview", ErrUnknownEdit, id, pend)
	}
	if p.accepting {
		s.mu.Unlock()
		return nil, fmt.Errorf("%s is being accepted by another call; wait for its result", id)
	}
	out := &Outcome{ID: id, Accepted: accept, Replacements: p.count()}
	for _, f := range p.Files {
		out.Files = append(out.Files, f.File)
		out.Before = append(out.Before, f.before)
	}
	if !accept {
		s.finishLocked(id, "discarded")
		s.mu.Unlock()
		return out, nil
	}
	p.accepting = true
	s.mu.Unlock()
	// The disk work runs without the stager's lock, so other edits can be
	// staged or resolved meanwhile.
	if err := s.accept(ctx, p, opts); err != nil {
		var stale *StaleError
		s.mu.Lock()
		p.accepting = false
		switch {
		case errors.As(err, &stale):
			s.finishLocked(id, "rejected because files changed after staging")
		case errors.Is(err, atomicfile.ErrGitMetadata) || errors.Is(err, atomicfile.ErrGitExec):
			// Accepting again would be refused again.
			s.finishLocked(id, "rejected because it changes a repository's metadata")
			err = fmt.Errorf("%s was rejected and nothing was written: %w", id, errors.Unwrap(err))
		}
		s.mu.Unlock()
		return nil, err
	}
	s.mu.Lock()
	s.finishLocked(id, "accepted")
	s.mu.Unlock()
	out.Notes = p.notes
	return out, nil
}

// finishLocked ends a pending edit; how ("accepted", ...) is what a later
// Resolve of it reports, none when empty.
func (s *Stager) finishLocked(id, how string) {
	if p := s.pending[id]; p != nil {
		s.held -= p.size
	}
	delete(s.pending, id)
	if how != "" {
		s.resolved[id] = how
	}
}

// accept checks every file of p against its staged bytes and writes them
// all, holding the files' locks throughout.
func (s *Stager) accept(ctx context.Context, p *Proposal, opts atomicfile.Options) error {
	paths := make([]string, len(p.Files))
	for i, f := range p.Files {
		paths[i] = f.Path
	}
	unlock, err := atomicfile.Lock(ctx, paths...)
	if err != nil {
		return fmt.Errorf("%s is still staged: %w", p.ID, err)
	}
	defer unlock()
	// Each file must still be the one staged: the same path through the
	// guard (a folder replaced by a link no longer is), the same device
	// and inode, the same bytes.
	g := p.guard
	var stale []string
	for _, f := range p.Files {
		real, err := g.Resolve(f.Path)
		if err != nil || real != f.Path {
			stale = append(stale, f.File+" (its path now leads elsewhere)")
			continue
		}
		cur, info, err := g.ReadFile(f.Path, 0)
		if err != nil || string(cur) != string(f.before) {
			stale = append(stale, f.File)
			continue
		}
		if dev, ino := fileID(info); f.ino != 0 && (dev != f.dev || ino != f.ino) {
			stale = append(stale, f.File+" (another file took its place)")
		}
	}
	if len(stale) > 0 {
		return &StaleError{ID: p.ID, Files: stale, Redo: p.Redo}
	}
	changes := make([]atomicfile.Change, len(p.Files))
	for i, f := range p.Files {
		changes[i] = atomicfile.Change{Path: f.Path, Data: f.after, Expect: f.before, Expected: true}
	}
	rep, err := atomicfile.WriteAll(g, changes, opts)
	if err != nil {
		return fmt.Errorf("accepting %s failed and it is still staged (accept again or discard it): %w", p.ID, err)
	}
	p.notes = rep.Notes
	return nil
}

// fileID is a file's device and inode.
func fileID(info fs.FileInfo) (uint64, uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
