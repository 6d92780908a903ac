package langserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// pullTSServer asks tsserver, through typescript-language-server's
// typescript.tsserverRequest command, for a document's syntactic, semantic
// and suggestion diagnostics, the three kinds the server publishes.
// typescript-language-server has no textDocument/diagnostic and publishes
// nothing after a change that leaves a file as clean as it was, so a wait
// for its publish could only time out (issue 19 §2). tsserver answers
// after it has taken the change sent before, so the answer is for doc.
func pullTSServer(ctx context.Context, call Caller, doc Doc) ([]protocol.Diagnostic, error) {
	d := protocol.NewDocument(doc.Text)
	items := []protocol.Diagnostic{}
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
		params := protocol.ExecuteCommandParams{Command: "typescript.tsserverRequest", Arguments: []any{command, map[string]any{"file": doc.URI}}}
		if err := call(ctx, "workspace/executeCommand", params, &res); err != nil {
			return nil, err
		}
		if !res.Success {
			return nil, fmt.Errorf("tsserver %s: %w: %s", command, ErrRefused, res.Message)
		}
		for _, it := range res.Body {
			source := it.Source
			if source == "" {
				source = "typescript" // as the server names the ones it publishes
			}
			items = append(items, protocol.Diagnostic{
				Range:    protocol.Range{Start: tsPosition(d, it.Start.Line, it.Start.Offset, doc.Encoding), End: tsPosition(d, it.End.Line, it.End.Offset, doc.Encoding)},
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
func tsPosition(d *protocol.Document, line, offset int, enc string) protocol.Position {
	text := d.Line(line - 1)
	return protocol.Position{Line: max(line-1, 0), Character: protocol.EncodedColumn(text, protocol.ByteColumn(text, max(offset-1, 0), protocol.UTF16), enc)}
}

// tsSeverity maps tsserver's diagnostic category to an LSP severity.
func tsSeverity(category string) int {
	switch category {
	case "warning":
		return int(diag.SeverityWarning)
	case "suggestion":
		return int(diag.SeverityHint)
	case "message":
		return int(diag.SeverityInformation)
	}
	return int(diag.SeverityError)
}

// confirmGopls has gopls diagnose doc's package in the snapshot it holds
// (gopls.diagnose_files). The command replies after that diagnosis is
// published, and the reply is read after the publishes written before it,
// so the last publish for doc is then the answer: an empty set too, which
// gopls does not publish again when it published one last.
func confirmGopls(ctx context.Context, call Caller, doc Doc) error {
	params := protocol.ExecuteCommandParams{Command: "gopls.diagnose_files", Arguments: []any{map[string]any{"Files": []string{doc.URI}}}}
	var res json.RawMessage
	return call(ctx, "workspace/executeCommand", params, &res)
}
