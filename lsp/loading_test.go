package lsp

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// A cold pyright answers references from the files it has found so far:
// asked before it had listed the workspace, it gave 4 of 16 (issue 26).
// A query waits for the workspace to be loaded (pyright's "Found N source
// files"), or says its answer may be incomplete.
func TestColdPyrightReferencesWaitForTheWorkspace(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"pyproject.toml":  "[project]\nname = \"cold\"\nversion = \"0.1.0\"\n",
		"lib.py":          "def helper(x):\n    return x + 1\n",
		"pkg/__init__.py": "",
	}
	for i := 1; i <= 5; i++ {
		files[fmt.Sprintf("m%d.py", i)] = fmt.Sprintf("from lib import helper\n\n\ndef f%d():\n    return helper(%d) + helper(2)\n", i, i)
	}
	// Enough files that listing them takes a while.
	for i := 1; i <= 400; i++ {
		files[fmt.Sprintf("pkg/filler%d.py", i)] = fmt.Sprintf("import os\n\n\ndef g%d(a, b):\n    return os.path.join(str(a), str(b))\n", i)
	}
	s := inlineSession(t, "pyright-langserver", files, Config{})
	res := must(s.sup.References(s.ctx, s.at("m3.py"), protocol.Place{Line: 5, Symbol: "helper"}))(t)
	data, _ := json.Marshal(res)
	if res.Total != 16 && !strings.Contains(string(data), `"loading":`) {
		t.Fatalf("a cold pyright gave %d of 16 references and the result does not say it may be incomplete: %s", res.Total, data)
	}
}

// A server that never says it has loaded its workspace: the wait ends at
// StartTimeout, the answer says it may be incomplete, and a rename, which
// would miss files, is refused. (A fake server: no real one can be made
// to stay loading.)
func TestAnswerWhileLoadingSaysSo(t *testing.T) {
	t.Parallel()
	h := hostileSession(t, map[string]string{"a.fake": "hello world\n"}, Config{StartTimeout: 15 * time.Second},
		func(spec *langserver.Spec) { spec.LoadedLog = regexp.MustCompile(`^never$`) })
	h.play(map[string]any{"answers": map[string]any{
		"textDocument/references": []any{map[string]any{"uri": h.uri("a.fake"), "range": map[string]any{
			"start": map[string]int{"line": 0, "character": 6}, "end": map[string]int{"line": 0, "character": 11}}}},
	}})
	res := must(h.sup.References(h.ctx, h.at("a.fake"), protocol.Place{Line: 1, Symbol: "world"}))(t)
	if res.Total != 1 || !strings.Contains(res.Loading, "fake had not finished loading the workspace after 15s") || !strings.Contains(res.Loading, "may be incomplete") {
		t.Errorf("references while loading: %+v", res)
	}
	_, err := h.sup.Rename(h.ctx, h.at("a.fake"), protocol.Place{Line: 1, Symbol: "world"}, "earth", false)
	expectErr(t, "rename while loading", err, ErrServerTimeout, "had not finished loading", "a rename now could miss files", "nothing was renamed")
}
