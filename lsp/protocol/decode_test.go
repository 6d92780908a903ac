package protocol

import (
	"encoding/json"
	"testing"
)

func TestDecodeLocationsAndHover(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want int
	}{
		{`null`, 0},
		{`{"uri":"file:///a","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}}`, 1},
		{`[{"uri":"file:///a","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}},{"targetUri":"file:///b","targetRange":{"start":{"line":0,"character":0},"end":{"line":5,"character":0}},"targetSelectionRange":{"start":{"line":2,"character":4},"end":{"line":2,"character":5}}}]`, 2},
	} {
		locs := DecodeLocations(json.RawMessage(c.raw))
		if len(locs) != c.want {
			t.Errorf("%s: got %d locations", c.raw, len(locs))
		}
		if c.want == 2 && (locs[1].URI != "file:///b" || locs[1].Range.Start.Line != 2) {
			t.Errorf("link: want the selection range of the target, got %+v", locs[1])
		}
	}
	for raw, want := range map[string]string{
		`{"kind":"markdown","value":"**x**"}`: "**x**",
		`"plain"`:                             "plain",
		`[{"language":"go","value":"func f()"},"doc"]`: "```go\nfunc f()\n```\n\ndoc",
	} {
		if got := HoverText(json.RawMessage(raw)); got != want {
			t.Errorf("hover %s: got %q want %q", raw, got, want)
		}
	}
}

func TestURIRoundTrip(t *testing.T) {
	for _, p := range []string{"/tmp/a b/c#d.go", "/tmp/größe/x.go", "/tmp/%41.go"} {
		got, ok := URIPath(FileURI(p))
		if !ok || got != p {
			t.Errorf("%s -> %s -> %s", p, FileURI(p), got)
		}
	}
}
