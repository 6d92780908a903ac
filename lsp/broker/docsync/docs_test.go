package docsync

import (
	"encoding/json"
	"fmt"
	"testing"
)

// note is a document notification's params.
func note(uri string, version int, text string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"textDocument":{"uri":%q,"version":%d,"text":%q,"languageId":"go"},"contentChanges":[{"text":%q}]}`, uri, version, text, text))
}

// published is a publishDiagnostics' params, unversioned when version < 0.
func published(uri string, version int, diags string) json.RawMessage {
	if version < 0 {
		return json.RawMessage(fmt.Sprintf(`{"uri":%q,"diagnostics":%s}`, uri, diags))
	}
	return json.RawMessage(fmt.Sprintf(`{"uri":%q,"version":%d,"diagnostics":%s}`, uri, version, diags))
}

// version is the textDocument version (or the publish's) in a message
// the table made.
func version(t *testing.T, m any) int {
	t.Helper()
	var x struct {
		Params struct {
			TextDocument struct{ Version int } `json:"textDocument"`
			Version      int                   `json:"version"`
		} `json:"params"`
	}
	raw, _ := json.Marshal(m)
	if err := json.Unmarshal(raw, &x); err != nil {
		t.Fatal(err)
	}
	return x.Params.TextDocument.Version + x.Params.Version
}

// to is who a publish went to, with the version each was told.
func to(t *testing.T, outs []Delivery[string]) map[string]int {
	got := map[string]int{}
	for _, o := range outs {
		got[o.To] = version(t, o.Msg)
	}
	return got
}

func never() bool { return false }

// Two connections on one document: the server sees the table's
// versions, each connection its own; a second open of the server's text
// reaches no server and is answered with the last publish; a publish
// of a text only one connection sent reaches it alone; a close others
// still need is dropped.
func TestSharedDocument(t *testing.T) {
	tb := New[string]()
	const uri = "file:///m/a.go"
	clients := []string{"a", "b"}
	out, fwd, replay := tb.Sync("a", "orig", "textDocument/didOpen", note(uri, 1, "x"), false, never)
	if !fwd || replay != nil || version(t, out) != 1 {
		t.Fatalf("first open: %v %v %v", out, fwd, replay)
	}
	outs, _ := tb.Publish(clients, "orig", "textDocument/publishDiagnostics", published(uri, 1, `["e1"]`))
	if got := to(t, outs); len(got) != 1 || got["a"] != 1 {
		t.Fatalf("publish of a's text went to %v", got)
	}
	out, fwd, replay = tb.Sync("b", "orig", "textDocument/didOpen", note(uri, 7, "x"), false, never)
	if fwd || out != nil || replay == nil || version(t, replay) != 7 {
		t.Fatalf("second open of the server's text: %v %v %v", out, fwd, replay)
	}
	out, fwd, _ = tb.Sync("b", "orig", "textDocument/didChange", note(uri, 8, "y"), false, never)
	if !fwd || version(t, out) != 2 {
		t.Fatalf("b's change: %v %v", out, fwd)
	}
	outs, _ = tb.Publish(clients, "orig", "textDocument/publishDiagnostics", published(uri, 2, `[]`))
	if got := to(t, outs); len(got) != 1 || got["b"] != 8 {
		t.Fatalf("publish of b's text went to %v", got)
	}
	outs, _ = tb.Publish(clients, "orig", "textDocument/publishDiagnostics", published(uri, -1, `[]`))
	if len(outs) != 2 || outs[0].Msg != "orig" || outs[1].Msg != "orig" {
		t.Fatalf("an unversioned publish: %v", outs)
	}
	if out, fwd, _ = tb.Sync("a", "orig", "textDocument/didClose", note(uri, 0, ""), false, never); fwd {
		t.Fatalf("a's close while b has it open reached the server: %v", out)
	}
	if out, fwd, _ = tb.Sync("b", "orig", "textDocument/didClose", note(uri, 0, ""), false, never); !fwd || out != "orig" {
		t.Fatalf("the last close: %v %v", out, fwd)
	}
	if n := tb.Sent(); n != 3 {
		t.Fatalf("sent %d document notifications, want 3", n)
	}
}

// A preview: under the hold the holder alone gets its document's
// publishes and no one another's (that one is withheld); after the
// release, a publish of an older version still goes to the holder only,
// that of the restore to all, and the withheld document is checked
// again.
func TestPreviewSorting(t *testing.T) {
	tb := New[string]()
	const doc, other = "file:///m/a.go", "file:///m/b.go"
	clients := []string{"a", "b"}
	tb.Sync("a", nil, "textDocument/didOpen", note(doc, 1, "x"), false, never) // server v1
	tb.Publish(clients, nil, "textDocument/publishDiagnostics", published(doc, 1, `[]`))
	tb.Sync("b", nil, "textDocument/didOpen", note(doc, 1, "x"), false, never) // replayed: no server version
	tb.Sync("b", nil, "textDocument/didOpen", note(other, 1, "o"), false, never)
	tb.Sync("a", nil, "textDocument/didChange", note(doc, 2, "preview"), true, never) // server v2
	outs, _ := tb.Publish(clients, nil, "textDocument/publishDiagnostics", published(other, 1, `["from the preview"]`))
	if len(outs) != 0 {
		t.Fatalf("a publish of another document during the hold went to %v", to(t, outs))
	}
	tb.Sync("a", nil, "textDocument/didChange", note(doc, 3, "x"), true, never) // the restore, server v3
	tb.Released("a")
	outs, _ = tb.Publish(clients, nil, "textDocument/publishDiagnostics", published(doc, 2, `["preview"]`))
	if got := to(t, outs); len(got) != 1 || got["a"] != 2 {
		t.Fatalf("the preview's publish after the release went to %v", got)
	}
	outs, recheck := tb.Publish(clients, nil, "textDocument/publishDiagnostics", published(doc, 3, `[]`))
	if got := to(t, outs); len(got) != 2 || got["a"] != 3 || got["b"] != 1 {
		t.Fatalf("the restore's publish went to %v", got)
	}
	if len(recheck) != 1 || version(t, recheck[0]) != 2 {
		t.Fatalf("the withheld document's re-check: %v", recheck)
	}
}
