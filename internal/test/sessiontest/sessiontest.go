// Package sessiontest checks tool output as session transcripts: a txtar
// archive holds the files of a checkout and a script of calls with the
// output each gave, and the script is replayed against a fresh run in
// process and over stdio (the real command), which must both give the
// golden output. With -update the in-process replay rewrites the outputs,
// for review as a diff.
//
// Archive layout:
//
//	-- root/notes.txt --           a file of the checkout (under root/)
//	buy milk
//	-- session --
//	> read {"path": "notes.txt"}   a call: tool and JSON arguments
//	     1	buy milk               its text output, to the next call
//	>> [plan] edit {...}           >> also shows structuredContent;
//	                               [mode] calls in plan or readonly mode
//
// An error result's output starts with "error: ". The run's root is shown
// as $ROOT.
package sessiontest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/rogpeppe/go-internal/txtar"
)

// Config is the one declaration of what a session's runs have: the
// in-process run is made from it by Options.NewRun, and the stdio replay
// turns it into the command's flags, so the two cannot disagree. Both
// replays have no ask port, no run-time grammar folder and no code-graph
// snapshot.
type Config struct {
	// Without names the families left out (builtintools' family names).
	Without []string
	// Conversation is the run's conversation id ("" for a fresh one).
	Conversation string
}

// Flags are the `builtin-tools serve` flags that give c, besides --root
// and --mode.
func (c Config) Flags() []string {
	f := []string{"--ask", "none", "--grammars", "", "--graph-cache", ""}
	if len(c.Without) > 0 {
		f = append(f, "--without", strings.Join(c.Without, ","))
	}
	if c.Conversation != "" {
		f = append(f, "--conversation", c.Conversation)
	}
	return f
}

// Options configure the runs a session is replayed against.
type Options struct {
	Config Config
	// NewRun makes the in-process run over root as c says (the harness
	// knows no family: the test links what it needs).
	NewRun func(root string, c Config) (*registry.Run, error)
	// Update rewrites the outputs from the in-process replay.
	Update bool
	// Scrub replaces, in order, what changes from run to run (a time left,
	// a duration) before outputs are compared.
	Scrub []Scrub
}

// Scrub is one replacement: every match of Pattern becomes Replace.
type Scrub struct {
	Pattern, Replace string
}

type step struct {
	mode       tiers.Mode
	tool       string
	args       string
	structured bool
	want       string
}

// Run replays every *.txtar under dir.
func Run(t *testing.T, dir string, opts Options) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no sessions under %s: %v", dir, err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			replay(t, path, opts)
		})
	}
}

func replay(t *testing.T, path string, opts Options) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var script []byte
	for _, f := range ar.Files {
		if f.Name == "session" {
			script = f.Data
		}
	}
	scrubbers := compileScrub(opts.Scrub)
	steps, err := parse(script)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	drivers := []struct {
		name    string
		connect func(t *testing.T, root string, mode tiers.Mode) peer
	}{
		{"inprocess", func(t *testing.T, root string, mode tiers.Mode) peer { return inProcess(t, root, mode, opts) }},
		{"stdio", func(t *testing.T, root string, mode tiers.Mode) peer { return overStdio(t, root, mode, opts) }},
	}
	for i, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			root := checkout(t, ar)
			peers := map[tiers.Mode]peer{}
			defer func() {
				for _, p := range peers {
					p.close()
				}
			}()
			var got []string
			for _, s := range steps {
				p, ok := peers[s.mode]
				if !ok {
					p = d.connect(t, root, s.mode)
					peers[s.mode] = p
				}
				got = append(got, scrub(render(t, p, root, s), scrubbers))
			}
			if opts.Update && i == 0 {
				write(t, path, ar, steps, got)
				for j := range steps {
					steps[j].want = got[j] // the other drivers check the new output
				}
				return
			}
			for j, s := range steps {
				if got[j] != s.want {
					t.Errorf("%s: > %s %s\n--- got ---\n%s\n--- want ---\n%s", filepath.Base(path), s.tool, s.args, got[j], s.want)
				}
			}
		})
	}
}

func parse(script []byte) ([]step, error) {
	var steps []step
	sc := bufio.NewScanner(bytes.NewReader(script))
	sc.Buffer(nil, 1<<20)
	var out []string
	flush := func() {
		if len(steps) > 0 {
			steps[len(steps)-1].want = strings.TrimRight(strings.Join(out, "\n"), "\n")
		}
		out = nil
	}
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "> ") && !strings.HasPrefix(line, ">> ") {
			if len(steps) == 0 {
				if strings.TrimSpace(line) != "" {
					return nil, fmt.Errorf("output %q before the first call", line)
				}
				continue
			}
			out = append(out, line)
			continue
		}
		flush()
		s := step{mode: tiers.Normal, structured: strings.HasPrefix(line, ">> ")}
		rest := strings.TrimSpace(strings.TrimLeft(line, ">"))
		if strings.HasPrefix(rest, "[") {
			m, r, ok := strings.Cut(rest[1:], "]")
			if !ok {
				return nil, fmt.Errorf("call %q: mode without ]", line)
			}
			mode, err := tiers.ParseMode(m)
			if err != nil {
				return nil, err
			}
			s.mode, rest = mode, strings.TrimSpace(r)
		}
		s.tool, s.args, _ = strings.Cut(rest, " ")
		if s.args = strings.TrimSpace(s.args); s.args == "" {
			s.args = "{}"
		}
		if !json.Valid([]byte(s.args)) {
			return nil, fmt.Errorf("call %q: arguments are not JSON", line)
		}
		steps = append(steps, s)
	}
	flush()
	return steps, sc.Err()
}

func checkout(t *testing.T, ar *txtar.Archive) string {
	root := t.TempDir()
	for _, f := range ar.Files {
		name, ok := strings.CutPrefix(f.Name, "root/")
		if !ok {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The golden output names the root as the run resolves it.
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

func render(t *testing.T, p peer, root string, s step) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var args map[string]any
	json.Unmarshal([]byte(s.args), &args)
	res, err := p.call(ctx, s.tool, args)
	var out string
	switch {
	case err != nil:
		out = "protocol error: " + err.Error()
	case res.IsError:
		out = "error: " + registry.ResultText(res)
	default:
		out = strings.TrimRight(registry.ResultText(res), "\n")
		if s.structured {
			b, err := json.Marshal(res.StructuredContent)
			if err != nil {
				t.Fatal(err)
			}
			out += "\nstructured: " + string(b)
		}
	}
	return strings.TrimRight(strings.ReplaceAll(out, root, "$ROOT"), "\n")
}

type scrubber struct {
	re   *regexp.Regexp
	repl string
}

func compileScrub(list []Scrub) []scrubber {
	out := make([]scrubber, 0, len(list))
	for _, sc := range list {
		out = append(out, scrubber{regexp.MustCompile(sc.Pattern), sc.Replace})
	}
	return out
}

func scrub(s string, scrubbers []scrubber) string {
	for _, sc := range scrubbers {
		s = sc.re.ReplaceAllString(s, sc.repl)
	}
	return s
}

func write(t *testing.T, path string, ar *txtar.Archive, steps []step, got []string) {
	var b strings.Builder
	for i, s := range steps {
		b.WriteString(">")
		if s.structured {
			b.WriteString(">")
		}
		b.WriteString(" ")
		if s.mode != tiers.Normal {
			fmt.Fprintf(&b, "[%s] ", s.mode)
		}
		fmt.Fprintf(&b, "%s %s\n%s\n", s.tool, s.args, got[i])
	}
	for i, f := range ar.Files {
		if f.Name == "session" {
			ar.Files[i].Data = []byte(b.String())
		}
	}
	if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
}

type peer struct {
	c     client.MCPClient
	close func()
}

func (p peer) call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return p.c.CallTool(ctx, req)
}

func inProcess(t *testing.T, root string, mode tiers.Mode, opts Options) peer {
	run, err := opts.NewRun(root, opts.Config)
	if err != nil {
		t.Fatal(err)
	}
	c, err := run.Client(context.Background(), mode)
	if err != nil {
		run.Close()
		t.Fatal(err)
	}
	return peer{c, func() { c.Close(); run.Close() }}
}

func overStdio(t *testing.T, root string, mode tiers.Mode, opts Options) peer {
	bin := testenv.Command(t)
	args := append([]string{"serve", "--root", root, "--mode", string(mode)}, opts.Config.Flags()...)
	c, err := client.NewStdioMCPClient(bin, os.Environ(), args...)
	if err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "sessiontest", Version: "1"}
	if _, err := c.Initialize(context.Background(), init); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return peer{c, func() { c.Close() }}
}
