package lsp

import (
	"context"
	"encoding/json"
	"strconv"
)

// pullTSServer asks tsserver, through typescript-language-server's
// typescript.tsserverRequest command, for a document's syntactic, semantic
// and suggestion diagnostics, the three kinds the server publishes.
// typescript-language-server has no textDocument/diagnostic and publishes
// nothing after a change that leaves a file as clean as it was, so a wait
// for its publish could only time out (issue 19 §2). tsserver answers
// after it has taken the change sent before, so the answer is for doc.
func pullTSServer(ctx context.Context, s *server, doc *openDoc) ([]lspDiagnostic, error) {
	d := newDocument(doc.text)
	items := []lspDiagnostic{}
	for _, command := range []string{"syntacticDiagnosticsSync", "semanticDiagnosticsSync", "suggestionDiagnosticsSync"} {
		var res struct {
			Success bool   `json:"success"`
			Message string `json:"message"`
			Body    []struct {
				Start    struct{ Line, Offset int } `json:"start"`
				End      struct{ Line, Offset int } `json:"end"`
				Text     string                     `json:"text"`
				Code     int                        `json:"code"`
				Category string                     `json:"category"`
				Source   string                     `json:"source"`
			} `json:"body"`
		}
		params := executeCommandParams{Command: "typescript.tsserverRequest", Arguments: []any{command, map[string]any{"file": doc.uri}}}
		if err := s.call(ctx, "workspace/executeCommand", params, &res); err != nil {
			return nil, err
		}
		if !res.Success {
			return nil, &ServerError{Server: s.spec.ID, Root: s.relRoot, Method: "tsserver " + command, Kind: ErrServerFailed, Detail: s.relText(res.Message)}
		}
		for _, it := range res.Body {
			source := it.Source
			if source == "" {
				source = "typescript" // as the server names the ones it publishes
			}
			items = append(items, lspDiagnostic{
				Range:    lspRange{Start: tsPosition(d, it.Start.Line, it.Start.Offset, s.encoding), End: tsPosition(d, it.End.Line, it.End.Offset, s.encoding)},
				Severity: tsSeverity(it.Category),
				Code:     json.RawMessage(strconv.Itoa(it.Code)),
				Source:   source,
				Message:  it.Text,
			})
		}
	}
	return items, nil
}

// tsPosition converts tsserver's 1-based line and UTF-16 offset to a
// position in the server's encoding.
func tsPosition(d *document, line, offset int, enc string) position {
	text := d.line(line - 1)
	return position{Line: max(line-1, 0), Character: encodedColumn(text, byteColumn(text, max(offset-1, 0), encUTF16), enc)}
}

// tsSeverity maps tsserver's diagnostic category to an LSP severity.
func tsSeverity(category string) int {
	switch category {
	case "warning":
		return int(SeverityWarning)
	case "suggestion":
		return int(SeverityHint)
	case "message":
		return int(SeverityInformation)
	}
	return int(SeverityError)
}
