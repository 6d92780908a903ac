package evaltool_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/eval/evaltool"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

const python = "/usr/bin/python3"

type msg struct {
	Msg string `json:"msg"`
}

func (m msg) Text() string { return m.Msg }

type noParams struct{}

// slow is a tool that takes a while, standing in for a worker a cell waits
// on.
var slow = registry.Family[registry.None]{Key: registry.NewKey[registry.None]("slow"), Tools: []registry.Descriptor{{
	Name: "slow", Tier: tiers.Read, Description: "takes a second",
	Handler: registry.Func(func(ctx context.Context, c *registry.Call, p noParams) (msg, error) {
		select {
		case <-time.After(time.Second):
			return msg{"done"}, nil
		case <-ctx.Done():
			return msg{}, ctx.Err()
		}
	}),
}}}

func newRun(t *testing.T, cfg eval.Config) *registry.Run {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		testenv.Missing(t, python, "not installed")
	}
	cfg.Python = python
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("buy milk\n"), 0o644)
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp", "structural"},
		Settings: map[string]any{"eval": cfg}, Families: []registry.Extension{slow, block}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// call runs code as a cell in language ("" is Python) in r.
func call(t *testing.T, r *registry.Run, mode tiers.Mode, language, code string) *mcp.CallToolResult {
	t.Helper()
	a := map[string]any{"code": code, "description": "a step of the test at hand"}
	if language != "" {
		a["language"] = language
	}
	args, _ := json.Marshal(a)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Call(ctx, mode, "eval", args)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func cell(t *testing.T, r *registry.Run, mode tiers.Mode, code string) (*mcp.CallToolResult, string) {
	t.Helper()
	res := call(t, r, mode, "", code)
	return res, registry.ResultText(res)
}

func want(t *testing.T, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Fatalf("missing %q in:\n%s", s, text)
		}
	}
}

// wantNot fails when text holds sub; why says what that means.
func wantNot(t *testing.T, text, sub, why string) {
	t.Helper()
	if strings.Contains(text, sub) {
		t.Fatalf("%s:\n%s", why, text)
	}
}

// check is a cell and what its text must contain.
type check struct {
	code string
	want []string
}

// cells runs each check's cell in turn in r, in normal mode and language
// ("" is Python), and fails at the first whose text lacks what it wants.
func cells(t *testing.T, r *registry.Run, language string, checks ...check) {
	t.Helper()
	for _, c := range checks {
		text := registry.ResultText(call(t, r, tiers.Normal, language, c.code))
		for _, s := range c.want {
			if !strings.Contains(text, s) {
				t.Fatalf("cell %q: missing %q in:\n%s", c.code, s, text)
			}
		}
	}
}

// EV-1, EV-2: state persists; the last expression is echoed (None is not);
// prints come in order; an exception is a short traceback with the cell's
// own line numbers; a syntax error names its line.
func TestCells(t *testing.T) {
	r := newRun(t, eval.Config{})
	_, text := cell(t, r, tiers.Normal, "x = 40\nprint('one')\nprint('two')\nx + 2")
	want(t, text, "kernel state: preserved", "one\ntwo\n42")
	_, text = cell(t, r, tiers.Normal, "x")
	want(t, text, "40")
	_, text = cell(t, r, tiers.Normal, "print('side')\nNone")
	wantNot(t, text, "None", "None echoed")
	_, text = cell(t, r, tiers.Normal, "def f(n):\n    return 1 / n\n\nf(0)")
	want(t, text, "cell line 4, in <module>", "cell line 2, in f", "ZeroDivisionError")
	wantNot(t, text, "kernel.py", "the driver's frames leak into the traceback")
	_, text = cell(t, r, tiers.Normal, "a = 1\nb = (2\n")
	want(t, text, "SyntaxError", "cell line")
	args, _ := json.Marshal(map[string]any{"code": "1", "description": "too short"})
	res, _ := r.Call(context.Background(), tiers.Normal, "eval", args)
	if !res.IsError || !strings.Contains(registry.ResultText(res), "5 to 10") {
		t.Fatalf("a two-word description: %s", registry.ResultText(res))
	}
}

// A DataFrame is a compact table; a figure is PNG image content within a
// megapixel, never base64 text; an identical re-display is not repeated.
func TestDataFrameAndFigures(t *testing.T) {
	r := newRun(t, eval.Config{})
	_, text := cell(t, r, tiers.Normal, "import pandas as pd\nimport numpy as np\ndf = pd.DataFrame(np.arange(1600).reshape(200, 8), columns=list('abcdefgh'))\ndf")
	want(t, text, "200 rows × 8 columns", "| 199 |", "dtypes: a: int64")
	if n := len([]rune(text)); n > 1500+200 {
		t.Fatalf("a 200×8 frame took %d characters:\n%s", n, text)
	}
	res, text := cell(t, r, tiers.Normal, "import matplotlib.pyplot as plt\nfig = plt.figure(figsize=(20, 20))\nplt.plot([1, 2, 3])\ndisplay(fig)\ndisplay(fig)")
	want(t, text, "1 figure returned as images")
	var images []mcp.ImageContent
	for _, c := range res.Content {
		if im, ok := c.(mcp.ImageContent); ok {
			images = append(images, im)
		}
		if tc, ok := c.(mcp.TextContent); ok && strings.Contains(tc.Text, "iVBOR") {
			t.Fatal("a figure came back as base64 text")
		}
	}
	if len(images) != 1 || images[0].MIMEType != "image/png" {
		t.Fatalf("images %d", len(images))
	}
	data, _ := decode(images[0].Data)
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx()*b.Dy() > 1_050_000 {
		t.Fatalf("a %dx%d image, over a megapixel", b.Dx(), b.Dy())
	}
}

// EV-4: tool() runs the run's tools as children of the eval call: a read
// returns data, a write in plan mode is refused as an exception, eval
// calling eval is a clear error, and the result lists the calls.
func TestToolBridge(t *testing.T) {
	r := newRun(t, eval.Config{})
	cells(t, r, "",
		check{"r = tool('read', {'path': 'notes.txt'})\nr['content']", []string{"'buy milk\\n'", "tool calls: read"}},
		check{"try:\n    tool('nosuch', {})\nexcept ToolError as e:\n    print('refused:', e)", []string{"refused: unknown tool \"nosuch\""}},
		check{"tool('eval', {'code': '1', 'description': 'a step of the test at hand'})", []string{"ToolError", "cannot be called from inside its own call"}},
	)
}

// A !cmd-style child cannot use the protocol's fds.
func TestChildrenCannotUseTheChannel(t *testing.T) {
	r := newRun(t, eval.Config{})
	_, text := cell(t, r, tiers.Normal, "import subprocess\nprint(subprocess.run(['sh', '-c', 'echo hi >&4 && echo wrote; cat <&3 && echo read'], capture_output=True, text=True).stderr.strip())")
	want(t, text, "Bad file descriptor")
	wantNot(t, text, "wrote", "a child wrote to the protocol")
}

// EV-5: an infinite loop is interrupted by the inactivity budget with the
// state preserved; output keeps a busy cell alive past it; a bridge call
// longer than it does not count; the hard cap fires anyway; a kernel that
// dies is replaced and the next cell says state was lost. The clocks run
// against a real kernel, whose output comes over real pipes: no synctest
// bubble can hold them, so these budgets are small real durations, and
// the test reads which one fired from the message, never from a measure.
func TestClocks(t *testing.T) {
	r := newRun(t, eval.Config{Inactivity: 700 * time.Millisecond, HardCap: 5 * time.Second})
	cell(t, r, tiers.Normal, "kept = 7")
	cells(t, r, "",
		check{"while True:\n    pass", []string{"KeyboardInterrupt", "Interrupted: no output for 700ms", "kernel state: preserved"}},
		check{"import time\nfor i in range(6):\n    print('tick', i)\n    time.sleep(0.3)\nkept", []string{"tick 5", "7"}},
		check{"tool('slow', {})\ntool('slow', {})\n'after'", []string{"'after'", "slow"}},
		check{"import time\nwhile True:\n    print('.', end='', flush=True)\n    time.sleep(0.1)", []string{"Interrupted: the cell ran for 5s (the hard cap)"}},
		check{"import os\nos._exit(3)", []string{"the kernel died (exit status 3)"}},
		check{"'kept' in dir()", []string{"kernel state: lost", "False"}},
	)
}

func decode(s string) ([]byte, error) { return base64Decode(s) }

var base64Decode = base64.StdEncoding.DecodeString

// A plan-mode cell cannot write through tool(): the child call has the
// parent's mode. (eval itself is exec tier, so plan mode cannot run it
// either; a normal-mode cell under an approval policy asks, and the card
// says the call comes from an eval cell.)
func TestBridgeKeepsTheRules(t *testing.T) {
	if _, err := os.Stat(python); err != nil {
		testenv.Missing(t, python, "not installed")
	}
	root := t.TempDir()
	var asked []string
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp", "structural"},
		Settings: map[string]any{"eval": eval.Config{Python: python}}, Policy: registry.Policy{tiers.Write: registry.Ask, tiers.Exec: registry.Allow},
		Ask: askuser.Func(func(ctx context.Context, q askuser.Question) (askuser.Answer, error) {
			asked = append(asked, q.Question)
			return askuser.Answer{Outcome: askuser.Answered, Choices: []string{"Deny"}}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, text := cell(t, r, tiers.Normal, "try:\n    tool('write', {'path': 'x.txt', 'content': 'no'})\nexcept ToolError as e:\n    print('refused:', e)")
	want(t, text, "refused: write is refused: the operator denied it")
	if len(asked) != 1 || !strings.Contains(asked[0], "called from an eval cell") {
		t.Fatalf("approval cards %q", asked)
	}
	if _, err := os.Stat(filepath.Join(root, "x.txt")); err == nil {
		t.Fatal("a denied write happened")
	}
	res, _ := cell(t, r, tiers.Plan, "1")
	if !res.IsError || !strings.Contains(registry.ResultText(res), "not available in plan mode") {
		t.Fatalf("eval in plan mode: %s", registry.ResultText(res))
	}
}

type registryRun = registry.Run

func newRunAt(root string) (*registry.Run, error) {
	return builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp", "structural"}, Settings: map[string]any{"eval": eval.Config{Python: python}}})
}

// EV-3: IPython habits are rewritten on tokens: a string or a comment that
// looks like a magic is untouched; !cmd expands $var and {expr};
// %%bash raises on a non-zero exit; an unknown magic lists the known ones.
func TestIPythonHabits(t *testing.T) {
	r := newRun(t, eval.Config{})
	cells(t, r, "",
		check{"name = 'world'\n!echo hello $name {1+2}\nfiles = !printf 'a\\nb\\n'\nfiles", []string{"hello world 3", "['a', 'b']"}},
		check{"s = '''\n%cd /nowhere\n!rm -rf /\n'''\n# %pip install nothing\nlen(s.splitlines())", []string{"3"}},
		check{"import os\n%cd /tmp\n%cd -\n%env GREETING=hi\nos.environ['GREETING']", []string{"/tmp", "env: GREETING=hi", "'hi'"}},
		check{"%%bash\necho from bash\nexit 3", []string{"from bash", "CalledProcessError"}},
		check{"%timeit -n 10 -r 2 sum(range(100))", []string{"per loop (best of 2 runs, 10 loops each)"}},
		check{"%%timeit -n 5 -r 1 xs = list(range(50))\nsorted(xs)", []string{"per loop (best of 1 runs, 5 loops each)"}},
		check{"x = %time 6 * 7\nx", []string{"Wall time", "42"}},
		check{"%matplotlib inline", []string{"unknown magic %matplotlib", "%pip"}},
	)
}

// %pip installs a local package for the kernel's own interpreter; a
// reinstall of a changed version is seen by the next import.
func TestPipInstallReload(t *testing.T) {
	r := newRun(t, eval.Config{})
	if _, text := cell(t, r, tiers.Normal, "import subprocess, sys\nsubprocess.run([sys.executable, '-m', 'pip', '--version']).returncode"); !strings.Contains(text, "0") {
		testenv.Missing(t, "pip for "+python, text)
	}
	pkg := filepath.Join(t.TempDir(), "greetpkg")
	os.MkdirAll(filepath.Join(pkg, "greet_mod"), 0o755)
	write := func(v string) {
		// setuptools copies into build/ only files newer than its copy; a
		// rewrite in the same second would be packed stale.
		os.RemoveAll(filepath.Join(pkg, "build"))
		os.WriteFile(filepath.Join(pkg, "pyproject.toml"), []byte("[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"greet-dist\"\nversion = \""+v+"\"\n\n[tool.setuptools]\npackages = [\"greet_mod\"]\n"), 0o644)
		os.WriteFile(filepath.Join(pkg, "greet_mod", "__init__.py"), []byte("VERSION = '"+v+"'\n"), 0o644)
	}
	target := t.TempDir()
	write("1.0")
	_, text := cell(t, r, tiers.Normal, "import sys\nsys.path.insert(0, "+strconvQuote(target)+")\n%pip install --no-build-isolation --no-deps --target "+target+" "+pkg+"\nimport greet_mod\ngreet_mod.VERSION")
	if strings.Contains(text, "No module named pip") || strings.Contains(text, "setuptools") && strings.Contains(text, "error") {
		testenv.Missing(t, "pip with setuptools for "+python, text)
	}
	want(t, text, "'1.0'")
	write("2.0")
	_, text = cell(t, r, tiers.Normal, "%pip install --no-build-isolation --no-deps --upgrade --target "+target+" "+pkg+"\nimport greet_mod\ngreet_mod.VERSION")
	want(t, text, "'2.0'")
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// Bad input: an output flood is cut and spilled to a file the result
// names; binary junk on the real stdout comes back as text; a cell that
// closes its stdout does not break the next; one that closes the protocol's
// pipes loses the kernel, which is said and replaced; a child that outlives its
// cell ends at reset.
func TestBadCells(t *testing.T) {
	r := newRun(t, eval.Config{})
	res, text := cell(t, r, tiers.Normal, "for i in range(20000):\n    print('line', i)")
	want(t, text, "characters cut; the whole output is in ", "line 0\n", "line 19999")
	spilled := res.StructuredContent.(evaltool.EvalResult).Spilled
	if data, err := os.ReadFile(spilled); err != nil || !strings.Contains(string(data), "line 10000\n") {
		t.Fatalf("the spill file %s: %v", spilled, err)
	}
	if n := len([]rune(text)); n > 8000 {
		t.Fatalf("a flood took %d characters", n)
	}
	_, text = cell(t, r, tiers.Normal, "import os, time\nos.write(1, b'\\xff\\xfe junk\\n')\ntime.sleep(0.2)")
	want(t, text, "junk")
	cell(t, r, tiers.Normal, "import sys\nsys.stdout.close()")
	_, text = cell(t, r, tiers.Normal, "print('still printing')")
	want(t, text, "still printing")
	_, text = cell(t, r, tiers.Normal, "import subprocess\np = subprocess.Popen(['sleep', '300'])\np.pid")
	pid, _ := strconv.Atoi(strings.TrimSpace(text[strings.LastIndex(text, "\n")+1:]))
	if pid == 0 || !testenv.ProcessRunning(pid) {
		t.Fatalf("no child: %q", text)
	}
	_, text = cell(t, r, tiers.Normal, "import os, stat\nouts = {os.fstat(1).st_ino, os.fstat(2).st_ino}\nfor fd in range(3, 1024):\n    try:\n        st = os.fstat(fd)\n        if stat.S_ISFIFO(st.st_mode) and st.st_ino not in outs:\n            os.close(fd)\n    except OSError:\n        pass\nprint('gone')")
	want(t, text, "the kernel died")
	if !testenv.Gone(pid) {
		t.Fatal("the cell's child outlived its kernel")
	}
	_, text = cell(t, r, tiers.Normal, "1 + 1")
	want(t, text, "kernel state: lost", "2")
}

// envWrap is an Environment that runs the kernel under env(1), marking it.
type envWrap struct{}

func (envWrap) Prepare(cmd *exec.Cmd) error {
	cmd.Args = append([]string{"env", "ISOLATED=yes", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/usr/bin/env"
	return nil
}

// EV-6: a harness's environment starts the kernel; the channel still works.
func TestEnvironment(t *testing.T) {
	r := newRun(t, eval.Config{Environment: envWrap{}})
	_, text := cell(t, r, tiers.Normal, "import os\nos.environ.get('ISOLATED')")
	want(t, text, "'yes'")
}

func jsCell(t *testing.T, r *registry.Run, code string) string {
	t.Helper()
	return registry.ResultText(call(t, r, tiers.Normal, "javascript", code))
}

// JavaScript: one persistent context; let, const, class and function
// persist and can be declared again; the last expression is echoed with
// util.inspect; top-level await; static imports; console in order; an
// error's line is the cell's; tool() from JS; the channel closed to
// children.
func TestJavaScript(t *testing.T) {
	testenv.LookPath(t, "node")
	r := newRun(t, eval.Config{})
	os.WriteFile(filepath.Join(r.Root(), "lib.mjs"), []byte("export default 40;\nexport const two = 2;\n"), 0o644)
	cells(t, r, "javascript",
		check{"let a = 1\nconst b = {x: [1, 2]}\nclass P { hi() { return 'hi' } }\nfunction f(n) { return n * 2 }\nconsole.log('one')\nconsole.log('two')\nb", []string{"one\ntwo\n{ x: [ 1, 2 ] }"}},
		check{"let a = 5\nconst b = 'again'\nnew P().hi() + ' ' + f(a) + ' ' + b", []string{"'hi 10 again'"}},
		check{"const v = await Promise.resolve(41)\nv + 1", []string{"42"}},
		check{"v", []string{"41"}},
		check{"import forty, { two as deux } from './lib.mjs'\nforty + deux", []string{"42"}},
		check{"const s = 'let x = 1; // not a comment'\nconst re = /a\\/b/\ns.length", []string{"27"}},
		check{"\n\nnull.boom", []string{"TypeError", "cell line 3"}},
	)
	text := jsCell(t, r, "const got = await tool('read', {path: 'notes.txt'})\ngot.content")
	want(t, text, "'buy milk\\n'", "tool calls: read")
	text = jsCell(t, r, "require('child_process').execSync('echo hi >&4 2>&1; echo rc=$?', {shell: '/bin/bash'}).toString()")
	want(t, text, "rc=1") // the write to fd 4 failed: it is not open in the child
}

// A JavaScript infinite loop is interrupted by the inactivity budget and
// the context survives.
func TestJavaScriptInterrupt(t *testing.T) {
	testenv.LookPath(t, "node")
	r := newRun(t, eval.Config{Inactivity: 500 * time.Millisecond})
	jsCell(t, r, "let kept = 7")
	cells(t, r, "javascript",
		check{"for (;;) {}", []string{"Interrupted: no output for 500ms", "kernel state: preserved"}},
		check{"kept", []string{"kernel state: preserved", "7"}},
	)
}

// Run.Close ends the kernels and what their cells started; tool() with bad
// arguments raises with the tool's message.
func TestCloseEndsKernels(t *testing.T) {
	r := newRun(t, eval.Config{})
	_, text := cell(t, r, tiers.Normal, "try:\n    tool('read', {})\nexcept ToolError as e:\n    print('refused:', e)")
	want(t, text, `refused: bad arguments for read: missing required argument "path"`)
	_, text = cell(t, r, tiers.Normal, "import subprocess\nsubprocess.Popen(['sleep', '300']).pid")
	pid, _ := strconv.Atoi(strings.TrimSpace(text[strings.LastIndex(text, "\n")+1:]))
	if pid == 0 || !testenv.ProcessRunning(pid) {
		t.Fatalf("no child: %q", text)
	}
	r.Close()
	if !testenv.Gone(pid) {
		t.Fatal("a cell's child outlived Run.Close")
	}
}
