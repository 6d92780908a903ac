// Package conformance is a suite a harness runs against its own peer of a
// builtin-tools run, and that this module runs against itself over the
// in-process pipe and over stdio (CONF-1). It checks, per mode, the exact
// tools listed; that hidden tools are refused by name; that annotations
// agree with tiers; that every input schema is a valid JSON Schema object
// with described properties and real required fields; that resource-bound
// tools appear only when their resource is attached; that tools which
// must explain themselves (lsp, debug) do so when nothing can run; and,
// for a target that can turn vibe mode on, that a worker started from a
// plan or readonly call runs in that mode (the vibe tools are read tier,
// so the gate is the worker's).
//
// What each tool is (tier, needed resource) comes from the families'
// descriptors; what is expected is data (a txtar file, see
// testdata/tools.txtar): the golden list per mode, and calls that must
// succeed. Adding a tool changes the golden lists, which -update rewrites for
// review.
package conformance

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/toolschema"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ToolSpec is what a descriptor says of one tool.
type ToolSpec struct {
	Name string
	Tier tiers.Tier
	// Needs is the resource (and family) the tool needs, "" for none.
	Needs string
}

// Explain is a call that must succeed even when nothing behind the tool can
// run, and whose text must contain Want.
type Explain struct {
	Tool string
	Args map[string]any
	Want string
}

// Call is a sample call of one tool, for the checks that call every tool.
type Call struct {
	Tool string
	Args map[string]any
}

// Expectations are the catalog and the parsed data file.
type Expectations struct {
	Tools   map[string]ToolSpec
	Golden  map[tiers.Mode][]string
	Explain []Explain
	// Calls are one sample call per tool (section "calls": "tool {json}"),
	// made in a checkout of the files under "root/".
	Calls    []Call
	Files    map[string][]byte
	path     string
	archive  *txtar.Archive
	writable bool
}

//go:embed testdata/tools.txtar
var builtinData []byte

// Builtin returns the expectations for this module's own families (pass
// builtintools.Families()), for a harness that links builtintools and runs
// the suite against its own peer.
func Builtin(families []registry.Extension) (*Expectations, error) {
	return parse("conformance/testdata/tools.txtar (embedded)", txtar.Parse(builtinData), families)
}

// Load reads expectations for families from a txtar file with one golden
// section per mode ("normal", "plan", "readonly": tool names, one a line)
// and an optional "explain" section (lines "tool {json args} => wanted
// text").
func Load(path string, families []registry.Extension) (*Expectations, error) {
	a, err := txtar.ParseFile(path)
	if err != nil {
		return nil, err
	}
	e, err := parse(path, a, families)
	if err != nil {
		return nil, err
	}
	e.writable = true
	return e, nil
}

func parse(path string, a *txtar.Archive, families []registry.Extension) (*Expectations, error) {
	e := &Expectations{Tools: map[string]ToolSpec{}, Golden: map[tiers.Mode][]string{}, Files: map[string][]byte{}, path: path, archive: a}
	for _, f := range families {
		for _, d := range f.Descriptors() {
			e.Tools[d.Name] = ToolSpec{Name: d.Name, Tier: d.Tier, Needs: d.Needs()}
		}
	}
	for _, f := range a.Files {
		if name, ok := strings.CutPrefix(f.Name, "root/"); ok {
			e.Files[name] = f.Data
			continue
		}
		lines := dataLines(f.Data)
		switch f.Name {
		case "calls":
			for _, l := range lines {
				tool, args, _ := strings.Cut(l, " ")
				var m map[string]any
				if err := json.Unmarshal([]byte(strings.TrimSpace(args)), &m); err != nil {
					return nil, fmt.Errorf("%s: calls line %q: %v", path, l, err)
				}
				e.Calls = append(e.Calls, Call{Tool: tool, Args: m})
			}
		case "explain":
			for _, l := range lines {
				tool, rest, _ := strings.Cut(l, " ")
				args, want, ok := strings.Cut(rest, "=>")
				if !ok {
					return nil, fmt.Errorf("%s: explain line %q: want 'tool {args} => text'", path, l)
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(strings.TrimSpace(args)), &m); err != nil {
					return nil, fmt.Errorf("%s: explain line %q: %v", path, l, err)
				}
				e.Explain = append(e.Explain, Explain{Tool: tool, Args: m, Want: strings.TrimSpace(want)})
			}
		default:
			mode, err := tiers.ParseMode(f.Name)
			if err != nil {
				return nil, fmt.Errorf("%s: unknown section %q", path, f.Name)
			}
			e.Golden[mode] = lines
		}
	}
	return e, nil
}

func dataLines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// Resources lists every resource (family) some catalog tool needs, sorted.
func (e *Expectations) Resources() []string {
	seen := map[string]bool{}
	for _, s := range e.Tools {
		if s.Needs != "" {
			seen[s.Needs] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Peer is what the suite drives: an MCP client connected to one run.
type Peer interface {
	ListTools(ctx context.Context) ([]mcp.Tool, error)
	// CallTool returns a protocol error as err and a tool error as a result
	// with IsError.
	CallTool(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error)
	Close() error
}

// Target says how to reach a harness's peer.
type Target struct {
	Name string
	// Connect opens a peer in mode over a fresh run that has every family
	// opened except those listed in without.
	Connect func(t *testing.T, mode tiers.Mode, without []string) Peer
	// Update makes Run rewrite the golden sections of the data file from
	// what the target lists instead of comparing.
	Update bool
	// Vibe, when set, opens a peer in mode over a fresh run over root with
	// vibe mode on, whose worker commands are commands (keyed as
	// vibetool.Config.Commands: "fast" for normal mode, "fast@plan",
	// "fast@readonly"). The vibe tools are read tier, so plan and readonly
	// see them and the gate is the worker's: the suite checks that a worker
	// started from each mode runs in that mode (VIBE_MODE) under the run's
	// policy (VIBE_APPROVE), and that a plan or readonly spawn whose tier
	// has no command for its mode is refused.
	Vibe func(t *testing.T, mode tiers.Mode, root string, commands map[string]string) Peer
	// Budget, when set, opens a normal-mode peer over a fresh run over root
	// whose output budget is budget characters: the suite makes every
	// sample call there (Expectations.Calls) and checks each result is
	// valid and within the budget.
	Budget func(t *testing.T, root string, budget int) Peer
}

// ClientPeer adapts an initialized mcp-go client.
func ClientPeer(c client.MCPClient) Peer { return clientPeer{c} }

type clientPeer struct{ c client.MCPClient }

func (p clientPeer) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	var all []mcp.Tool
	req := mcp.ListToolsRequest{}
	for {
		res, err := p.c.ListTools(ctx, req)
		if err != nil {
			return nil, err
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			return all, nil
		}
		req.Params.Cursor = res.NextCursor
	}
}

func (p clientPeer) CallTool(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return p.c.CallTool(ctx, req)
}

func (p clientPeer) Close() error { return p.c.Close() }

// strictPeer checks every result it returns as a strict client does
// (toolschema.CheckResult): a result whose structured content does not fit
// its tool's output schema is a failure, with the path into it.
type strictPeer struct {
	Peer
	t     *testing.T
	tools map[string]mcp.Tool
}

func strict(t *testing.T, p Peer) Peer { return &strictPeer{Peer: p, t: t} }

func (p *strictPeer) CallTool(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	res, err := p.Peer.CallTool(ctx, name, args)
	if err != nil || res == nil {
		return res, err
	}
	if p.tools == nil {
		list, lerr := p.Peer.ListTools(ctx)
		if lerr != nil {
			p.t.Errorf("tools/list to check %s's result: %v", name, lerr)
			return res, err
		}
		p.tools = map[string]mcp.Tool{}
		for _, tool := range list {
			p.tools[tool.Name] = tool
		}
	}
	if tool, ok := p.tools[name]; ok {
		if cerr := toolschema.CheckResult(tool, res); cerr != nil {
			p.t.Errorf("%s %v: a strict client would throw this result away: %v", name, args, cerr)
		}
	}
	return res, err
}

// Run checks target against e.
func Run(t *testing.T, target Target, e *Expectations) {
	t.Helper()
	listed := map[tiers.Mode][]mcp.Tool{}
	for _, mode := range tiers.Modes {
		t.Run(target.Name+"/"+string(mode), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p := strict(t, target.Connect(t, mode, nil))
			defer p.Close()
			tools, err := p.ListTools(ctx)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			listed[mode] = tools
			checkListed(t, e, mode, tools, target.Update)
			for _, tool := range tools {
				checkAnnotations(t, e, tool)
				checkSchema(t, tool)
			}
			checkHiddenRefused(ctx, t, e, mode, p, tools)
		})
	}
	if target.Update {
		if err := e.writeGolden(listed); err != nil {
			t.Fatal(err)
		}
	}
	for _, kind := range e.Resources() {
		t.Run(target.Name+"/without-"+kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p := target.Connect(t, tiers.Normal, []string{kind})
			defer p.Close()
			tools, err := p.ListTools(ctx)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			names := toolNames(tools)
			for _, want := range e.Golden[tiers.Normal] {
				needs := e.Tools[want].Needs == kind
				has := slices.Contains(names, want)
				if needs && has {
					t.Errorf("%s is listed although its resource %s is not attached (REG-2)", want, kind)
				}
				if !needs && !has {
					t.Errorf("%s is missing when only %s is detached; it does not need it", want, kind)
				}
			}
		})
	}
	if target.Vibe != nil {
		t.Run(target.Name+"/vibe-modes", func(t *testing.T) { checkVibeModes(t, target) })
	}
	if target.Budget != nil && len(e.Calls) > 0 {
		t.Run(target.Name+"/tiny-budget", func(t *testing.T) { checkTinyBudget(t, target, e) })
	}
	if len(e.Explain) > 0 {
		t.Run(target.Name+"/explain", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			p := strict(t, target.Connect(t, tiers.Normal, nil))
			defer p.Close()
			for _, x := range e.Explain {
				res, err := p.CallTool(ctx, x.Tool, x.Args)
				if err != nil {
					t.Errorf("%s %v: %v", x.Tool, x.Args, err)
					continue
				}
				text := registry.ResultText(res)
				if res.IsError || !strings.Contains(text, x.Want) {
					t.Errorf("%s %v should explain itself with %q, got (error=%v) %q", x.Tool, x.Args, x.Want, res.IsError, text)
				}
			}
		})
	}
}

func toolNames(tools []mcp.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return names
}

func checkListed(t *testing.T, e *Expectations, mode tiers.Mode, tools []mcp.Tool, update bool) {
	t.Helper()
	got := toolNames(tools)
	if update {
		return
	}
	want := slices.Clone(e.Golden[mode])
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s mode lists %v, golden says %v (run with -update to accept)", mode, got, want)
	}
	for _, name := range got {
		spec, ok := e.Tools[name]
		if !ok {
			t.Errorf("%s is listed but no family of the run declares it", name)
			continue
		}
		if !mode.Sees(spec.Tier) {
			t.Errorf("%s (tier %s) is listed in %s mode, which must not see it (REG-5)", name, spec.Tier, mode)
		}
	}
}

func checkAnnotations(t *testing.T, e *Expectations, tool mcp.Tool) {
	t.Helper()
	spec, ok := e.Tools[tool.Name]
	if !ok {
		return
	}
	if err := registry.CheckAnnotations(spec.Tier, tool.Annotations); err != nil {
		t.Errorf("%s: annotations disagree with tier %s: %v (REG-6)", tool.Name, spec.Tier, err)
	}
	if tool.Meta != nil {
		if tier, ok := tool.Meta.AdditionalFields[registry.MetaTier]; ok && tier != string(spec.Tier) {
			t.Errorf("%s: _meta tier %v, catalog says %s", tool.Name, tier, spec.Tier)
		}
	}
	if strings.TrimSpace(tool.Description) == "" {
		t.Errorf("%s has no description", tool.Name)
	}
	// A tool that starts or drives a process (exec) reaches past the root:
	// openWorldHint says so. The vibe_* tools start workers too, but the
	// seed keeps them in the read tier (the gate is the worker's own).
	open := tool.Annotations.OpenWorldHint != nil && *tool.Annotations.OpenWorldHint
	switch {
	case spec.Tier == tiers.Exec && !open:
		t.Errorf("%s is an exec tool without openWorldHint: true", tool.Name)
	case open && spec.Tier != tiers.Exec && !strings.HasPrefix(tool.Name, "vibe_"):
		t.Errorf("%s says openWorldHint: true but is a %s tool; a tool that reaches past the root runs code (exec)", tool.Name, spec.Tier)
	}
}

func checkSchema(t *testing.T, tool mcp.Tool) {
	t.Helper()
	raw, err := json.Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		InputSchema  map[string]any `json:"inputSchema"`
		OutputSchema map[string]any `json:"outputSchema"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		t.Fatal(err)
	}
	// REG-12: every tool says the shape of its structuredContent.
	if wire.OutputSchema["type"] != "object" {
		t.Errorf("%s: output schema is %v, want an object schema (REG-12)", tool.Name, wire.OutputSchema)
	} else {
		ob, _ := json.Marshal(wire.OutputSchema)
		odoc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(ob))
		oc := jsonschema.NewCompiler()
		if err := oc.AddResource("output.json", odoc); err != nil {
			t.Errorf("%s: output schema: %v", tool.Name, err)
		} else if _, err := oc.Compile("output.json"); err != nil {
			t.Errorf("%s: output schema is not a valid JSON Schema: %v", tool.Name, err)
		}
	}
	s := wire.InputSchema
	if s["type"] != "object" {
		t.Errorf("%s: input schema type is %v, want object (REG-6)", tool.Name, s["type"])
		return
	}
	b, _ := json.Marshal(s)
	doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Errorf("%s: %v", tool.Name, err)
		return
	}
	if _, err := c.Compile("schema.json"); err != nil {
		t.Errorf("%s: input schema is not a valid JSON Schema: %v", tool.Name, err)
	}
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		pm, _ := p.(map[string]any)
		if d, _ := pm["description"].(string); strings.TrimSpace(d) == "" {
			t.Errorf("%s: argument %q has no description", tool.Name, name)
		}
	}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if _, ok := props[fmt.Sprint(r)]; !ok {
				t.Errorf("%s: required argument %v is not a property", tool.Name, r)
			}
		}
	}
}

// checkHiddenRefused calls, by name, every catalog tool of a tier the mode
// does not see; each call must be refused with a message naming the mode.
func checkHiddenRefused(ctx context.Context, t *testing.T, e *Expectations, mode tiers.Mode, p Peer, tools []mcp.Tool) {
	t.Helper()
	listed := toolNames(tools)
	for _, spec := range e.Tools {
		if mode.Sees(spec.Tier) || slices.Contains(listed, spec.Name) {
			continue
		}
		res, err := p.CallTool(ctx, spec.Name, map[string]any{})
		var text string
		switch {
		case err != nil:
			text = err.Error()
		case res.IsError:
			text = registry.ResultText(res)
		default:
			t.Errorf("%s mode ran hidden tool %s: %s (REG-5)", mode, spec.Name, registry.ResultText(res))
			continue
		}
		if !strings.Contains(text, string(mode)+" mode") {
			t.Errorf("%s mode refused %s without saying why: %q", mode, spec.Name, text)
		}
	}
}

// writeGolden rewrites the mode sections of the data file from listed.
func (e *Expectations) writeGolden(listed map[tiers.Mode][]mcp.Tool) error {
	if !e.writable {
		return fmt.Errorf("conformance: %s is embedded; load the file with Load to update it", e.path)
	}
	for i, f := range e.archive.Files {
		if mode, err := tiers.ParseMode(f.Name); err == nil {
			if tools, ok := listed[mode]; ok {
				e.archive.Files[i].Data = []byte(strings.Join(toolNames(tools), "\n") + "\n")
			}
		}
	}
	return os.WriteFile(e.path, txtar.Format(e.archive), 0o644)
}

// vibeReport is a worker command that reports the mode and policy it was
// started with as its result.
const vibeReport = `printf '{"result":"mode=%s approve=%s"}\n' "$VIBE_MODE" "$VIBE_APPROVE"`

// checkVibeModes starts a worker from each mode and reads the mode it ran
// in; then, with a command for normal mode only, a spawn from plan and
// readonly must be refused.
func checkVibeModes(t *testing.T, target Target) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("the vibe rule needs git (a plan or readonly worker runs in a worktree): %v", err)
	}
	root := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=conformance", "-c", "user.email=conformance@localhost", "commit", "-q", "--allow-empty", "-m", "start"}} {
		if out, err := proc.Output(context.Background(), exec.Command("git", append([]string{"-C", root}, args...)...)); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	every := map[string]string{"fast": vibeReport, "fast@plan": vibeReport, "fast@readonly": vibeReport}
	for _, mode := range tiers.Modes {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		p := strict(t, target.Vibe(t, mode, root, every))
		res, err := p.CallTool(ctx, "vibe_spawn", map[string]any{"brief": "report the mode you run in", "label": "mode"})
		id := ""
		if err == nil && !res.IsError {
			id = workerID(res)
		}
		if id == "" {
			t.Errorf("%s mode: vibe_spawn with a command for every mode failed: %v %s", mode, err, resultText(res))
			p.Close()
			cancel()
			continue
		}
		res, err = p.CallTool(ctx, "vibe_wait", map[string]any{"worker_ids": []string{id}, "timeout_seconds": 60})
		text := resultText(res)
		if err != nil || !strings.Contains(text, "mode="+string(mode)+" approve=write=") {
			t.Errorf("a worker started from %s mode did not run in it (VIBE_MODE, VIBE_APPROVE): %v %s", mode, err, text)
		}
		p.Close()
		cancel()
	}
	for _, mode := range []tiers.Mode{tiers.Plan, tiers.ReadOnly} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		p := strict(t, target.Vibe(t, mode, root, map[string]string{"fast": vibeReport}))
		res, err := p.CallTool(ctx, "vibe_spawn", map[string]any{"brief": "report the mode you run in", "label": "mode"})
		if err == nil && !res.IsError {
			t.Errorf("%s mode started a worker whose command is for normal mode only: %s", mode, resultText(res))
		} else if err == nil && !strings.Contains(resultText(res), "fast@"+string(mode)) {
			t.Errorf("%s mode refused a spawn without saying how to configure a command for it: %s", mode, resultText(res))
		}
		p.Close()
		cancel()
	}
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return registry.ResultText(res)
}

// workerID reads the spawned worker's id from a vibe_spawn result.
func workerID(res *mcp.CallToolResult) string {
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return ""
	}
	var sc struct {
		Worker struct {
			ID string `json:"id"`
		} `json:"worker"`
	}
	json.Unmarshal(raw, &sc)
	return sc.Worker.ID
}

// tinyBudget is the output budget the suite gives every tool once.
const tinyBudget = 200

// checkTinyBudget makes every sample call with an output budget of 200
// characters: each must answer with a result, not a protocol error or a
// crash; its text must fit the budget (the registry's own cut note aside)
// and its structured content a bound in proportion; that content must fit
// its output schema. Every tool the normal
// mode lists needs a sample call.
func checkTinyBudget(t *testing.T, target Target, e *Expectations) {
	root := t.TempDir()
	for name, data := range e.Files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sampled := map[string]bool{}
	for _, c := range e.Calls {
		sampled[c.Tool] = true
	}
	for _, name := range e.Golden[tiers.Normal] {
		if !sampled[name] {
			t.Errorf("%s has no sample call in the calls section of %s", name, e.path)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := strict(t, target.Budget(t, root, tinyBudget))
	defer p.Close()
	for _, c := range e.Calls {
		res, err := p.CallTool(ctx, c.Tool, c.Args)
		if err != nil {
			t.Errorf("%s %v with a budget of %d: protocol error %v", c.Tool, c.Args, tinyBudget, err)
			continue
		}
		text := registry.ResultText(res)
		if strings.Contains(text, "internal error") || strings.Contains(text, "this is a bug in builtin-tools") {
			t.Errorf("%s %v with a budget of %d: %s", c.Tool, c.Args, tinyBudget, text)
			continue
		}
		body := text
		if i := strings.LastIndex(body, "[cut: this result has"); i >= 0 {
			body = body[:i]
		}
		if n := utf8.RuneCountInString(strings.TrimSpace(body)); n > tinyBudget+2 {
			t.Errorf("%s %v: %d characters of text with a budget of %d", c.Tool, c.Args, n, tinyBudget)
		}
		// Structured content has the same budget (REG-12): a generous bound,
		// so a tool that sends a whole value past its text is caught.
		structured, _ := json.Marshal(res.StructuredContent)
		t.Logf("%s: %d characters of text (cut by the registry: %v), %d bytes structured", c.Tool, utf8.RuneCountInString(text),
			strings.Contains(text, "[cut: this result"), len(structured))
		if limit := 20*tinyBudget + 4096; len(structured) > limit {
			t.Errorf("%s %v: %d bytes of structured content with a budget of %d characters (at most %d)", c.Tool, c.Args, len(structured), tinyBudget, limit)
		}
	}
}
