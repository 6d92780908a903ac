package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// fixture copies testdata/<name> to a fresh folder (tests edit files) and
// returns its path, symlinks resolved.
func fixture(t testing.TB, name string) string {
	t.Helper()
	dst := t.TempDir()
	if resolved, err := filepath.EvalSymlinks(dst); err == nil {
		dst = resolved
	}
	src := filepath.Join("testdata", name)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(target, ".in") {
			target = strings.TrimSuffix(target, ".in")
			data = []byte(strings.ReplaceAll(string(data), "@DIR@", filepath.Dir(target)))
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// session is one Supervisor on one fixture copy, with Expect helpers.
type session struct {
	t    testing.TB
	root string
	sup  *Supervisor
	ctx  context.Context
}

// newSession requires program (failing or skipping per BUILTIN_TOOLS_REQUIRE)
// and opens a Supervisor on a copy of fixture name.
func newSession(t testing.TB, name string, program string, cfg Config) *session {
	t.Helper()
	if program != "" {
		testenv.LookPath(t, program)
	}
	testenv.SetupPath()
	return openSession(t, fixture(t, name), cfg)
}

// openSession opens a Supervisor with cfg on root, closed when the test
// ends, with a context of three minutes for its calls.
func openSession(t testing.TB, root string, cfg Config) *session {
	sup := NewSupervisor(root, cfg)
	t.Cleanup(func() { sup.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return &session{t: t, root: root, sup: sup, ctx: ctx}
}

func (s *session) path(rel string) string { return filepath.Join(s.root, filepath.FromSlash(rel)) }

func (s *session) write(rel, text string) {
	s.t.Helper()
	if err := os.WriteFile(s.path(rel), []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) read(rel string) string {
	s.t.Helper()
	return testenv.ReadFile(s.t, s.path(rel))
}

// must fails t on an error and returns the result; call it as
// must(s.sup.Definition(...))(t).
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		data, _ := json.MarshalIndent(v, "", "  ")
		t.Logf("result:\n%s", data)
		return v
	}
}

// locKey is a location's fields as "path:line:col: text", so tests can
// ask for a location, or its prefix, in one string.
func locKey(l answer.Location) string {
	return fmt.Sprintf("%s:%d:%d: %s", l.Path, l.Line, l.Column, l.Text)
}

// locKeys is every location of r, one a line.
func locKeys(r *answer.Locations) string {
	var keys []string
	for _, l := range r.Locations {
		keys = append(keys, locKey(l))
	}
	return strings.Join(keys, "\n")
}

// symKeys is every symbol of r, one a line: "line: kind name" indented by
// depth for an outline, "kind name — location" for a workspace search.
func symKeys(r *answer.Symbols) string {
	var keys []string
	for _, s := range r.Symbols {
		if r.File != "" {
			keys = append(keys, fmt.Sprintf("%s%d: %s %s", strings.Repeat("  ", s.Depth), s.Location.Line, s.Kind, s.Name))
		} else {
			keys = append(keys, fmt.Sprintf("%s %s — %s", s.Kind, s.Name, locKey(s.Location)))
		}
	}
	return strings.Join(keys, "\n")
}

// diagKeys is every diagnostic as "rel:line:col: severity: message".
func diagKeys(root string, ds []diag.Diagnostic) string {
	var keys []string
	for _, d := range ds {
		rel, _ := filepath.Rel(root, d.File)
		keys = append(keys, fmt.Sprintf("%s:%d:%d: %s: %s", filepath.ToSlash(rel), d.Line, d.Column, d.Severity, d.Message))
	}
	return strings.Join(keys, "\n")
}

// checkKeys is every checker run of r: "language (dirs): reason" for one
// that did not run, then the output lines of those that did.
func checkKeys(r *answer.CheckReport) string {
	var keys []string
	for _, run := range r.Runs {
		keys = append(keys, fmt.Sprintf("%s (%s): %s", run.Language, strings.Join(run.Dirs, ", "), run.Reason))
		keys = append(keys, run.Output...)
	}
	return strings.Join(keys, "\n")
}

// checkRun returns the run of r for language.
func checkRun(t testing.TB, r *answer.CheckReport, language string) answer.CheckRun {
	t.Helper()
	for _, run := range r.Runs {
		if run.Language == language {
			return run
		}
	}
	t.Fatalf("no checker run for %s in %+v", language, r.Runs)
	return answer.CheckRun{}
}

// statusRow returns the row of st for server id.
func statusRow(t testing.TB, st *answer.Status, id string) answer.ServerStatus {
	t.Helper()
	for _, row := range st.Servers {
		if row.ID == id {
			return row
		}
	}
	t.Fatalf("no status row for %s", id)
	return answer.ServerStatus{}
}

// expectContains fails unless out contains every want.
func expectContains(t testing.TB, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s: want %q in:\n%s", what, w, out)
		}
	}
}

// expectErr fails unless err wraps target and its text has every want.
func expectErr(t testing.TB, what string, err, target error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: want an error (%v), got none", what, target)
	}
	if target != nil && !errors.Is(err, target) {
		t.Errorf("%s: want errors.Is(err, %v); err = %v", what, target, err)
	}
	expectContains(t, what+" error", err.Error(), wants...)
}

// runningGroups returns the process groups of the supervisor's servers.
func runningGroups(sup *Supervisor) []int {
	var out []int
	for _, srv := range sup.fleet.running() {
		out = append(out, srv.PID())
	}
	return out
}

// expectNoProcesses fails if any process of the groups is still running
// after Close (a group was sent SIGKILL, and the kernel takes a moment to
// end its members).
func expectNoProcesses(t testing.TB, pgids []int) {
	t.Helper()
	if len(pgids) == 0 {
		t.Fatal("no server was running; nothing to check")
	}
	for _, g := range pgids {
		if !testenv.Until(time.Minute, func() bool { return !groupAlive(g) }) {
			t.Errorf("process group %d still has running processes after Close", g)
		}
	}
}

// at is rel's location in the session's root, from the supervisor's guard.
func (s *session) at(rel string) pathguard.Path { return loc(s.t, s.sup, s.path(rel)) }

// loc is p's location from sup's guard; a path the guard refuses fails t
// (a test of a refusal asks the guard itself).
func loc(t testing.TB, sup *Supervisor, p string) pathguard.Path {
	t.Helper()
	at, err := sup.co.Guard().Path(p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return at
}
