package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/lsp/rpc"
	"github.com/builtin-tools/builtin-tools/lsp/wsedit"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Fix kinds lsp_fix applies to a whole file (or a line range, for format).
const (
	FixOrganizeImports = "organize_imports"
	FixAll             = "fix_all"
	FixFormat          = "format"
)

// fixKinds maps a fix kind to the code action kind servers give it.
var fixKinds = map[string]string{
	FixOrganizeImports: "source.organizeImports",
	FixAll:             "source.fixAll",
}

// MaxHeldActions is how many listed code actions stay addressable by id;
// older ones are forgotten.
const MaxHeldActions = 500

// Errors of lsp_fix.
var (
	// ErrUnknownAction: an id this run never listed, or no longer holds.
	ErrUnknownAction = errors.New("unknown code action id")
	// ErrNoSuchFix: the server offers no action of the kind asked for.
	ErrNoSuchFix = errors.New("the server offers no such fix")
	// ErrNoEdit: the action's command ran but the server sent no edit.
	ErrNoEdit = errors.New("the server sent no edit")
	// errEmptyAction: an action with neither edit nor command (a source
	// action with nothing to do).
	errEmptyAction = fmt.Errorf("%w", ErrNoEdit)
)

// StaleActionError refuses an action listed for a file that has changed
// since: its edit was computed from the old text. Fresh holds the actions
// offered now at the same place (nil when they could not be listed).
type StaleActionError struct {
	ID    string
	File  string
	Fresh *answer.CodeActions
	Err   error // why Fresh is nil
}

func (e *StaleActionError) Error() string {
	msg := fmt.Sprintf("%s was listed for %s before it changed, so its edit no longer fits; nothing was applied", e.ID, e.File)
	if e.Err != nil {
		msg += fmt.Sprintf(" (listing the actions again failed: %v)", e.Err)
	}
	return msg
}

// heldAction is a listed code action, kept so that lsp_fix can apply it.
type heldAction struct {
	id     string
	path   string // absolute
	rel    string
	text   string // the file's text when listed
	place  protocol.Place
	srv    *server
	action protocol.CodeActionOrCommand
}

// actionTable holds the run's listed actions by id.
type actionTable struct {
	mu    sync.Mutex
	next  int
	held  map[string]*heldAction
	order []string
}

func (t *actionTable) add(a *heldAction) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held == nil {
		t.held = map[string]*heldAction{}
	}
	t.next++
	a.id = fmt.Sprintf("action_%d", t.next)
	t.held[a.id] = a
	t.order = append(t.order, a.id)
	for len(t.order) > MaxHeldActions {
		delete(t.held, t.order[0])
		t.order = t.order[1:]
	}
	return a.id
}

func (t *actionTable) get(id string) (*heldAction, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if a := t.held[id]; a != nil {
		return a, nil
	}
	var n int
	if _, err := fmt.Sscanf(id, "action_%d", &n); err == nil && n > 0 && n <= t.next {
		return nil, fmt.Errorf("%w %q: only the last %d listed actions are kept; list them again with lsp code_actions", ErrUnknownAction, id, MaxHeldActions)
	}
	listed := "none was listed in this run"
	if t.next > 0 {
		listed = fmt.Sprintf("this run listed action_1 … action_%d", t.next)
	}
	return nil, fmt.Errorf("%w %q (%s): ids come from lsp code_actions in this run", ErrUnknownAction, id, listed)
}

// FixPlan is an lsp_fix worked out and not yet written (FIX-1): the
// action's own edit planned against the files as they are, and the command
// it runs after it, whose edit is known only once it runs. [Supervisor.CommitFix]
// writes exactly this plan, so what an approval card showed is what is
// written.
type FixPlan struct {
	// Result is what the fix reports once written: its id or kind, title,
	// file and server, and the files and edits of its own edit.
	Result answer.FixResult
	// Changes are the files its own edit changes, sorted by path.
	Changes []answer.FileChange
	// Command is the server command it runs after its edit, "" for none.
	Command string

	srv  *server
	path string       // the file the fix is for, absolute
	plan *wsedit.Plan // nil: no edit of its own
	args json.RawMessage
	// needEdit: the command is the whole fix, so it must send an edit;
	// noEditUnchanged: one that sends none (a FixCommands command) means
	// there was nothing to change.
	needEdit, noEditUnchanged bool
}

// Confirm is asked about each edit a fix's command sends, before it is
// written; an error refuses the edit (the server is told it was not
// applied, and the fix fails with the error).
type Confirm func(ctx context.Context, e *answer.ProposedEdit) error

// ApplyAction applies the code action listed under id: PlanAction, then
// CommitFix with no one to confirm the command's edits.
func (s *Supervisor) ApplyAction(ctx context.Context, id string, force bool) (*answer.FixResult, error) {
	p, err := s.PlanAction(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.CommitFix(ctx, p, force, nil)
}

// PlanAction works out the code action listed under id — resolved when it
// carries neither edit nor command, its edit planned against the files as
// they are — and writes nothing. An action listed for a file that has
// changed since is refused with the actions offered now.
func (s *Supervisor) PlanAction(ctx context.Context, id string) (*FixPlan, error) {
	a, err := s.actions.get(strings.TrimSpace(id))
	if err != nil {
		return nil, err
	}
	text, _, err := checkout.ReadText(s.co.Guard(), a.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", checkout.ErrBadFile, err)
	}
	if text != a.text {
		stale := &StaleActionError{ID: a.id, File: a.rel}
		at, err := s.co.Guard().Path(a.path)
		if err == nil {
			stale.Fresh, err = s.CodeActions(ctx, at, a.place)
		}
		stale.Err = err
		return nil, stale
	}
	srv, _, err := s.fleet.syncSettled(ctx, a.path)
	if err != nil {
		return nil, err
	}
	defer srv.release()
	if srv != a.srv {
		return nil, fmt.Errorf("%s was listed by a %s that has since been restarted, and its edit belongs to that one; nothing was applied: list the actions again with lsp code_actions", a.id, srv.spec.ID)
	}
	p := &FixPlan{Result: answer.FixResult{ID: a.id, Title: s.co.RelText(a.action.Title), File: a.rel, Server: srv.spec.ID}, srv: srv, path: a.path}
	if err := p.action(ctx, s.co, a.action); err != nil {
		return nil, err
	}
	return p, nil
}

// Fix applies a fix of kind to file: PlanFix, then CommitFix with no one
// to confirm the command's edits.
func (s *Supervisor) Fix(ctx context.Context, file pathguard.Path, kind string, from, to int, force bool) (*answer.FixResult, error) {
	p, err := s.PlanFix(ctx, file, kind, from, to)
	if err != nil {
		return nil, err
	}
	return s.CommitFix(ctx, p, force, nil)
}

// PlanFix works out a fix of kind for file and writes nothing:
// organize_imports and fix_all ask the server for that source action over
// the whole file, format for textDocument/formatting, or rangeFormatting
// over lines [from, to] when from > 0.
func (s *Supervisor) PlanFix(ctx context.Context, file pathguard.Path, kind string, from, to int) (*FixPlan, error) {
	if kind != FixFormat && fixKinds[kind] == "" {
		return nil, fmt.Errorf("%w: kind must be organize_imports, fix_all or format, not %q", ErrBadArgument, kind)
	}
	if from > 0 && kind != FixFormat {
		return nil, fmt.Errorf("%w: a line range is for format only; %s works on the whole file", ErrBadArgument, kind)
	}
	srv, path, doc, err := s.fleet.settledFile(ctx, file)
	if err != nil {
		return nil, err
	}
	defer srv.release()
	rel := s.co.Rel(path)
	p := &FixPlan{Result: answer.FixResult{Kind: kind, File: rel, Server: srv.spec.ID}, srv: srv, path: path}
	d := protocol.NewDocument(doc.text)
	if kind == FixFormat {
		return p, p.format(ctx, s.co, doc, d, from, to)
	}
	want := fixKinds[kind]
	if cmd := srv.spec.FixCommands[kind]; cmd != "" {
		// Offered as a command, not a code action: its edit comes back as
		// workspace/applyEdit; none means nothing to change.
		args, _ := json.Marshal([]string{doc.uri})
		p.Command, p.args, p.needEdit, p.noEditUnchanged = cmd, args, true, true
		return p, nil
	}
	params := protocol.CodeActionParams{TextDocument: protocol.TextDocumentIdentifier{URI: doc.uri}, Range: protocol.WholeRange(d, srv.encoding)}
	if kind == FixAll {
		// A fix-all fixes the diagnostics it is given: have the current ones.
		items, derr := srv.diagnosticsFor(ctx, doc)
		if derr != nil {
			items = srv.docs.storedDiagnostics(doc.uri)
		}
		params.Context.Diagnostics = items
	}
	if params.Context.Diagnostics == nil {
		params.Context.Diagnostics = []protocol.Diagnostic{}
	}
	params.Context.Only = []string{want}
	var actions []protocol.CodeActionOrCommand
	if err := srv.call(ctx, "textDocument/codeAction", params, &actions); err != nil {
		return nil, err
	}
	var kinds []string
	for _, a := range actions {
		if a.Disabled == nil && (a.Kind == want || strings.HasPrefix(a.Kind, want+".")) {
			p.Result.Title = s.co.RelText(a.Title)
			err := p.action(ctx, s.co, a)
			if errors.Is(err, errEmptyAction) {
				// Offered with nothing in it: nothing to change, as when
				// it is not offered at all.
				p.Result.Title = ""
				p.unchanged()
				return p, nil
			}
			return p, err
		}
		if a.Kind != "" && !slices.Contains(kinds, a.Kind) {
			kinds = append(kinds, a.Kind)
		}
	}
	srv.mu.Lock()
	announced := srv.actionKinds
	srv.mu.Unlock()
	if slices.ContainsFunc(announced, func(k string) bool {
		return k == want || strings.HasPrefix(want, k+".") || strings.HasPrefix(k, want+".")
	}) {
		// It has the kind and offered none here: nothing to do.
		p.unchanged()
		return p, nil
	}
	offered := "nothing"
	if len(kinds) > 0 {
		offered = strings.Join(kinds, ", ")
	}
	if len(announced) > 0 {
		offered += "; the kinds it announces are " + strings.Join(announced, ", ")
	}
	return nil, fmt.Errorf("%w: %s offers no %s action (%s) for %s — it offered %s; nothing was changed", ErrNoSuchFix, srv.spec.ID, kind, want, rel, offered)
}

// unchanged marks a plan that changes nothing.
func (p *FixPlan) unchanged() {
	p.plan, p.Command = nil, ""
	p.Result.Unchanged, p.Result.Files, p.Result.Edits = true, []answer.FileEdit{}, 0
	p.Changes = []answer.FileChange{}
}

// format asks p's server for the file's (or lines from..to's)
// formatting edits and plans them into p.
func (p *FixPlan) format(ctx context.Context, co *checkout.Checkout, doc *openDoc, d *protocol.Document, from, to int) error {
	srv := p.srv
	srv.mu.Lock()
	whole, ranged := srv.formatting, srv.rangeFormatting
	srv.mu.Unlock()
	opts := formattingOptions(doc.text)
	var edits []protocol.TextEdit
	switch {
	case from > 0:
		if to < from {
			to = from
		}
		if from > d.LineCount() {
			return fmt.Errorf("%w: %s has %d lines; line %d is past its end", ErrBadArgument, p.Result.File, d.LineCount(), from)
		}
		if !ranged {
			return fmt.Errorf("%w: %s does not format a line range; call lsp_fix with kind format and no line to format the whole file", ErrNoSuchFix, srv.spec.ID)
		}
		last := min(to, d.LineCount()) - 1
		rng := protocol.Range{Start: protocol.Position{Line: from - 1}, End: protocol.Position{Line: last, Character: protocol.EncodedColumn(d.Line(last), len(d.Line(last)), srv.encoding)}}
		params := map[string]any{"textDocument": protocol.TextDocumentIdentifier{URI: doc.uri}, "range": rng, "options": opts}
		if err := srv.call(ctx, "textDocument/rangeFormatting", params, &edits); err != nil {
			return err
		}
	default:
		if !whole {
			return fmt.Errorf("%w: %s does not format documents (no documentFormattingProvider)%s; nothing was changed", ErrNoSuchFix, srv.spec.ID, formatNote(srv.spec))
		}
		params := map[string]any{"textDocument": protocol.TextDocumentIdentifier{URI: doc.uri}, "options": opts}
		if err := srv.call(ctx, "textDocument/formatting", params, &edits); err != nil {
			return err
		}
	}
	if len(edits) == 0 {
		p.unchanged()
		return nil
	}
	return p.ownEdit(co, &protocol.WorkspaceEdit{Changes: map[string][]protocol.TextEdit{doc.uri: edits}})
}

// formatNote says what a server without formatting needs, "" when nothing
// is known.
func formatNote(spec *langserver.Spec) string {
	if spec.FormatNote != "" {
		return " — " + spec.FormatNote
	}
	return ""
}

// formattingOptions reads the file's indentation: tabs if a line starts
// with one, else the smallest indentation in spaces (4 when none).
func formattingOptions(text string) map[string]any {
	tab, size := false, 0
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "\t") {
			tab = true
			break
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if n > 0 && n < len(l) && (size == 0 || n < size) {
			size = n
		}
	}
	if size == 0 {
		size = 4
	}
	return map[string]any{"tabSize": size, "insertSpaces": !tab, "trimTrailingWhitespace": false, "insertFinalNewline": false}
}

// action works out one code action of p's server into p: resolved first
// when it carries neither edit nor command, then its edit planned, its
// command noted for CommitFix.
func (p *FixPlan) action(ctx context.Context, co *checkout.Checkout, a protocol.CodeActionOrCommand) error {
	srv := p.srv
	if a.Disabled != nil {
		return fmt.Errorf("%w: %q is disabled: %s", ErrNoSuchFix, a.Title, co.RelText(a.Disabled.Reason))
	}
	name, args := protocol.CommandOf(a)
	if a.Edit == nil && name == "" && len(a.Data) > 0 {
		srv.mu.Lock()
		canResolve := srv.resolveActions
		srv.mu.Unlock()
		if canResolve {
			var full protocol.CodeActionOrCommand
			if err := srv.call(ctx, "codeAction/resolve", a, &full); err != nil {
				return err
			}
			a = full
			name, args = protocol.CommandOf(a)
		}
	}
	if a.Edit == nil && name == "" {
		return fmt.Errorf("%w: %s gave %q neither an edit nor a command; nothing was changed", errEmptyAction, srv.spec.ID, a.Title)
	}
	p.Result.Files, p.Changes = []answer.FileEdit{}, []answer.FileChange{}
	if a.Edit != nil {
		if err := p.ownEdit(co, a.Edit); err != nil {
			return err
		}
	}
	if name != "" {
		p.Command, p.args, p.needEdit = name, args, a.Edit == nil
	} else if p.plan == nil {
		p.unchanged()
	}
	return nil
}

// ownEdit plans the fix's own WorkspaceEdit into p; an edit that changes
// no byte leaves p with nothing to write.
func (p *FixPlan) ownEdit(co *checkout.Checkout, we *protocol.WorkspaceEdit) error {
	plan, err := planEdit(co, we, p.srv)
	if err != nil {
		return fmt.Errorf("not applied, no file changed: %w", err)
	}
	p.Result.Notes = append(p.Result.Notes, plan.Notes...)
	if !plan.Changes() {
		p.plan = nil
		p.Result.Unchanged, p.Result.Files, p.Changes = true, []answer.FileEdit{}, []answer.FileChange{}
		return nil
	}
	p.plan = plan
	p.Changes = planChanges(co, plan)
	p.Result.Files, p.Result.Edits = planFiles(co, plan)
	return nil
}

// planChanges lists what a plan changes with each file's text before and
// after, sorted by path (a moved file under its new path).
func planChanges(co *checkout.Checkout, plan *wsedit.Plan) []answer.FileChange {
	edits, _ := planFiles(co, plan)
	out := make([]answer.FileChange, 0, len(edits))
	for _, fe := range edits {
		var f *wsedit.File
		for _, path := range plan.Order {
			if co.Rel(path) == fe.Path {
				f = plan.Files[path]
			}
		}
		if f == nil {
			continue
		}
		c := answer.FileChange{FileEdit: fe, After: f.Content}
		switch {
		case f.From != "":
			if src := plan.Files[f.From]; src != nil {
				c.Before = src.DiskText
			}
		case f.ExistedOnDisk:
			c.Before = f.DiskText
		}
		if !f.Exists {
			c.After = ""
		}
		out = append(out, c)
	}
	return out
}

// CommitFix writes what p planned — exactly that: a file changed on disk
// since is refused, not re-planned — re-syncs the server, then runs the
// command, taking the workspace/applyEdit requests it sends (each planned,
// put to confirm when it is not nil, then written). On an error after
// something was written, the result names what was, and so does the error.
func (s *Supervisor) CommitFix(ctx context.Context, p *FixPlan, force bool, confirm Confirm) (*answer.FixResult, error) {
	res := p.Result
	res.Files, res.Edits, res.Notes = []answer.FileEdit{}, 0, slices.Clone(p.Result.Notes)
	if p.plan == nil && p.Command == "" {
		res.Unchanged = true
		return &res, nil
	}
	srv, _, _, err := s.fleet.sync(ctx, p.path)
	if err != nil {
		return nil, err
	}
	defer srv.release()
	if srv != p.srv {
		return nil, fmt.Errorf("%s was restarted after this fix was worked out, and the fix belongs to the one before; nothing was applied: ask for it again", srv.spec.ID)
	}
	res.Unchanged = false
	if p.plan != nil {
		if err := commitFix(ctx, s.co, p.plan, force, &res); err != nil {
			return nil, err
		}
		resyncFix(ctx, srv, p.plan, &res)
	}
	if p.Command != "" {
		res.Command = p.Command
		err := s.runCommand(ctx, srv, p.Command, p.args, p.needEdit, force, confirm, &res)
		if errors.Is(err, ErrNoEdit) && p.noEditUnchanged {
			res.Unchanged, res.Command = true, ""
			return &res, nil
		}
		if err != nil {
			if len(res.Files) > 0 {
				err = fmt.Errorf("%w; before that, %s %s written and %s so", err, writtenList(res.Files), isAre(len(res.Files), "was", "were"), isAre(len(res.Files), "stays", "stay"))
			}
			return &res, err
		}
	}
	res.Unchanged = len(res.Files) == 0
	return &res, nil
}

// writtenList names files written: "a.go (2 edits), new.go (created)".
func writtenList(files []answer.FileEdit) string {
	parts := make([]string, 0, len(files))
	for _, f := range files {
		parts = append(parts, fmt.Sprintf("%s (%s)", f.Path, f.What()))
	}
	return strings.Join(parts, ", ")
}

func isAre(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// commitFix writes a plan and records what changed in res; a plan that
// changes no byte writes nothing.
func commitFix(ctx context.Context, co *checkout.Checkout, plan *wsedit.Plan, force bool, res *answer.FixResult) error {
	res.Notes = append(res.Notes, plan.Notes...)
	if !plan.Changes() {
		return nil
	}
	notes, err := wsedit.Commit(ctx, co, plan, force)
	if err != nil {
		return fmt.Errorf("not applied: %w", err)
	}
	res.Notes = append(res.Notes, notes...)
	files, edits := planFiles(co, plan)
	res.Files = mergeFileEdits(res.Files, files)
	res.Edits += edits
	return nil
}

// resyncFix tells the server about what a plan wrote; one that could not
// take it is a note: the files are written.
func resyncFix(ctx context.Context, srv *server, plan *wsedit.Plan, res *answer.FixResult) {
	if err := resyncAfterEdit(ctx, srv, plan); err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("re-syncing %s after the write failed (use lsp reload): %v", srv.spec.ID, err))
	}
}

func mergeFileEdits(a, b []answer.FileEdit) []answer.FileEdit {
	for _, f := range b {
		i := slices.IndexFunc(a, func(g answer.FileEdit) bool { return g.Path == f.Path })
		if i < 0 {
			a = append(a, f)
			continue
		}
		a[i].Edits += f.Edits
	}
	slices.SortFunc(a, func(x, y answer.FileEdit) int { return strings.Compare(x.Path, y.Path) })
	return a
}

// runCommand runs a fix's command with workspace/executeCommand, taking
// the workspace/applyEdit requests the server sends meanwhile: each is
// planned, put to confirm (when set) and written through the commit plan
// before the server is answered; the server is re-synced once the command
// is done (pyright does not answer a command whose file changed under
// it). They are taken one at a time; once one is refused, so are the rest
// of this command's. The command's time bound stops while the operator is
// asked. The server answers the command only after its edits were taken,
// but a late edit is waited for, up to ApplyEditWait; a command that needed
// an edit and sent none is an error: nothing changed.
func (s *Supervisor) runCommand(ctx context.Context, srv *server, name string, args json.RawMessage, needEdit, force bool, confirm Confirm, res *answer.FixResult) error {
	got := make(chan struct{}, 1)
	bound := rpc.NewBound(s.cfg.RequestTimeout)
	var (
		mu       sync.Mutex // guards res, applied, applyErr, done
		one      sync.Mutex // one edit at a time
		busy     sync.WaitGroup
		applied  int
		plans    []*wsedit.Plan
		applyErr error
		done     bool // set once the results are read: a late edit is refused
	)
	srv.mu.Lock()
	if srv.applier != nil {
		srv.mu.Unlock()
		return fmt.Errorf("%s is running another fix's command; try again when it is done", srv.spec.ID)
	}
	srv.applier = func(we *protocol.WorkspaceEdit) error {
		mu.Lock()
		switch {
		case done:
			mu.Unlock()
			return errors.New("the fix's command had already finished")
		case applyErr != nil:
			mu.Unlock()
			return errors.New("an earlier edit of this command was not applied, so no later one is")
		}
		busy.Add(1)
		mu.Unlock()
		defer busy.Done()
		one.Lock()
		defer one.Unlock()
		defer func() {
			select {
			case got <- struct{}{}:
			default:
			}
		}()
		plan, err := planEdit(s.co, we, srv)
		if err == nil && confirm != nil && plan.Changes() {
			files, edits := planFiles(s.co, plan)
			bound.Pause()
			err = confirm(ctx, &answer.ProposedEdit{Server: srv.spec.ID, Command: name, Files: files, Changes: planChanges(s.co, plan), Edits: edits})
			bound.Resume()
		}
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			err = commitFix(ctx, s.co, plan, force, res)
		}
		if err != nil {
			applyErr = err
			return err
		}
		applied++
		plans = append(plans, plan)
		return nil
	}
	srv.mu.Unlock()
	defer func() {
		srv.mu.Lock()
		srv.applier = nil
		srv.mu.Unlock()
	}()
	params := map[string]any{"command": name}
	if len(args) > 0 && !bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		params["arguments"] = args
	}
	var out json.RawMessage
	callErr := srv.callBounded(ctx, "workspace/executeCommand", params, &out, bound)
	mu.Lock()
	n, failed := applied, applyErr != nil
	mu.Unlock()
	if needEdit && callErr == nil && n == 0 && !failed {
		t := time.NewTimer(s.cfg.ApplyEditWait)
		select {
		case <-got:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	mu.Lock()
	done = true
	mu.Unlock()
	// An edit taken before done finishes (its question is bounded by its
	// own time limit).
	busy.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, p := range plans {
		resyncFix(ctx, srv, p, res)
	}
	switch {
	case applyErr != nil:
		return fmt.Errorf("%s's command %s sent an edit that was not applied: %w", srv.spec.ID, name, applyErr)
	case callErr != nil:
		if applied > 0 {
			return fmt.Errorf("%s applied an edit, then its command %s failed: %w", srv.spec.ID, name, callErr)
		}
		return callErr
	case needEdit && applied == 0:
		return fmt.Errorf("%w: %s ran the command %s but sent no edit (workspace/applyEdit) within %s of answering; no file was changed",
			ErrNoEdit, srv.spec.ID, name, s.cfg.ApplyEditWait)
	}
	return nil
}
