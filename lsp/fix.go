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
	Fresh *CodeActions
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
	place  Place
	srv    *server
	action codeActionOrCommand
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

// FixResult is what lsp_fix applied.
type FixResult struct {
	// ID is the action applied by id, Kind the fix applied by kind.
	ID     string `json:"id,omitempty"`
	Kind   string `json:"kind,omitempty" jsonschema:"organize_imports, fix_all or format"`
	Title  string `json:"title,omitempty" jsonschema:"the action's title"`
	File   string `json:"file"`
	Server string `json:"server"`
	// Command is the server command the action ran, when it had one.
	Command string     `json:"command,omitempty"`
	Files   []FileEdit `json:"files" jsonschema:"the files changed, sorted by path"`
	Edits   int        `json:"edits"`
	// Unchanged: the server's edit changes nothing (already formatted,
	// imports already in order).
	Unchanged bool     `json:"unchanged,omitempty"`
	Notes     []string `json:"notes,omitempty" jsonschema:"what the writes could not keep"`
}

// ApplyAction applies the code action listed under id: its edit, then its
// command (whose workspace/applyEdit is taken, bounded by ApplyEditWait),
// all through the one commit plan. An action listed for a file that has
// changed since is refused with the actions offered now.
func (s *Supervisor) ApplyAction(ctx context.Context, id string, force bool) (*FixResult, error) {
	a, err := s.actions.get(strings.TrimSpace(id))
	if err != nil {
		return nil, err
	}
	text, _, err := readText(s.guard, a.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadFile, err)
	}
	if text != a.text {
		stale := &StaleActionError{ID: a.id, File: a.rel}
		at, err := s.guard.Path(a.path)
		if err == nil {
			stale.Fresh, err = s.CodeActions(ctx, at, a.place)
		}
		stale.Err = err
		return nil, stale
	}
	srv, doc, changed, err := s.sync(ctx, a.path)
	if err != nil {
		return nil, err
	}
	defer srv.release()
	srv.settle(ctx, doc, changed)
	if srv != a.srv {
		return nil, fmt.Errorf("%s was listed by a %s that has since been restarted, and its edit belongs to that one; nothing was applied: list the actions again with lsp code_actions", a.id, srv.spec.ID)
	}
	res := &FixResult{ID: a.id, Title: s.RelText(a.action.Title), File: a.rel, Server: srv.spec.ID}
	return res, s.apply(ctx, srv, a.action, force, res)
}

// Fix applies a fix of kind to file: organize_imports and fix_all ask the
// server for that source action over the whole file, format for
// textDocument/formatting, or rangeFormatting over lines [from, to] when
// from > 0.
func (s *Supervisor) Fix(ctx context.Context, file pathguard.Path, kind string, from, to int, force bool) (*FixResult, error) {
	if kind != FixFormat && fixKinds[kind] == "" {
		return nil, fmt.Errorf("%w: kind must be organize_imports, fix_all or format, not %q", ErrBadArgument, kind)
	}
	if from > 0 && kind != FixFormat {
		return nil, fmt.Errorf("%w: a line range is for format only; %s works on the whole file", ErrBadArgument, kind)
	}
	path, err := s.checkFile(file)
	if err != nil {
		return nil, err
	}
	srv, doc, changed, err := s.sync(ctx, path)
	if err != nil {
		return nil, err
	}
	defer srv.release()
	srv.settle(ctx, doc, changed)
	rel := s.rel(path)
	res := &FixResult{Kind: kind, File: rel, Server: srv.spec.ID}
	d := newDocument(doc.text)
	if kind == FixFormat {
		return res, s.format(ctx, srv, doc, d, from, to, force, res)
	}
	want := fixKinds[kind]
	if cmd := srv.spec.FixCommands[kind]; cmd != "" {
		// Offered as a command, not a code action: its edit comes back as
		// workspace/applyEdit; none means nothing to change.
		res.Command = cmd
		args, _ := json.Marshal([]string{doc.uri})
		err := s.runCommand(ctx, srv, cmd, args, true, force, res)
		if errors.Is(err, ErrNoEdit) {
			res.Unchanged, res.Files = true, []FileEdit{}
			return res, nil
		}
		return res, err
	}
	params := codeActionParams{TextDocument: textDocumentIdentifier{URI: doc.uri}, Range: wholeRange(d, srv.encoding)}
	if kind == FixAll {
		// A fix-all fixes the diagnostics it is given: have the current ones.
		items, derr := srv.diagnosticsFor(ctx, doc)
		if derr != nil {
			items = srv.storedDiagnostics(doc.uri)
		}
		params.Context.Diagnostics = items
	}
	if params.Context.Diagnostics == nil {
		params.Context.Diagnostics = []lspDiagnostic{}
	}
	params.Context.Only = []string{want}
	var actions []codeActionOrCommand
	if err := srv.call(ctx, "textDocument/codeAction", params, &actions); err != nil {
		return nil, err
	}
	var kinds []string
	for _, a := range actions {
		if a.Disabled == nil && (a.Kind == want || strings.HasPrefix(a.Kind, want+".")) {
			res.Title = s.RelText(a.Title)
			err := s.apply(ctx, srv, a, force, res)
			if errors.Is(err, errEmptyAction) {
				// Offered with nothing in it: nothing to change, as when
				// it is not offered at all.
				res.Unchanged, res.Files, res.Title = true, []FileEdit{}, ""
				return res, nil
			}
			return res, err
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
		res.Unchanged, res.Files = true, []FileEdit{}
		return res, nil
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

// wholeRange is the range of the whole document.
func wholeRange(d *document, enc string) lspRange {
	last := d.lineCount() - 1
	return lspRange{End: position{Line: last, Character: encodedColumn(d.line(last), len(d.line(last)), enc)}}
}

// format asks for the file's (or lines from..to's) formatting edits and
// applies them.
func (s *Supervisor) format(ctx context.Context, srv *server, doc *openDoc, d *document, from, to int, force bool, res *FixResult) error {
	srv.mu.Lock()
	whole, ranged := srv.formatting, srv.rangeFormatting
	srv.mu.Unlock()
	opts := formattingOptions(doc.text)
	var edits []textEdit
	switch {
	case from > 0:
		if to < from {
			to = from
		}
		if from > d.lineCount() {
			return fmt.Errorf("%w: %s has %d lines; line %d is past its end", ErrBadArgument, res.File, d.lineCount(), from)
		}
		if !ranged {
			return fmt.Errorf("%w: %s does not format a line range; call lsp_fix with kind format and no line to format the whole file", ErrNoSuchFix, srv.spec.ID)
		}
		last := min(to, d.lineCount()) - 1
		rng := lspRange{Start: position{Line: from - 1}, End: position{Line: last, Character: encodedColumn(d.line(last), len(d.line(last)), srv.encoding)}}
		params := map[string]any{"textDocument": textDocumentIdentifier{URI: doc.uri}, "range": rng, "options": opts}
		if err := srv.call(ctx, "textDocument/rangeFormatting", params, &edits); err != nil {
			return err
		}
	default:
		if !whole {
			return fmt.Errorf("%w: %s does not format documents (no documentFormattingProvider)%s; nothing was changed", ErrNoSuchFix, srv.spec.ID, srv.spec.formatNote())
		}
		params := map[string]any{"textDocument": textDocumentIdentifier{URI: doc.uri}, "options": opts}
		if err := srv.call(ctx, "textDocument/formatting", params, &edits); err != nil {
			return err
		}
	}
	if len(edits) == 0 {
		res.Unchanged, res.Files = true, []FileEdit{}
		return nil
	}
	return s.applyEdit(ctx, srv, &workspaceEdit{Changes: map[string][]textEdit{doc.uri: edits}}, force, res)
}

// formatNote says what a server without formatting needs, "" when nothing
// is known.
func (spec *ServerSpec) formatNote() string {
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

// apply applies one code action: resolved first when it carries neither
// edit nor command, then its edit, then its command.
func (s *Supervisor) apply(ctx context.Context, srv *server, a codeActionOrCommand, force bool, res *FixResult) error {
	if a.Disabled != nil {
		return fmt.Errorf("%w: %q is disabled: %s", ErrNoSuchFix, a.Title, s.RelText(a.Disabled.Reason))
	}
	name, args := commandOf(a)
	if a.Edit == nil && name == "" && len(a.Data) > 0 {
		srv.mu.Lock()
		canResolve := srv.resolveActions
		srv.mu.Unlock()
		if canResolve {
			var full codeActionOrCommand
			if err := srv.call(ctx, "codeAction/resolve", a, &full); err != nil {
				return err
			}
			a = full
			name, args = commandOf(a)
		}
	}
	if a.Edit == nil && name == "" {
		return fmt.Errorf("%w: %s gave %q neither an edit nor a command; nothing was changed", errEmptyAction, srv.spec.ID, a.Title)
	}
	res.Files = []FileEdit{}
	if a.Edit != nil {
		if err := s.applyEdit(ctx, srv, a.Edit, force, res); err != nil {
			return err
		}
	}
	if name != "" {
		res.Command = name
		return s.runCommand(ctx, srv, name, args, a.Edit == nil, force, res)
	}
	return nil
}

// commandOf reads the command of a CodeAction ({command: {command,
// arguments}}) or of a bare Command ({command: "name", arguments}).
func commandOf(a codeActionOrCommand) (string, json.RawMessage) {
	raw := bytes.TrimSpace(a.Command)
	if len(raw) == 0 || raw[0] == 'n' {
		return "", nil
	}
	if raw[0] == '"' {
		var name string
		_ = json.Unmarshal(raw, &name)
		return name, a.Arguments
	}
	var c struct {
		Command   string          `json:"command"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	}
	_ = json.Unmarshal(raw, &c)
	return c.Command, c.Arguments
}

// applyEdit writes a WorkspaceEdit through the commit plan, all or
// nothing, re-syncs the server and adds what changed to res.
func (s *Supervisor) applyEdit(ctx context.Context, srv *server, we *workspaceEdit, force bool, res *FixResult) error {
	plan, err := s.planEdit(we, srv)
	if err != nil {
		return fmt.Errorf("not applied, no file changed: %w", err)
	}
	if err := s.commitFix(ctx, srv, plan, force, res); err != nil {
		return err
	}
	return s.resyncAfterEdit(ctx, srv, plan)
}

// commitFix writes a plan and records it in res; a plan that changes no
// byte writes nothing.
func (s *Supervisor) commitFix(ctx context.Context, srv *server, plan *editPlan, force bool, res *FixResult) error {
	same := true
	for _, f := range plan.files {
		if f.touched && (f.content != f.diskText || f.exists != f.existedOnDisk || f.from != "") {
			same = false
		}
	}
	if same {
		res.Unchanged = len(res.Files) == 0
		return nil
	}
	notes, err := s.commit(ctx, plan, force)
	if err != nil {
		return fmt.Errorf("not applied: %w", err)
	}
	res.Notes = append(res.Notes, notes...)
	files, edits := s.planFiles(plan)
	res.Files = mergeFileEdits(res.Files, files)
	res.Edits += edits
	res.Unchanged = false
	return nil
}

func mergeFileEdits(a, b []FileEdit) []FileEdit {
	for _, f := range b {
		i := slices.IndexFunc(a, func(g FileEdit) bool { return g.Path == f.Path })
		if i < 0 {
			a = append(a, f)
			continue
		}
		a[i].Edits += f.Edits
	}
	slices.SortFunc(a, func(x, y FileEdit) int { return strings.Compare(x.Path, y.Path) })
	return a
}

// runCommand runs a code action's command with workspace/executeCommand,
// taking the workspace/applyEdit requests the server sends meanwhile
// through the commit plan. The server answers the command only after its
// edit was applied, but a late edit is waited for, up to ApplyEditWait;
// a command that sent none is an error: nothing changed.
func (s *Supervisor) runCommand(ctx context.Context, srv *server, name string, args json.RawMessage, needEdit, force bool, res *FixResult) error {
	got := make(chan struct{}, 1)
	var plans []*editPlan
	var applyErr error
	var mu sync.Mutex
	done := false // set once the results are read: a late edit is refused
	srv.mu.Lock()
	if srv.applier != nil {
		srv.mu.Unlock()
		return fmt.Errorf("%s is running another fix's command; try again when it is done", srv.spec.ID)
	}
	srv.applier = func(we *workspaceEdit) error {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return errors.New("the fix's command had already finished")
		}
		defer func() {
			select {
			case got <- struct{}{}:
			default:
			}
		}()
		plan, err := s.planEdit(we, srv)
		if err == nil {
			err = s.commitFix(ctx, srv, plan, force, res)
		}
		if err != nil {
			applyErr = err
			return err
		}
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
	callErr := srv.call(ctx, "workspace/executeCommand", params, &out)
	mu.Lock()
	n := len(plans)
	mu.Unlock()
	if needEdit && callErr == nil && n == 0 && applyErr == nil {
		t := time.NewTimer(s.cfg.ApplyEditWait)
		select {
		case <-got:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	srv.mu.Lock()
	srv.applier = nil
	srv.mu.Unlock()
	mu.Lock()
	done = true
	mu.Unlock()
	for _, p := range plans {
		if err := s.resyncAfterEdit(ctx, srv, p); err != nil {
			return fmt.Errorf("the fix was applied, but re-syncing %s failed (use reload): %w", srv.spec.ID, err)
		}
	}
	switch {
	case applyErr != nil:
		return fmt.Errorf("%s's command %s sent an edit that was not applied: %w", srv.spec.ID, name, applyErr)
	case callErr != nil:
		if len(plans) > 0 {
			return fmt.Errorf("%s applied an edit, then its command %s failed: %w", srv.spec.ID, name, callErr)
		}
		return callErr
	case needEdit && len(plans) == 0 && len(res.Files) == 0:
		return fmt.Errorf("%w: %s ran the command %s but sent no edit (workspace/applyEdit) within %s of answering; no file was changed",
			ErrNoEdit, srv.spec.ID, name, s.cfg.ApplyEditWait)
	}
	return nil
}
