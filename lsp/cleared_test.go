package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/framing"
)

// clearingServer is a fake server ("clears") that publishes as gopls does
// when a change reaches it while it still clears the last change's
// diagnostics (its updateOrphanedFileDiagnostics): for each changed
// version first an empty set labeled with that version, then, 30 ms
// later, the version's own findings (one per line holding ERR) when there
// are any. Like gopls, it publishes an empty set only after one with
// findings. (A didOpen is published at once.)
func clearingServer() {
	r, w := framing.NewReader(os.Stdin), framing.NewWriter(os.Stdout)
	var mu sync.Mutex
	write := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		_ = w.Write([]byte(s))
	}
	// shown: whether the last publish held findings; like gopls, an empty
	// set after an empty set is not published again.
	shown := false
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
	for {
		body, err := r.Read()
		if err != nil {
			return
		}
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
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil {
			continue
		}
		doc := msg.Params.TextDocument
		switch {
		case msg.Method == "initialize":
			write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"capabilities":{"textDocumentSync":1}}}`, msg.ID))
		case msg.Method == "textDocument/didOpen":
			publish(doc.URI, doc.Version, doc.Text)
		case msg.Method == "textDocument/didChange" && len(msg.Params.ContentChanges) > 0:
			text := msg.Params.ContentChanges[len(msg.Params.ContentChanges)-1].Text
			publish(doc.URI, doc.Version, "") // clearing the last change's
			if strings.Contains(text, "ERR") {
				time.AfterFunc(30*time.Millisecond, func() { publish(doc.URI, doc.Version, text) })
			}
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
// An empty first publish after one with findings is waited on to settle;
// the findings that follow are the answer, and a write that fixed them
// all is answered empty, a settle later.
func TestEmptyPublishBeforeTheFindings(t *testing.T) {
	t.Parallel()
	root := fakeRoot(t)
	spec := fakeSpec(t, "clears")
	spec.PublishesOnce = true
	sup := NewSupervisor(root, Config{Servers: []ServerSpec{spec}})
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
}
