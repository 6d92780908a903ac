package protocol

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"
)

// DecodeLocations reads Location, Location[], LocationLink[] or null.
func DecodeLocations(raw json.RawMessage) []Location {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == 'n' {
		return nil
	}
	var items []json.RawMessage
	if raw[0] == '[' {
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
	} else {
		items = []json.RawMessage{raw}
	}
	out := make([]Location, 0, len(items))
	for _, it := range items {
		var link LocationLink
		if json.Unmarshal(it, &link) == nil && link.TargetURI != "" {
			out = append(out, Location{URI: link.TargetURI, Range: link.TargetSelectionRange})
			continue
		}
		var l Location
		if json.Unmarshal(it, &l) == nil && l.URI != "" {
			out = append(out, l)
		}
	}
	return out
}

// SortLocations orders locations by URI, then start, keeping the order of
// equal ones.
func SortLocations(locs []Location) {
	slices.SortStableFunc(locs, func(a, b Location) int {
		return cmp.Or(strings.Compare(a.URI, b.URI),
			cmp.Compare(a.Range.Start.Line, b.Range.Start.Line),
			cmp.Compare(a.Range.Start.Character, b.Range.Start.Character))
	})
}

// HoverText flattens MarkupContent, MarkedString and MarkedString[].
func HoverText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	case '[':
		var parts []json.RawMessage
		_ = json.Unmarshal(raw, &parts)
		var out []string
		for _, p := range parts {
			if t := strings.TrimSpace(HoverText(p)); t != "" {
				out = append(out, t)
			}
		}
		return strings.Join(out, "\n\n")
	case '{':
		var m struct {
			Kind     string `json:"kind"`
			Language string `json:"language"`
			Value    string `json:"value"`
		}
		_ = json.Unmarshal(raw, &m)
		if m.Language != "" {
			return "```" + m.Language + "\n" + m.Value + "\n```"
		}
		return m.Value
	}
	return ""
}

// EditURIs lists the URIs a WorkspaceEdit names, the two ends of a rename
// included.
func EditURIs(we *WorkspaceEdit) []string {
	var out []string
	for uri := range we.Changes {
		out = append(out, uri)
	}
	for _, raw := range we.DocumentChanges {
		var dc DocumentChange
		if json.Unmarshal(raw, &dc) == nil {
			switch {
			case dc.TextDocument != nil:
				out = append(out, dc.TextDocument.URI)
			case dc.Kind == "rename":
				out = append(out, dc.OldURI, dc.NewURI)
			default:
				out = append(out, dc.URI)
			}
		}
	}
	return out
}

// CallHierarchyItem is the server's handle on a function; it is sent back
// as given (data included) to ask for its calls.
type CallHierarchyItem struct {
	Name           string          `json:"name"`
	Kind           int             `json:"kind"`
	Detail         string          `json:"detail,omitempty"`
	URI            string          `json:"uri"`
	Range          Range           `json:"range"`
	SelectionRange Range           `json:"selectionRange"`
	Tags           json.RawMessage `json:"tags,omitempty"`
	Data           json.RawMessage `json:"data,omitempty"`
}

// CallHierarchyCall is an incoming call (From set) or an outgoing one (To
// set); FromRanges are the call sites: in From's file for an incoming call,
// in the asked function's file for an outgoing one.
type CallHierarchyCall struct {
	From       *CallHierarchyItem `json:"from,omitempty"`
	To         *CallHierarchyItem `json:"to,omitempty"`
	FromRanges []Range            `json:"fromRanges"`
}

// WholeRange is the range of the whole document.
func WholeRange(d *Document, enc string) Range {
	last := d.LineCount() - 1
	return Range{End: Position{Line: last, Character: EncodedColumn(d.Line(last), len(d.Line(last)), enc)}}
}

// CommandOf reads the command of a CodeAction ({command: {command,
// arguments}}) or of a bare Command ({command: "name", arguments}).
func CommandOf(a CodeActionOrCommand) (string, json.RawMessage) {
	raw := bytes.TrimSpace(a.Command)
	if len(raw) == 0 || raw[0] == 'n' {
		return "", nil
	}
	if raw[0] == '"' {
		var name string
		_ = json.Unmarshal(raw, &name)
		return name, a.Arguments
	}
	var c struct {
		Command   string          `json:"command"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	}
	_ = json.Unmarshal(raw, &c)
	return c.Command, c.Arguments
}

// ProviderOn reads a capability that is a bool or an options object.
func ProviderOn(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("false")) && !bytes.Equal(raw, []byte("null"))
}
