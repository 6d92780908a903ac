package broker

import (
	"crypto/sha256"
	"encoding/json"
	"time"
)

// The documents of a server: the broker's versions of each, which text
// each client sent, what the server last published about it.

// bdoc is one document as the server has it.
type bdoc struct {
	version int // the server's, monotonic
	open    map[*bclient]bool
	texts   map[int][32]byte // hash of the text at a server version, when known
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

// syncLocked maps a document notification of c to what the server gets:
// a didOpen of a document another client holds open becomes a didChange
// to its text, a didClose of one still open for others is dropped, and
// versions are the broker's.
func (be *backend) syncLocked(c *bclient, m *rpcMsg) (any, bool) {
	var p docParams
	if json.Unmarshal(m.Params, &p) != nil {
		return m, true
	}
	uri := p.TextDocument.URI
	d := be.docs[uri]
	if d == nil {
		d = &bdoc{open: map[*bclient]bool{}, texts: map[int][32]byte{}}
		be.docs[uri] = d
	}
	mapVersion := func(text *string) int {
		d.version++
		if text != nil {
			d.texts[d.version] = sha256.Sum256([]byte(*text))
		}
		delete(d.texts, d.version-32)
		if c.versions[uri] == nil {
			c.versions[uri] = map[int]int{}
		}
		c.versions[uri][d.version] = p.TextDocument.Version
		delete(c.versions[uri], d.version-32)
		c.latest[uri] = d.version
		return d.version
	}
	switch m.Method {
	case "textDocument/didOpen":
		wasOpen := len(d.open) > 0
		d.open[c] = true
		h, ok := d.texts[d.version]
		if wasOpen && ok && (d.pub != nil && d.pub.version == d.version || be.pullsLocked()) && h == sha256.Sum256([]byte(p.TextDocument.Text)) {
			// The server has this text and has published its
			// diagnostics (replayLocked), or is asked for them: the
			// client's version stands for the server's current one, and
			// nothing is sent. With no publish to replay the text goes
			// again, so the server publishes.
			if c.versions[uri] == nil {
				c.versions[uri] = map[int]int{}
			}
			c.versions[uri][d.version] = p.TextDocument.Version
			c.latest[uri] = d.version
			if c.unsaved == nil {
				c.unsaved = map[string]bool{}
			}
			c.unsaved[uri] = true
			return nil, false
		}
		v := mapVersion(&p.TextDocument.Text)
		if wasOpen {
			return map[string]any{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": map[string]any{
				"textDocument":   map[string]any{"uri": uri, "version": v},
				"contentChanges": []map[string]any{{"text": p.TextDocument.Text}}}}, true
		}
		return map[string]any{"jsonrpc": "2.0", "method": m.Method, "params": map[string]any{
			"textDocument": map[string]any{"uri": uri, "version": v, "languageId": p.TextDocument.Lang, "text": p.TextDocument.Text}}}, true
	case "textDocument/didSave":
		if c.unsaved[uri] {
			delete(c.unsaved, uri)
			return nil, false
		}
		return m, true
	case "textDocument/didChange":
		delete(c.unsaved, uri)
		var text *string
		if len(p.ContentChanges) == 1 && len(p.ContentChanges[0].Range) == 0 {
			text = &p.ContentChanges[0].Text
		}
		v := mapVersion(text)
		var params map[string]any
		json.Unmarshal(m.Params, &params)
		params["textDocument"] = map[string]any{"uri": uri, "version": v}
		return map[string]any{"jsonrpc": "2.0", "method": m.Method, "params": params}, true
	case "textDocument/didClose":
		delete(d.open, c)
		delete(c.versions, uri)
		delete(c.latest, uri)
		delete(c.unsaved, uri)
		if len(d.open) == 0 {
			d.pub = nil
		}
		return m, len(d.open) == 0
	}
	return m, true
}

// replayLocked is, for a didOpen of c that reached no server (out is
// nil: the server has that text at its current version), the last
// diagnostics the server published for that version, as c's: the ones c
// would get if the server checked the text again. Only a versioned
// publish about that very text is replayed, so c never sees diagnostics
// of a text it did not send.
func (be *backend) replayLocked(c *bclient, m *rpcMsg, out any) any {
	if m.Method != "textDocument/didOpen" || out != nil {
		return nil
	}
	var p docParams
	if json.Unmarshal(m.Params, &p) != nil {
		return nil
	}
	uri := p.TextDocument.URI
	d := be.docs[uri]
	if d == nil || d.pub == nil || d.pub.version != d.version || c.latest[uri] != d.version {
		return nil
	}
	cv, ok := c.versions[uri][d.version]
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

// publish sends a server's diagnostics to each client, with the version
// that client sent for the text they are about; a client whose text is
// another gets none.
func (be *backend) publish(m *rpcMsg) {
	var p struct {
		URI     string          `json:"uri"`
		Version *int            `json:"version,omitempty"`
		Diags   json.RawMessage `json:"diagnostics"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return
	}
	be.mu.Lock()
	type out struct {
		c   *bclient
		msg any
	}
	var outs []out
	d := be.docs[p.URI]
	if d != nil && len(d.open) > 0 {
		if p.Version != nil {
			d.pub = &lastPublish{version: *p.Version, diags: p.Diags, at: time.Now()}
		} else {
			d.pub = nil
		}
	}
	for _, c := range be.clients {
		if p.Version == nil {
			outs = append(outs, out{c, m})
			continue
		}
		if d == nil || !d.open[c] {
			// About a text another client sent: its version means
			// nothing to this one.
			continue
		}
		cv, ok := c.versions[p.URI][*p.Version]
		if !ok {
			// Diagnostics for a version another client sent: this
			// client's if its latest text is the same.
			lv := c.latest[p.URI]
			h1, ok1 := d.texts[*p.Version]
			h2, ok2 := d.texts[lv]
			if !ok1 || !ok2 || h1 != h2 {
				continue
			}
			cv = c.versions[p.URI][lv]
		}
		outs = append(outs, out{c, map[string]any{"jsonrpc": "2.0", "method": m.Method,
			"params": map[string]any{"uri": p.URI, "version": cv, "diagnostics": p.Diags}}})
	}
	be.mu.Unlock()
	for _, o := range outs {
		o.c.send(o.msg)
	}
}

// pullsLocked reports whether the server is asked for diagnostics
// (textDocument/diagnostic, offered in its initialize answer or
// registered): a client then gets them of the server's current text.
func (be *backend) pullsLocked() bool {
	var res struct {
		Capabilities struct {
			DiagnosticProvider json.RawMessage `json:"diagnosticProvider"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(be.initResult, &res) == nil {
		if p := string(res.Capabilities.DiagnosticProvider); p != "" && p != "null" && p != "false" {
			return true
		}
	}
	for _, r := range be.registered {
		var x struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(r.raw, &x) == nil && x.Method == "textDocument/diagnostic" {
			return true
		}
	}
	return false
}
