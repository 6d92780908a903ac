package docsync

import (
	"encoding/json"
	"time"
)

// heldPreview is a hold under which the holder sent documents (a
// preview's unsaved text). The server's diagnostics of every file may
// then be of that text (gopls checks a package with the preview's
// version of one of its files), also after the release: a check with
// the preview's text can publish after the restore went out. Until the
// server has published, for each document the holder sent, of the last
// version it sent (the restore), publishes are sorted by
// previewPublish, and none but of a restored text is kept for
// replay.
type heldPreview[C comparable] struct {
	holder    C
	sent      map[string]int // uri → the server version the holder sent last
	published map[string]int // uri → the latest version the server published of it
	released  bool
	deadline  time.Time      // after the release: the most the others wait
	atRelease map[string]int // uri → the server's version of it at the release
	// withheld are the documents whose publish went to no one: once
	// settled, the server checks them again (recheck), so a client
	// waiting for one gets it.
	withheld map[string]bool
}

// previewSettle bounds how long after a release the others get no
// publish when the server publishes nothing of a restored document.
const previewSettle = 30 * time.Second

// heldSent notes a document notification (its params) the holder c
// sent to the server.
func (t *Table[C]) heldSent(c C, params json.RawMessage) {
	var p docParams
	if json.Unmarshal(params, &p) != nil {
		return
	}
	d := t.docs[p.TextDocument.URI]
	if d == nil {
		return
	}
	if t.preview == nil || t.preview.holder != c || t.preview.released {
		// A new hold's text: what an earlier one still waits for is kept.
		next := &heldPreview[C]{holder: c, sent: map[string]int{}, published: map[string]int{}, withheld: map[string]bool{}}
		if t.preview != nil {
			for uri, v := range t.preview.sent {
				if t.preview.published[uri] < v {
					next.sent[uri] = v
				}
			}
			for uri := range t.preview.withheld {
				next.withheld[uri] = true
			}
		}
		t.preview = next
	}
	t.preview.sent[p.TextDocument.URI] = d.version
}

// Released notes the end of c's hold.
func (t *Table[C]) Released(c C) {
	if t.preview != nil && t.preview.holder == c && !t.preview.released {
		t.preview.released = true
		t.preview.deadline = time.Now().Add(previewSettle)
		t.preview.atRelease = map[string]int{}
		for uri, d := range t.docs {
			t.preview.atRelease[uri] = d.version
		}
	}
}

// Who gets a publish while a preview's text may be in the server's
// checks.
const (
	toAll    = iota // as ever
	toHolder        // of the preview's text, or of a check with it
	toNone          // maybe of a check with the preview's text
)

// previewPublish notes a publish of the server for uri (version
// nil: unversioned) and says who may get it. Until the release, the
// holder gets those of the documents it sent (of its preview's text, or
// of its check with it) and no one any other. After it, a document the
// holder sent is published of the restored text at the version it sent
// last or later (the restores go out in order, the previewed documents
// first, so that snapshot has them all): that goes to all. Any other
// publish may still be of a check with the preview's text and goes to
// no one: the clients keep what the server said before the preview,
// which is what it says of the restored text.
// Once settled, it returns the re-checks of the documents withheld.
func (t *Table[C]) previewPublish(uri string, version *int) (int, []any) {
	pv := t.preview
	if pv == nil {
		return toAll, nil
	}
	want, sent := pv.sent[uri]
	if sent && version != nil && *version > pv.published[uri] {
		pv.published[uri] = *version
	}
	if pv.released {
		settled := time.Now().After(pv.deadline)
		if !settled {
			settled = true
			for u, v := range pv.sent {
				if pv.published[u] < v {
					settled = false
					break
				}
			}
		}
		if settled {
			// The server has checked the restored texts (this publish is
			// of one of them), or said nothing of them for too long.
			t.preview = nil
			delete(pv.withheld, uri)
			var recheck []any
			for u := range pv.withheld {
				if m := t.recheck(u); m != nil {
					recheck = append(recheck, m)
				}
			}
			return toAll, recheck
		}
		if sent && version != nil && *version >= want {
			delete(pv.withheld, uri)
			return toAll, nil
		}
		if version != nil && *version > pv.atRelease[uri] {
			// A text sent after the restores: the server checked it with
			// them.
			delete(pv.withheld, uri)
			return toAll, nil
		}
	}
	if sent {
		return toHolder, nil
	}
	if len(pv.withheld) < maxWithheld {
		pv.withheld[uri] = true
	}
	return toNone, nil
}

// maxWithheld bounds the documents re-checked after a preview.
const maxWithheld = 256
