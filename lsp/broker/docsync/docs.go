// Package docsync is the documents of one server the broker shares, as
// its connections see them: the server's version of each document (the
// broker's, monotonic) and each connection's version for it, which texts
// a connection sent, what the server last published of each (replayed
// to a connection that opens the very text the server has), and, while
// a preview's unsaved text may be in the server's checks, who gets a
// publish (preview.go). A connection is the broker's C; the table sends
// nothing: it says what to send and to whom, under the broker's lock.
package docsync

import (
	"crypto/sha256"
	"encoding/json"
	"time"
)

// Table is the documents of one server, with C a connection.
type Table[C comparable] struct {
	docs  map[string]*doc[C]
	views map[C]*view
	// preview is set while the server's diagnostics may be of a
	// holder's unsaved text (preview.go).
	preview *heldPreview[C]
	sent    int64 // document notifications sent to the server
}

// view is one connection's side of the documents.
type view struct {
	versions map[string]map[int]int // uri → server version → client version
	latest   map[string]int         // uri → the server version of its last change
	// unsaved are documents whose didOpen reached no server (the server
	// has that text): the didSave that follows would only make it check
	// the text again.
	unsaved map[string]bool
}

// New is an empty table.
func New[C comparable]() *Table[C] {
	return &Table[C]{docs: map[string]*doc[C]{}, views: map[C]*view{}}
}

// viewOf is c's view, made on its first document.
func (t *Table[C]) viewOf(c C) *view {
	v := t.views[c]
	if v == nil {
		v = &view{versions: map[string]map[int]int{}, latest: map[string]int{}}
		t.views[c] = v
	}
	return v
}

// Sent is the document notifications sent to the server so far.
func (t *Table[C]) Sent() int64 { return t.sent }

// Leave forgets c, which has gone, and returns the documents no
// connection has open any more: the server is to be told they closed.
func (t *Table[C]) Leave(c C) (closes []string) {
	for uri, d := range t.docs {
		if d.open[c] {
			delete(d.open, c)
			if len(d.open) == 0 {
				closes = append(closes, uri)
			}
		}
	}
	delete(t.views, c)
	return closes
}

// doc is one document as the server has it.
type doc[C comparable] struct {
	version int // the server's, monotonic
	open    map[C]bool
	texts   map[int][32]byte // hash of the text at a server version, when known
	text    *string          // the text at the server's version, when known (a re-check sends it again)
	// pub is the last versioned publish for the document, nil after an
	// unversioned one or once no client has it open.
	pub *lastPublish
}

// lastPublish is a server's publishDiagnostics, kept for replay.
type lastPublish struct {
	version int
	diags   json.RawMessage
	at      time.Time
}

type docParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int    `json:"version"`
		Text    string `json:"text"`
		Lang    string `json:"languageId"`
	} `json:"textDocument"`
	ContentChanges []struct {
		Range json.RawMessage `json:"range,omitempty"`
		Text  string          `json:"text"`
	} `json:"contentChanges"`
}

// Sync maps a document notification m (its method and params) of c to
// what the server gets, out, sent when forward: a didOpen of a document
// another connection holds open becomes a didChange to its text, a
// didClose of one still open for others is dropped, and versions are the
// table's. held says c holds the server (a preview's text); pulls, that
// the server is asked for diagnostics (textDocument/diagnostic), so a
// didOpen of the text it has need not reach it. replay, when not nil, is
// for c: the diagnostics the server published of the text it opened.
func (t *Table[C]) Sync(c C, m any, method string, params json.RawMessage, held bool, pulls func() bool) (out any, forward bool, replay any) {
	out, forward = t.sync(c, m, method, params, pulls)
	replay = t.replay(c, method, params, out)
	if forward {
		t.sent++
		if held {
			t.heldSent(c, params)
		}
	}
	return out, forward, replay
}

// sync is Sync's mapping.
func (t *Table[C]) sync(c C, m any, method string, params json.RawMessage, pulls func() bool) (any, bool) {
	var p docParams
	if json.Unmarshal(params, &p) != nil {
		return m, true
	}
	vw := t.viewOf(c)
	uri := p.TextDocument.URI
	d := t.docs[uri]
	if d == nil {
		d = &doc[C]{open: map[C]bool{}, texts: map[int][32]byte{}}
		t.docs[uri] = d
	}
	mapVersion := func(text *string) int {
		d.version++
		d.text = text
		if text != nil {
			d.texts[d.version] = sha256.Sum256([]byte(*text))
		}
		delete(d.texts, d.version-32)
		if vw.versions[uri] == nil {
			vw.versions[uri] = map[int]int{}
		}
		vw.versions[uri][d.version] = p.TextDocument.Version
		delete(vw.versions[uri], d.version-32)
		vw.latest[uri] = d.version
		return d.version
	}
	switch method {
	case "textDocument/didOpen":
		wasOpen := len(d.open) > 0
		d.open[c] = true
		h, ok := d.texts[d.version]
		if wasOpen && ok && (d.pub != nil && d.pub.version == d.version || pulls()) && h == sha256.Sum256([]byte(p.TextDocument.Text)) {
			// The server has this text and has published its
			// diagnostics (replay), or is asked for them: the
			// client's version stands for the server's current one, and
			// nothing is sent. With no publish to replay the text goes
			// again, so the server publishes.
			if vw.versions[uri] == nil {
				vw.versions[uri] = map[int]int{}
			}
			vw.versions[uri][d.version] = p.TextDocument.Version
			vw.latest[uri] = d.version
			if vw.unsaved == nil {
				vw.unsaved = map[string]bool{}
			}
			vw.unsaved[uri] = true
			return nil, false
		}
		v := mapVersion(&p.TextDocument.Text)
		if wasOpen {
			return map[string]any{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": map[string]any{
				"textDocument":   map[string]any{"uri": uri, "version": v},
				"contentChanges": []map[string]any{{"text": p.TextDocument.Text}}}}, true
		}
		return map[string]any{"jsonrpc": "2.0", "method": method, "params": map[string]any{
			"textDocument": map[string]any{"uri": uri, "version": v, "languageId": p.TextDocument.Lang, "text": p.TextDocument.Text}}}, true
	case "textDocument/didSave":
		if vw.unsaved[uri] {
			delete(vw.unsaved, uri)
			return nil, false
		}
		return m, true
	case "textDocument/didChange":
		delete(vw.unsaved, uri)
		var text *string
		if len(p.ContentChanges) == 1 && len(p.ContentChanges[0].Range) == 0 {
			text = &p.ContentChanges[0].Text
		}
		v := mapVersion(text)
		var fields map[string]any
		json.Unmarshal(params, &fields)
		fields["textDocument"] = map[string]any{"uri": uri, "version": v}
		return map[string]any{"jsonrpc": "2.0", "method": method, "params": fields}, true
	case "textDocument/didClose":
		delete(d.open, c)
		delete(vw.versions, uri)
		delete(vw.latest, uri)
		delete(vw.unsaved, uri)
		if len(d.open) == 0 {
			d.pub = nil
		}
		return m, len(d.open) == 0
	}
	return m, true
}

// replay is, for a didOpen of c that reached no server (out is nil: the
// server has that text at its current version), the last diagnostics the
// server published for that version, as c's: the ones c would get if the
// server checked the text again. Only a versioned publish about that
// very text is replayed, so c never sees diagnostics of a text it did
// not send.
func (t *Table[C]) replay(c C, method string, params json.RawMessage, out any) any {
	if method != "textDocument/didOpen" || out != nil {
		return nil
	}
	var p docParams
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	uri := p.TextDocument.URI
	d := t.docs[uri]
	vw := t.views[c]
	if d == nil || d.pub == nil || d.pub.version != d.version || vw == nil || vw.latest[uri] != d.version {
		return nil
	}
	cv, ok := vw.versions[uri][d.version]
	if !ok {
		return nil
	}
	return map[string]any{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
		"params": map[string]any{"uri": uri, "version": cv, "diagnostics": d.pub.diags,
			quietKey: time.Since(d.pub.at).Milliseconds()}}
}

// quietKey, in a replayed publish, says how many milliseconds ago the
// server published it: no further publish came since, so a client that
// waits for publishes to settle need not wait again.
const quietKey = "builtintoolsQuietMs"

// Delivery is a message for one connection.
type Delivery[C comparable] struct {
	To  C
	Msg any
}

// Publish is where a server's publishDiagnostics m (its method and
// params) goes among clients, the connections oldest first: to each
// with the version it sent for the text it is about; a connection whose
// text is another gets none; while they may be of a preview's text
// (heldPreview), only the holder gets those of a document it sent.
// recheck are messages for the server, sent after: the documents whose
// publish went to no one, checked again once a preview has settled.
func (t *Table[C]) Publish(clients []C, m any, method string, params json.RawMessage) (outs []Delivery[C], recheck []any) {
	var p struct {
		URI     string          `json:"uri"`
		Version *int            `json:"version,omitempty"`
		Diags   json.RawMessage `json:"diagnostics"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil, nil
	}
	d := t.docs[p.URI]
	to, recheck := t.previewPublish(p.URI, p.Version)
	if d != nil && len(d.open) > 0 {
		if p.Version != nil && to == toAll {
			d.pub = &lastPublish{version: *p.Version, diags: p.Diags, at: time.Now()}
		} else {
			d.pub = nil
		}
	}
	for _, c := range clients {
		if to == toNone || to == toHolder && c != t.preview.holder {
			// Maybe of a preview's unsaved text.
			continue
		}
		if p.Version == nil {
			outs = append(outs, Delivery[C]{c, m})
			continue
		}
		vw := t.views[c]
		if d == nil || !d.open[c] || vw == nil {
			// About a text another client sent: its version means
			// nothing to this one.
			continue
		}
		cv, ok := vw.versions[p.URI][*p.Version]
		if !ok {
			// Diagnostics for a version another client sent: this
			// client's if its latest text is the same.
			lv := vw.latest[p.URI]
			h1, ok1 := d.texts[*p.Version]
			h2, ok2 := d.texts[lv]
			if !ok1 || !ok2 || h1 != h2 {
				continue
			}
			cv = vw.versions[p.URI][lv]
		}
		outs = append(outs, Delivery[C]{c, map[string]any{"jsonrpc": "2.0", "method": method,
			"params": map[string]any{"uri": p.URI, "version": cv, "diagnostics": p.Diags}}})
	}
	return outs, recheck
}

// recheck is a didChange of uri to the text the server has, at a
// new version of the broker's own: the server checks it again and
// publishes, and a client whose latest text it is gets that publish.
// nil when the text is not known or no client has it open.
func (t *Table[C]) recheck(uri string) any {
	d := t.docs[uri]
	if d == nil || d.text == nil || len(d.open) == 0 {
		return nil
	}
	h, ok := d.texts[d.version]
	if !ok {
		return nil
	}
	d.version++
	d.texts[d.version] = h
	delete(d.texts, d.version-32)
	t.sent++
	return map[string]any{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": d.version},
		"contentChanges": []map[string]any{{"text": *d.text}}}}
}
