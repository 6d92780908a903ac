package evaltool_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
)

// esmFixture is a checkout with a local module, a JSON file and an
// ESM-only package in node_modules ("type": "module", an exports map with
// only an import condition, so require() cannot load it).
var esmFixture = map[string]string{
	"lib.mjs":   "export default 40;\nexport const two = 2;\n",
	"side.mjs":  "console.log('side effect ran');\n",
	"data.json": "{\"answer\": 42}\n",
	"node_modules/esm-only/package.json": `{"name": "esm-only", "version": "1.0.0", "type": "module",
  "exports": {".": {"import": "./index.js"}, "./extra": {"import": "./extra.js"}}}`,
	"node_modules/esm-only/index.js": "export const greet = (n) => 'hello ' + n;\nexport default 'esm default';\n",
	"node_modules/esm-only/extra.js": "export const extra = 'extra';\n",
}

// Issue 19 §1: a static import ran nothing after it and said nothing (the
// error text was filtered away with the driver's frames, since it named
// node:os), left its names unbound, and import() failed with
// ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING. Every import form binds its
// names as the cell's globals, for later cells too; builtins, local
// modules, JSON and an ESM-only package from the checkout's node_modules
// load; a failed import says which statement stopped the cell.
func TestJavaScriptImports(t *testing.T) {
	testenv.LookPath(t, "node")
	r := newRun(t, eval.Config{})
	testenv.WriteTree(t, r.Root(), esmFixture)
	jsImports(t, r)
}

func jsImports(t *testing.T, r *registry.Run) {
	t.Helper()
	cells(t, r, "javascript",
		check{"console.log('before')\nimport os from 'node:os'\nconsole.log('after')\ntypeof os.cpus", []string{"before\nafter\n'function'"}},
		check{"import { join, sep as separator } from 'node:path'\njoin('a', 'b') + separator", []string{"'a/b/'"}},
		check{"typeof join + ' ' + typeof os.platform", []string{"'function function'"}},
		check{"import * as fsp from 'node:fs/promises'\nimport forty, { two } from './lib.mjs'\nimport './side.mjs'\n[typeof fsp.readFile, forty + two]", []string{"side effect ran", "[ 'function', 42 ]"}},
		check{"import data from './data.json' with { type: 'json' }\ndata.answer", []string{"42"}},
		check{"const m = await import('node:os')\ntypeof m.cpus", []string{"'function'"}},
		check{"import esm, { greet } from 'esm-only'\nimport { extra } from 'esm-only/extra'\nconst dyn = await import('esm-only')\n[esm, greet('you'), extra, dyn.greet === greet]", []string{"[ 'esm default', 'hello you', 'extra', true ]"}},
	)
	text := jsCell(t, r, "console.log('one')\nimport nothing from 'no-such-package'\nconsole.log('three')")
	want(t, text, "one\n", "no-such-package", "Stopped at statement 2 of 3 (line 2)", "statement 3 (line 3) did not run")
	wantNot(t, text, "three", "a statement after the failed import ran")
}

// The same without vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER (Node
// before 20.12 has none): a node that hides it runs the driver's own
// resolver, and every import works as well.
func TestJavaScriptImportsWithoutMainLoader(t *testing.T) {
	node := testenv.LookPath(t, "node")
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{
		"hide.js": "const Module = require('module');\nconst vm = require('vm');\n" +
			"const constants = Object.freeze({ ...vm.constants, USE_MAIN_CONTEXT_DEFAULT_LOADER: undefined });\n" +
			"const hidden = new Proxy(vm, { get: (o, k) => (k === 'constants' ? constants : o[k]) });\n" +
			"const load = Module.prototype.require;\n" +
			"Module.prototype.require = function (id) { return id === 'vm' || id === 'node:vm' ? hidden : load.apply(this, arguments); };\n",
		"node": "#!/bin/sh\nexec " + node + " -r " + filepath.Join(dir, "hide.js") + " \"$@\"\n",
	})
	os.Chmod(filepath.Join(dir, "node"), 0o755)
	r := newRun(t, eval.Config{Node: filepath.Join(dir, "node")})
	testenv.WriteTree(t, r.Root(), esmFixture)
	if text := jsCell(t, r, "require('vm').constants.USE_MAIN_CONTEXT_DEFAULT_LOADER === undefined"); !strings.Contains(text, "true") {
		t.Fatalf("the wrapper did not hide the loader constant:\n%s", text)
	}
	jsImports(t, r)
}
