package lsp

import (
	"encoding/json"
)

// The LSP types this package exchanges. They are a deliberate minimal subset
// (see the package comment for why no library is used): only the fields the
// client sends or reads, with JSON names as in the LSP 3.17 specification.
// Results whose shape varies by server (Location vs LocationLink, DocumentSymbol
// vs SymbolInformation, documentChanges entries) are decoded by hand from
// json.RawMessage where they are used.

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start position `json:"start"`
	End   position `json:"end"`
}

type location struct {
	URI   string   `json:"uri"`
	Range lspRange `json:"range"`
}

// locationLink is the richer answer to definition-like requests.
type locationLink struct {
	TargetURI            string   `json:"targetUri"`
	TargetRange          lspRange `json:"targetRange"`
	TargetSelectionRange lspRange `json:"targetSelectionRange"`
}

type textDocumentIdentifier struct {
	URI string `json:"uri"`
}

type versionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version *int   `json:"version"`
}

type textDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

type textDocumentPositionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Position     position               `json:"position"`
}

type referenceParams struct {
	textDocumentPositionParams
	Context struct {
		IncludeDeclaration bool `json:"includeDeclaration"`
	} `json:"context"`
}

type renameParams struct {
	textDocumentPositionParams
	NewName string `json:"newName"`
}

type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

type didChangeParams struct {
	TextDocument versionedTextDocumentIdentifier `json:"textDocument"`
	// Full-text sync: one change without a range.
	ContentChanges []struct {
		Text string `json:"text"`
	} `json:"contentChanges"`
}

type didSaveParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Text         *string                `json:"text,omitempty"`
}

type didCloseParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

type fileEvent struct {
	URI  string `json:"uri"`
	Type int    `json:"type"` // 1 created, 2 changed, 3 deleted
}

const (
	fileCreated = 1
	fileChanged = 2
	fileDeleted = 3
)

type didChangeWatchedFilesParams struct {
	Changes []fileEvent `json:"changes"`
}

// lspDiagnostic is a diagnostic as servers send it. Code may be a number or
// a string.
type lspDiagnostic struct {
	Range    lspRange        `json:"range"`
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"`
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

type executeCommandParams struct {
	Command   string `json:"command"`
	Arguments []any  `json:"arguments,omitempty"`
}

type publishDiagnosticsParams struct {
	URI         string          `json:"uri"`
	Version     *int            `json:"version,omitempty"`
	Diagnostics []lspDiagnostic `json:"diagnostics"`
	// QuietMS: a publish the broker replays says how long ago the server
	// published it (quietKey).
	QuietMS int64 `json:"builtintoolsQuietMs,omitempty"`
}

type documentDiagnosticParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

// documentDiagnosticReport is the answer to textDocument/diagnostic: kind
// "full" with items, or "unchanged" (never asked for here: no resultId is
// sent).
type documentDiagnosticReport struct {
	Kind  string          `json:"kind"`
	Items []lspDiagnostic `json:"items"`
}

type codeActionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Range        lspRange               `json:"range"`
	Context      struct {
		Diagnostics []lspDiagnostic `json:"diagnostics"`
		Only        []string        `json:"only,omitempty"`
	} `json:"context"`
}

// codeActionOrCommand decodes both shapes: a Command has a string "command",
// a CodeAction may carry an edit and a nested command object.
type codeActionOrCommand struct {
	Title   string          `json:"title"`
	Kind    string          `json:"kind,omitempty"`
	Edit    *workspaceEdit  `json:"edit,omitempty"`
	Command json.RawMessage `json:"command,omitempty"`
	// Arguments belong to a bare Command (Command is then its name).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Data is kept for codeAction/resolve.
	Data json.RawMessage `json:"data,omitempty"`
	// IsPreferred marks the fix a server recommends.
	IsPreferred bool `json:"isPreferred,omitempty"`
	Disabled    *struct {
		Reason string `json:"reason"`
	} `json:"disabled,omitempty"`
}

type textEdit struct {
	Range   lspRange `json:"range"`
	NewText string   `json:"newText"`
}

// workspaceEdit keeps documentChanges raw: entries are TextDocumentEdit or
// CreateFile/RenameFile/DeleteFile, told apart by "kind".
type workspaceEdit struct {
	Changes         map[string][]textEdit `json:"changes,omitempty"`
	DocumentChanges []json.RawMessage     `json:"documentChanges,omitempty"`
}

// documentChange is the union of the documentChanges entry shapes.
type documentChange struct {
	Kind string `json:"kind,omitempty"` // "", "create", "rename", "delete"
	// TextDocumentEdit
	TextDocument *versionedTextDocumentIdentifier `json:"textDocument,omitempty"`
	Edits        []textEdit                       `json:"edits,omitempty"`
	// create, delete
	URI string `json:"uri,omitempty"`
	// rename
	OldURI  string `json:"oldUri,omitempty"`
	NewURI  string `json:"newUri,omitempty"`
	Options *struct {
		Overwrite         bool `json:"overwrite,omitempty"`
		IgnoreIfExists    bool `json:"ignoreIfExists,omitempty"`
		Recursive         bool `json:"recursive,omitempty"`
		IgnoreIfNotExists bool `json:"ignoreIfNotExists,omitempty"`
	} `json:"options,omitempty"`
}

type workspaceSymbolParams struct {
	Query string `json:"query"`
}

type documentSymbolParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

// symbolEntry decodes both DocumentSymbol (range, children) and
// SymbolInformation / WorkspaceSymbol (location, containerName).
type symbolEntry struct {
	Name          string          `json:"name"`
	Detail        string          `json:"detail,omitempty"`
	Kind          int             `json:"kind"`
	ContainerName string          `json:"containerName,omitempty"`
	Range         *lspRange       `json:"range,omitempty"`
	Location      json.RawMessage `json:"location,omitempty"`
	Children      []symbolEntry   `json:"children,omitempty"`
}

// hoverResult.Contents is MarkupContent, MarkedString or MarkedString[].
type hoverResult struct {
	Contents json.RawMessage `json:"contents"`
}

type progressParams struct {
	Token json.RawMessage `json:"token"`
	Value struct {
		Kind    string `json:"kind"` // begin, report, end
		Title   string `json:"title,omitempty"`
		Message string `json:"message,omitempty"`
	} `json:"value"`
}

type registrationParams struct {
	Registrations []struct {
		ID     string `json:"id"`
		Method string `json:"method"`
	} `json:"registrations"`
}

type configurationParams struct {
	Items []struct {
		ScopeURI string `json:"scopeUri,omitempty"`
		Section  string `json:"section,omitempty"`
	} `json:"items"`
}

// initializeResult holds the capabilities this client acts on. Provider
// fields are kept raw: servers send a bool or an options object.
type initializeResult struct {
	Capabilities struct {
		PositionEncoding   string          `json:"positionEncoding,omitempty"`
		TextDocumentSync   json.RawMessage `json:"textDocumentSync,omitempty"`
		DiagnosticProvider json.RawMessage `json:"diagnosticProvider,omitempty"`
		RenameProvider     json.RawMessage `json:"renameProvider,omitempty"`
		// Formatting and resolving code actions, for lsp_fix.
		DocumentFormattingProvider      json.RawMessage `json:"documentFormattingProvider,omitempty"`
		DocumentRangeFormattingProvider json.RawMessage `json:"documentRangeFormattingProvider,omitempty"`
		CodeActionProvider              json.RawMessage `json:"codeActionProvider,omitempty"`
		CallHierarchyProvider           json.RawMessage `json:"callHierarchyProvider,omitempty"`
	} `json:"capabilities"`
	// clangd before LSP 3.17 answers the offsetEncoding extension here.
	OffsetEncoding string `json:"offsetEncoding,omitempty"`
	ServerInfo     *struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	} `json:"serverInfo,omitempty"`
}

// symbolKindNames maps LSP SymbolKind numbers (1-based) to words.
var symbolKindNames = [...]string{
	"", "file", "module", "namespace", "package", "class", "method", "property",
	"field", "constructor", "enum", "interface", "function", "variable",
	"constant", "string", "number", "boolean", "array", "object", "key", "null",
	"enum member", "struct", "event", "operator", "type parameter",
}

func symbolKindName(k int) string {
	if k > 0 && k < len(symbolKindNames) {
		return symbolKindNames[k]
	}
	return "symbol"
}

// clientCapabilities is what this client announces in initialize: full-text
// sync with save notifications, published and pulled diagnostics, work-done
// progress, documentChanges with file operations, and position encodings
// utf-8 first (so columns are byte offsets when the server agrees).
func clientCapabilities() map[string]any {
	return map[string]any{
		"general": map[string]any{
			"positionEncodings": []string{"utf-8", "utf-16"},
		},
		"window": map[string]any{
			"workDoneProgress": true,
		},
		"workspace": map[string]any{
			"configuration":    true,
			"workspaceFolders": true,
			// Only while lsp_fix runs a code action's command is an
			// applyEdit taken (fix.go); at any other time it is refused.
			"applyEdit": true,
			"workspaceEdit": map[string]any{
				"documentChanges":    true,
				"resourceOperations": []string{"create", "rename", "delete"},
				"failureHandling":    "abort",
			},
			"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true},
			"symbol": map[string]any{
				"symbolKind": map[string]any{"valueSet": symbolKindValueSet()},
			},
		},
		"textDocument": map[string]any{
			"synchronization": map[string]any{
				"didSave":             true,
				"willSave":            false,
				"dynamicRegistration": false,
			},
			"publishDiagnostics": map[string]any{
				"versionSupport":     true,
				"relatedInformation": false,
			},
			"diagnostic":      map[string]any{"dynamicRegistration": true, "relatedDocumentSupport": false},
			"hover":           map[string]any{"contentFormat": []string{"markdown", "plaintext"}},
			"definition":      map[string]any{"linkSupport": true},
			"typeDefinition":  map[string]any{"linkSupport": true},
			"implementation":  map[string]any{"linkSupport": true},
			"references":      map[string]any{},
			"formatting":      map[string]any{},
			"rangeFormatting": map[string]any{},
			"callHierarchy":   map[string]any{"dynamicRegistration": false},
			"rename":          map[string]any{"prepareSupport": false},
			"documentSymbol": map[string]any{
				"hierarchicalDocumentSymbolSupport": true,
				"symbolKind":                        map[string]any{"valueSet": symbolKindValueSet()},
			},
			"codeAction": map[string]any{
				"codeActionLiteralSupport": map[string]any{
					"codeActionKind": map[string]any{"valueSet": []string{
						"", "quickfix", "refactor", "refactor.extract", "refactor.inline",
						"refactor.rewrite", "source", "source.organizeImports", "source.fixAll",
					}},
				},
				"isPreferredSupport": true,
				"disabledSupport":    true,
			},
		},
		// clangd's pre-3.17 encoding negotiation.
		"offsetEncoding": []string{"utf-8", "utf-16"},
	}
}

func symbolKindValueSet() []int {
	out := make([]int, 0, len(symbolKindNames)-1)
	for i := 1; i < len(symbolKindNames); i++ {
		out = append(out, i)
	}
	return out
}
