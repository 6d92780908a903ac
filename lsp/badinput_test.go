package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/framing"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// TestMain lets the test binary double as a fake language server, used only
// for servers that never answer (no real server can be made to hang).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "-fake-lsp=") {
		fakeServer(strings.TrimPrefix(os.Args[1], "-fake-lsp="))
		os.Exit(0)
	}
	if dir := os.Getenv(orphanChildEnv); dir != "" {
		orphanChild(dir)
	}
	// The servers scripts/install.sh installed come first on PATH, for the
	// example as for the tests (which find them with testenv.LookPath).
	testenv.SetupPath()
	os.Exit(m.Run())
}

// fakeServer reads frames and never answers ("silent"), answers only
// initialize ("mute"), or answers initialize and then stops reading its
// input ("deaf"), or publishes as gopls does ("clears", "clears-slowly":
// clearingServer);
// as a probe or a checker it never ends ("hang").
func fakeServer(mode string) {
	if mode == "hang" {
		hang()
	}
	r, w := framing.NewReader(os.Stdin), framing.NewWriter(os.Stdout)
	var handle func(body []byte)
	switch mode {
	case "clears":
		handle = clearingServer(w, 30*time.Millisecond)
	case "clears-slowly":
		handle = clearingServer(w, 2*time.Second)
	}
	for {
		body, err := r.Read()
		if err != nil {
			return
		}
		if handle != nil {
			handle(body)
			continue
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && mode != "silent" && msg.Method == "initialize" {
			if mode == "slowinit" {
				time.Sleep(2 * time.Second) // a cold start, slower than one request may take
			}
			_ = w.Write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"capabilities":{}}}`, msg.ID))
			if mode == "deaf" {
				hang()
			}
		}
	}
}

// hang blocks for good, reading a pipe nothing writes to: a lone select{}
// would be called a deadlock by the runtime, which exits.
func hang() {
	r, w, _ := os.Pipe()
	defer w.Close()
	io.Copy(io.Discard, r)
}

func fakeSpec(t *testing.T, mode string) langserver.Spec {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return langserver.Spec{
		ID: "fake-" + mode, Language: "Fake", Command: []string{exe, "-fake-lsp=" + mode},
		Install: "it is built by the test", RootMarkers: []string{"fake.toml"},
		Extensions: map[string]string{".fake": "fake"},
	}
}

func fakeRoot(t *testing.T) string {
	root := t.TempDir()
	for name, text := range map[string]string{"fake.toml": "", "a.fake": "hello world\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestServerNeverAnswersInitialize(t *testing.T) {
	t.Parallel()
	root := fakeRoot(t)
	sup := NewSupervisor(root, Config{Servers: []langserver.Spec{fakeSpec(t, "silent")}, StartTimeout: time.Second})
	defer sup.Close()
	_, err := sup.Hover(t.Context(), loc(t, sup, filepath.Join(root, "a.fake")), protocol.Place{Line: 1, Symbol: "world"})
	expectErr(t, "hover", err, ErrServerTimeout, "starting fake-silent for .", "did not finish starting (initialize) within 1s")
	if n := len(sup.fleet.running()); n != 0 {
		t.Fatalf("a server that never started is listed as running (%d)", n)
	}
}

// A server slower to answer initialize than one request may take still
// starts: a start is bounded by StartTimeout. (Under load the test binary
// playing a server took over a second, and the start failed saying it had
// waited StartTimeout, 1m0s, after one second.)
func TestSlowInitializeIsBoundedByTheStartTimeout(t *testing.T) {
	t.Parallel()
	root := fakeRoot(t)
	sup := NewSupervisor(root, Config{Servers: []langserver.Spec{fakeSpec(t, "slowinit")}, RequestTimeout: time.Second, StartTimeout: 30 * time.Second})
	defer sup.Close()
	_, err := sup.Hover(t.Context(), loc(t, sup, filepath.Join(root, "a.fake")), protocol.Place{Line: 1, Symbol: "world"})
	expectErr(t, "hover", err, ErrServerTimeout, "fake-slowinit (root .) did not answer on textDocument/hover: no answer within 1s")
}

func TestServerNeverAnswersRequests(t *testing.T) {
	t.Parallel()
	root := fakeRoot(t)
	sup := NewSupervisor(root, Config{Servers: []langserver.Spec{fakeSpec(t, "mute")}, RequestTimeout: time.Second, DiagnosticsWait: time.Second})
	_, err := sup.Hover(t.Context(), loc(t, sup, filepath.Join(root, "a.fake")), protocol.Place{Line: 1, Symbol: "world"})
	expectErr(t, "hover", err, ErrServerTimeout, "fake-mute (root .) did not answer on textDocument/hover: no answer within 1s", "reload")
	// Diagnostics are bounded too.
	_, err = sup.AfterWrite(t.Context(), loc(t, sup, filepath.Join(root, "a.fake")))
	expectErr(t, "after write", err, ErrDiagnosticsTimeout, "fake-mute published no diagnostics for", "within 1s")
	pgids := runningGroups(sup)
	sup.Close()
	expectNoProcesses(t, pgids)
}

// A server that stops reading its input blocks the write of a document
// larger than the pipe holds: the write is bounded, the server stopped,
// and nothing of it is left running.
func TestServerStopsReading(t *testing.T) {
	t.Parallel()
	root := fakeRoot(t)
	big := "hello world\n" + strings.Repeat(strings.Repeat("x", 99)+"\n", 20000) // 2 MB, far over a pipe's buffer
	if err := os.WriteFile(filepath.Join(root, "big.fake"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	sup := NewSupervisor(root, Config{Servers: []langserver.Spec{fakeSpec(t, "deaf")}, RequestTimeout: time.Second})
	defer sup.Close()
	// The call's context has no deadline: only the bound on the write
	// can end it, with this error.
	_, err := sup.Hover(t.Context(), loc(t, sup, filepath.Join(root, "big.fake")), protocol.Place{Line: 1, Symbol: "world"})
	expectErr(t, "hover", err, ErrServerTimeout, "fake-deaf (root .) did not answer on textDocument/didOpen", "it stopped reading its input, so it was stopped")
	var pgids []int
	sup.fleet.mu.Lock()
	for _, e := range sup.fleet.servers {
		if srv := e.Server(); srv != nil {
			pgids = append(pgids, srv.PID())
		}
	}
	sup.fleet.mu.Unlock()
	sup.Close()
	expectNoProcesses(t, pgids)
}

func TestBadArguments(t *testing.T) {
	t.Parallel()
	s := newSession(t, "go", "", Config{})
	main := s.path("main.go")
	ctx := s.ctx

	// A location outside the root cannot be made (the guard refuses it),
	// and one of another root is refused by the supervisor.
	for _, p := range []string{"/etc/hostname", filepath.Join(s.root, "..", "x.go")} {
		if _, err := s.sup.co.Guard().Path(p); !errors.Is(err, pathguard.ErrOutside) {
			t.Errorf("%s: the guard gave %v, want ErrOutside", p, err)
		}
	}
	if err := os.Symlink("/etc/hostname", s.path("link.go")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.sup.co.Guard().Path(s.path("link.go")); err == nil || !strings.Contains(err.Error(), "leads outside the root") {
		t.Errorf("symlink out: %v", err)
	}
	other, err := pathguard.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = s.sup.Definition(ctx, other.RootPath(), protocol.Place{Line: 1, Symbol: "x"})
	expectErr(t, "another root", err, checkout.ErrBadFile, "belongs to another root")
	_, err = s.sup.Definition(ctx, pathguard.Path{}, protocol.Place{Line: 1, Symbol: "x"})
	expectErr(t, "no location", err, checkout.ErrBadFile, "file is required")
	_, err = s.sup.Hover(ctx, s.at("missing.go"), protocol.Place{Line: 1, Symbol: "x"})
	expectErr(t, "missing", err, checkout.ErrBadFile, "missing.go does not exist")
	_, err = s.sup.References(ctx, s.at("shapes"), protocol.Place{Line: 1, Symbol: "x"})
	expectErr(t, "folder", err, checkout.ErrBadFile, "shapes is a folder")
	_, err = s.sup.Diagnostics(ctx, s.at("missing.go"))
	expectErr(t, "diagnostics missing", err, checkout.ErrBadFile, "does not exist")

	var pe *protocol.PositionError
	_, err = s.sup.Definition(ctx, loc(s.t, s.sup, main), protocol.Place{Line: 99, Symbol: "Total"})
	expectErr(t, "line out of range", err, nil, "line 99 is out of range: main.go has 13 lines (lines are 1-based)")
	if !errors.As(err, &pe) {
		t.Errorf("want a *PositionError, got %T", err)
	}
	_, err = s.sup.Definition(ctx, loc(s.t, s.sup, main), protocol.Place{Line: 0, Symbol: "Total"})
	expectErr(t, "line 0", err, nil, "line 0 is out of range")
	_, err = s.sup.Definition(ctx, loc(s.t, s.sup, main), protocol.Place{Line: 12, Symbol: "Totally"})
	expectErr(t, "symbol absent", err, nil, `"Totally" is not on main.go:12, which reads "\tfmt.Println(\"größe 🚀\", shapes.Total(all))"`)
	_, err = s.sup.Hover(ctx, loc(s.t, s.sup, main), protocol.Place{Line: 12, Symbol: ""})
	expectErr(t, "no symbol", err, nil, "symbol is required", "the column is never guessed", `shapes.Total(all)`)
	_, err = s.sup.Rename(ctx, loc(s.t, s.sup, main), protocol.Place{Line: 12, Symbol: "Total"}, " ", false)
	expectErr(t, "rename without name", err, ErrBadArgument, "new_name is required")
	_, err = s.sup.Symbols(ctx, "", pathguard.Path{})
	expectErr(t, "symbols without query or file", err, ErrBadArgument, "query", "file")

	s.write("README.md", "# fixture\n")
	_, err = s.sup.Hover(ctx, s.at("README.md"), protocol.Place{Line: 1, Symbol: "fixture"})
	expectErr(t, "not owned", err, ErrNotOwned, `no server in the table handles ".md" files`)
	diags, err := s.sup.AfterWrite(ctx, s.at("README.md"))
	if diags != nil || err != nil {
		t.Errorf("AfterWrite on a file no server owns: want nil, nil; got %v, %v", diags, err)
	}

	if n := len(s.sup.fleet.running()); n != 0 {
		t.Errorf("bad input started %d servers", n)
	}
}

func TestBinaryMissing(t *testing.T) {
	t.Parallel()
	specs := langserver.Table()
	specs[0].Command = []string{"gopls-not-installed-here"}
	s := newSession(t, "go", "", Config{Servers: specs[:1]})
	main := s.path("main.go")

	row := statusRow(t, s.sup.Status(s.ctx), "gopls")
	if row.State != answer.StateNoBinary || strings.Join(row.MarkerDirs, ",") != "." || row.Program != "gopls-not-installed-here" || row.Binary != "" {
		t.Errorf("status: want the marker found in . and gopls-not-installed-here missing, got %+v", row)
	}
	expectContains(t, "status install", row.Install, "go install golang.org/x/tools/gopls@latest")
	_, err := s.sup.Definition(s.ctx, loc(s.t, s.sup, main), protocol.Place{Line: 12, Symbol: "Total"})
	var ue *UnavailableError
	expectErr(t, "definition", err, ErrUnavailable, "gopls found go.mod but gopls-not-installed-here is not installed: go install golang.org/x/tools/gopls@latest")
	if !errors.As(err, &ue) || ue.File != "main.go" {
		t.Errorf("want an *UnavailableError for main.go, got %#v", err)
	}
	t0 := time.Now()
	diags, err := s.sup.AfterWrite(s.ctx, loc(s.t, s.sup, main))
	if diags != nil || err != nil {
		t.Errorf("AfterWrite without a server: want nil, nil; got %v, %v (after %s)", diags, err, time.Since(t0))
	}
}

// A Python file in a checkout with no Python root marker: the error and
// status name the missing marker, and, when pyright is not installed
// either, the missing binary too. The second table makes sure both halves
// are checked on every machine, whatever is installed.
func TestMarkerMissing(t *testing.T) {
	t.Parallel()
	const markers = "(pyrightconfig.json, pyproject.toml, setup.py, setup.cfg, requirements.txt)"
	noPyright := langserver.Table()
	for i := range noPyright {
		if noPyright[i].ID == "pyright" {
			noPyright[i].Command = []string{"pyright-not-installed-here", "--stdio"}
		}
	}
	for _, c := range []struct {
		name  string
		table []langserver.Spec
	}{{"installed table", nil}, {"pyright missing", noPyright}} {
		t.Run(c.name, func(t *testing.T) {
			s := newSession(t, "go", "", Config{Servers: c.table})
			s.write("tool.py", "print('hi')\n")
			table := c.table
			if table == nil {
				table = langserver.Table()
			}
			i := slices.IndexFunc(table, func(sp langserver.Spec) bool { return sp.ID == "pyright" })
			program := table[i].Command[0]
			_, lookErr := exec.LookPath(program)
			_, err := s.sup.Hover(s.ctx, s.at("tool.py"), protocol.Place{Line: 1, Symbol: "print"})
			row := statusRow(t, s.sup.Status(s.ctx), "pyright")
			if len(row.MarkerDirs) != 0 || strings.Join(row.RootMarkers, ", ") != strings.Trim(markers, "()") {
				t.Errorf("status: want no marker found and the markers named, got %+v", row)
			}
			if lookErr == nil {
				expectErr(t, "hover", err, ErrUnavailable, "pyright is installed", "but no root marker "+markers)
				if row.State != answer.StateNoMarker || row.Binary == "" {
					t.Errorf("status: want %s with the binary named, got %+v", answer.StateNoMarker, row)
				}
				return
			}
			expectErr(t, "hover", err, ErrUnavailable, "pyright needs a root marker "+markers,
				"and "+program+" is not installed (npm install pyright")
			if row.State != answer.StateNoMarkerNoBinary || row.Program != program || row.Binary != "" {
				t.Errorf("status: want %s naming %s, got %+v", answer.StateNoMarkerNoBinary, program, row)
			}
		})
	}
}

// stopAll stops a process and waits until every one of its threads is
// stopped: kill returns before a thread running on another core has taken
// the signal, and a multithreaded server can answer in that window.
func stopAll(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %d: %v", pid, err)
	}
	testenv.WaitFor(t, time.Minute, fmt.Sprintf("every thread of process %d stopped", pid), func() bool {
		stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		running := 0
		for _, st := range stats {
			b, err := os.ReadFile(st)
			if err != nil {
				continue
			}
			// The state follows the command's closing parenthesis.
			if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] != 'T' && b[i+2] != 't' {
				running++
			}
		}
		return len(stats) > 0 && running == 0
	})
}

func TestServerKilledMidRequest(t *testing.T) {
	t.Parallel()
	s := newSession(t, "go", "gopls", Config{})
	// The server is stopped before the request is written and killed after,
	// so it dies with the request in flight and cannot answer first.
	var stopOnce, killOnce sync.Once
	killed := 0
	s.sup.tools.hooks = &testHooks{
		beforeSend: func(srv *server, method string) {
			if method == "textDocument/references" {
				stopOnce.Do(func() { stopAll(t, srv.PID()) })
			}
		},
		requestSent: func(srv *server, method string) {
			if method == "textDocument/references" {
				killOnce.Do(func() {
					killed = srv.PID()
					_ = syscall.Kill(srv.PID(), syscall.SIGKILL)
				})
			}
		},
	}
	shapes := s.path("shapes/shapes.go")
	_, err := s.sup.References(s.ctx, loc(s.t, s.sup, shapes), protocol.Place{Line: 28, Symbol: "Total"})
	expectErr(t, "references", err, ErrServerExited, "gopls (root .) exited on textDocument/references", "signal: killed", "the next call starts a fresh server")
	if killed == 0 {
		t.Fatal("the hook never ran")
	}

	if refs := must(s.sup.References(s.ctx, loc(s.t, s.sup, shapes), protocol.Place{Line: 28, Symbol: "Total"}))(t); refs.Total != 2 {
		t.Errorf("references after crash: want 2, got %d", refs.Total)
	}
	run := s.sup.fleet.running()
	if len(run) != 1 || run[0].PID() == killed {
		t.Fatalf("want one fresh server, got %v (killed pid %d)", run, killed)
	}
	row := statusRow(t, s.sup.Status(s.ctx), "gopls")
	if len(row.Crashes) != 1 || row.Crashes[0].Root != "." || row.Crashes[0].At.IsZero() {
		t.Fatalf("status: want the crash of the server for ., got %+v", row.Crashes)
	}
	expectContains(t, "crash", row.Crashes[0].Error, "gopls (root .) exited", "signal: killed")
}

func TestThousandsOfReferences(t *testing.T) {
	t.Parallel()
	s := newSession(t, "go", "gopls", Config{})
	var b strings.Builder
	b.WriteString("package big\n\nvar Counter int\n\nfunc Bump() {\n")
	for range 3000 {
		b.WriteString("\tCounter++\n")
	}
	b.WriteString("}\n")
	if err := os.MkdirAll(s.path("big"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.write("big/big.go", b.String())
	refs, err := s.sup.References(s.ctx, s.at("big/big.go"), protocol.Place{Line: 3, Symbol: "Counter"})
	if err != nil {
		t.Fatal(err)
	}
	if refs.Total != 3001 || len(refs.Locations) != answer.MaxReferences {
		t.Errorf("want %d of 3001 references, got %d of %d", answer.MaxReferences, len(refs.Locations), refs.Total)
	}
	if refs.Operation != answer.OpReferences || refs.Symbol != "Counter" || refs.File != "big/big.go" || refs.Line != 3 {
		t.Errorf("the result does not say what was asked: %+v", refs)
	}
	if got := locKey(refs.Locations[0]); got != "big/big.go:3:5: var Counter int" {
		t.Errorf("first reference: %q", got)
	}
}

func TestIdleServersAreReaped(t *testing.T) {
	t.Parallel()
	s := newSession(t, "go", "gopls", Config{IdleTimeout: 300 * time.Millisecond})
	must(s.sup.Hover(s.ctx, s.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"}))(t)
	pgids := runningGroups(s.sup)
	// Reaping shuts the server down in the background: wait for its
	// processes to be gone.
	testenv.WaitFor(t, time.Minute, "the idle server reaped", func() bool {
		return len(s.sup.fleet.running()) == 0 && !groupAlive(pgids[0])
	})
	// The next call starts it again.
	must(s.sup.Hover(s.ctx, s.at("main.go"), protocol.Place{Line: 12, Symbol: "Total"}))(t)
}

// clearingServer handles the frames of a fake server ("clears") that
// publishes as gopls does when a change reaches it while it still clears
// the last change's diagnostics (its updateOrphanedFileDiagnostics): for
// each changed version first an empty set labeled with that version, then,
// after delay, the version's own findings (one per line holding ERR) if it
// is still the latest. Like gopls, it publishes an empty set only after one
// with findings, and gopls.diagnose_files publishes what it holds before
// it replies. (A didOpen is published at once.)
func clearingServer(w *framing.Writer, delay time.Duration) func(body []byte) {
	var mu sync.Mutex
	write := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		_ = w.Write([]byte(s))
	}
	shown := false // the last publish held findings
	type held struct {
		version int
		text    string
	}
	docs := map[string]held{}
	publish := func(uri string, version int, text string) {
		var diags []string
		for i, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "ERR") {
				diags = append(diags, fmt.Sprintf(`{"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":3}},"severity":1,"message":"ERR here"}`, i, i))
			}
		}
		mu.Lock()
		was := shown
		shown = len(diags) > 0
		mu.Unlock()
		if was || len(diags) > 0 {
			write(fmt.Sprintf(`{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":%q,"version":%d,"diagnostics":[%s]}}`,
				uri, version, strings.Join(diags, ",")))
		}
	}
	latest := func(uri string) held {
		mu.Lock()
		defer mu.Unlock()
		return docs[uri]
	}
	return func(body []byte) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				TextDocument struct {
					URI     string `json:"uri"`
					Version int    `json:"version"`
					Text    string `json:"text"`
				} `json:"textDocument"`
				ContentChanges []struct {
					Text string `json:"text"`
				} `json:"contentChanges"`
				Command   string `json:"command"`
				Arguments []struct {
					Files []string `json:"Files"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil {
			return
		}
		doc := msg.Params.TextDocument
		switch {
		case msg.Method == "initialize":
			write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"capabilities":{"textDocumentSync":1}}}`, msg.ID))
		case msg.Method == "textDocument/didOpen":
			mu.Lock()
			docs[doc.URI] = held{doc.Version, doc.Text}
			mu.Unlock()
			publish(doc.URI, doc.Version, doc.Text)
		case msg.Method == "textDocument/didChange" && len(msg.Params.ContentChanges) > 0:
			h := held{doc.Version, msg.Params.ContentChanges[len(msg.Params.ContentChanges)-1].Text}
			mu.Lock()
			docs[doc.URI] = h
			mu.Unlock()
			publish(doc.URI, doc.Version, "") // clearing the last change's
			time.AfterFunc(delay, func() {
				if latest(doc.URI) == h {
					publish(doc.URI, h.version, h.text)
				}
			})
		case msg.Method == "workspace/executeCommand" && msg.Params.Command == "gopls.diagnose_files":
			for _, a := range msg.Params.Arguments {
				for _, uri := range a.Files {
					h := latest(uri)
					publish(uri, h.version, h.text)
				}
			}
			write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":null}`, msg.ID))
		case len(msg.ID) > 0:
			write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":null}`, msg.ID))
		}
	}
}

// A server that publishes once per version (PublishesOnce) may still send
// an empty set labeled with a new version before that version's findings:
// gopls does when the change reaches it while it clears the last change's
// diagnostics (seen under load: a write whose error moved four lines down
// was answered "no diagnostics", and the next write was given this one's).
// An empty first publish after one with findings is no answer: the server
// is asked to confirm (gopls.diagnose_files: gopls's row), else the
// publishes are awaited to settle. The findings that follow are the answer,
// and a write that fixed them all is answered empty.
func TestEmptyPublishBeforeTheFindings(t *testing.T) {
	for _, c := range []struct {
		mode    string
		confirm bool
	}{
		{"clears", false},       // the findings come within the settle
		{"clears-slowly", true}, // 2 s later: only the confirmation tells
	} {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			root := fakeRoot(t)
			spec := fakeSpec(t, c.mode)
			spec.PublishesOnce = true
			if c.confirm {
				spec.Confirm = langserver.Table()[0].Confirm // gopls
			}
			sup := NewSupervisor(root, Config{Servers: []langserver.Spec{spec}})
			defer sup.Close()
			path := filepath.Join(root, "a.fake")
			for _, step := range []struct {
				text  string
				lines []int
			}{
				{"hello ERR\n", []int{1}},
				{"hello\n\n\nERR\n", []int{4}}, // the finding moved
				{"hello\n", nil},               // fixed
				{"ERR\nERR\n", []int{1, 2}},
			} {
				if err := os.WriteFile(path, []byte(step.text), 0o644); err != nil {
					t.Fatal(err)
				}
				diags, err := sup.AfterWrite(t.Context(), loc(t, sup, path))
				if err != nil {
					t.Fatal(err)
				}
				var lines []int
				for _, d := range diags {
					lines = append(lines, d.Line)
				}
				if fmt.Sprint(lines) != fmt.Sprint(step.lines) {
					t.Errorf("after writing %q: findings at lines %v, want %v", step.text, lines, step.lines)
				}
			}
		})
	}
}
