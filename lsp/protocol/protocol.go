package protocol

import (
	"encoding/json"
)

// The LSP types this package exchanges. They are a deliberate minimal subset
// (see the package comment for why no library is used): only the fields the
// client sends or reads, with JSON names as in the LSP 3.17 specification.
// Results whose shape varies by server (Location vs LocationLink, DocumentSymbol
// vs SymbolInformation, documentChanges entries) are decoded by hand from
// json.RawMessage where they are used.

type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// LocationLink is the richer answer to definition-like requests.
type LocationLink struct {
	TargetURI            string `json:"targetUri"`
	TargetRange          Range  `json:"targetRange"`
	TargetSelectionRange Range  `json:"targetSelectionRange"`
}

type TextDocumentIdentifier struct {
	URI string `json:"uri"`
}

type VersionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version *int   `json:"version"`
}

type TextDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

type TextDocumentPositionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

type ReferenceParams struct {
	TextDocumentPositionParams
	Context struct {
		IncludeDeclaration bool `json:"includeDeclaration"`
	} `json:"context"`
}

type RenameParams struct {
	TextDocumentPositionParams
	NewName string `json:"newName"`
}

type DidOpenParams struct {
	TextDocument TextDocumentItem `json:"textDocument"`
}

type DidChangeParams struct {
	TextDocument VersionedTextDocumentIdentifier `json:"textDocument"`
	// Full-text sync: one change without a range.
	ContentChanges []struct {
		Text string `json:"text"`
	} `json:"contentChanges"`
}

type DidSaveParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Text         *string                `json:"text,omitempty"`
}

type DidCloseParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

type FileEvent struct {
	URI  string `json:"uri"`
	Type int    `json:"type"` // 1 created, 2 changed, 3 deleted
}

const (
	FileCreated = 1
	FileChanged = 2
	FileDeleted = 3
)

type DidChangeWatchedFilesParams struct {
	Changes []FileEvent `json:"changes"`
}

// Diagnostic is a diagnostic as servers send it. Code may be a number or
// a string.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"`
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

type ExecuteCommandParams struct {
	Command   string `json:"command"`
	Arguments []any  `json:"arguments,omitempty"`
}

type PublishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int         `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	// QuietMS: a publish the broker replays says how long ago the server
	// published it (quietKey).
	QuietMS int64 `json:"builtintoolsQuietMs,omitempty"`
}

type DocumentDiagnosticParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// DocumentDiagnosticReport is the answer to textDocument/diagnostic: kind
// "full" with items, or "unchanged" (never asked for here: no resultId is
// sent).
type DocumentDiagnosticReport struct {
	Kind  string       `json:"kind"`
	Items []Diagnostic `json:"items"`
}

type CodeActionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Range        Range                  `json:"range"`
	Context      struct {
		Diagnostics []Diagnostic `json:"diagnostics"`
		Only        []string     `json:"only,omitempty"`
	} `json:"context"`
}

// CodeActionOrCommand decodes both shapes: a Command has a string "command",
// a CodeAction may carry an edit and a nested command object.
type CodeActionOrCommand struct {
	Title   string          `json:"title"`
	Kind    string          `json:"kind,omitempty"`
	Edit    *WorkspaceEdit  `json:"edit,omitempty"`
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

type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// WorkspaceEdit keeps documentChanges raw: entries are TextDocumentEdit or
// CreateFile/RenameFile/DeleteFile, told apart by "kind".
type WorkspaceEdit struct {
	Changes         map[string][]TextEdit `json:"changes,omitempty"`
	DocumentChanges []json.RawMessage     `json:"documentChanges,omitempty"`
}

// DocumentChange is the union of the documentChanges entry shapes.
type DocumentChange struct {
	Kind string `json:"kind,omitempty"` // "", "create", "rename", "delete"
	// TextDocumentEdit
	TextDocument *VersionedTextDocumentIdentifier `json:"textDocument,omitempty"`
	Edits        []TextEdit                       `json:"edits,omitempty"`
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

type WorkspaceSymbolParams struct {
	Query string `json:"query"`
}

type DocumentSymbolParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// SymbolEntry decodes both DocumentSymbol (range, children) and
// SymbolInformation / WorkspaceSymbol (location, containerName).
type SymbolEntry struct {
	Name          string          `json:"name"`
	Detail        string          `json:"detail,omitempty"`
	Kind          int             `json:"kind"`
	ContainerName string          `json:"containerName,omitempty"`
	Range         *Range          `json:"range,omitempty"`
	Location      json.RawMessage `json:"location,omitempty"`
	Children      []SymbolEntry   `json:"children,omitempty"`
}

// HoverResult.Contents is MarkupContent, MarkedString or MarkedString[].
type HoverResult struct {
	Contents json.RawMessage `json:"contents"`
}

type ProgressParams struct {
	Token json.RawMessage `json:"token"`
	Value struct {
		Kind    string `json:"kind"` // begin, report, end
		Title   string `json:"title,omitempty"`
		Message string `json:"message,omitempty"`
	} `json:"value"`
}

type RegistrationParams struct {
	Registrations []struct {
		ID     string `json:"id"`
		Method string `json:"method"`
	} `json:"registrations"`
}

type ConfigurationParams struct {
	Items []struct {
		ScopeURI string `json:"scopeUri,omitempty"`
		Section  string `json:"section,omitempty"`
	} `json:"items"`
}

// InitializeResult holds the capabilities this client acts on. Provider
// fields are kept raw: servers send a bool or an options object.
type InitializeResult struct {
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

func SymbolKindName(k int) string {
	if k > 0 && k < len(symbolKindNames) {
		return symbolKindNames[k]
	}
	return "symbol"
}

// ClientCapabilities is what this client announces in initialize: full-text
// sync with save notifications, published and pulled diagnostics, work-done
// progress, documentChanges with file operations, and position encodings
// utf-8 first (so columns are byte offsets when the server agrees).
func ClientCapabilities() map[string]any {
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
