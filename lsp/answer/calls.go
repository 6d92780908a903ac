package answer

// Call hierarchy operations, as [Calls.Operation] names them.
const (
	OpIncomingCalls = "incoming_calls"
	OpOutgoingCalls = "outgoing_calls"
)

// MaxCallSites caps the call sites a [Calls] result holds; Total counts
// them all.
const MaxCallSites = 200

// CallSite is one call: where it is, quoted, and the function at the other
// end — the caller for incoming_calls, the callee for outgoing_calls.
type CallSite struct {
	Site Location `json:"site" jsonschema:"the call, with its source line quoted"`
	// Name and Kind are the other end's, as the server names it.
	Name string `json:"name" jsonschema:"the caller (incoming) or callee (outgoing)"`
	Kind string `json:"kind,omitempty" jsonschema:"function, method ..."`
	// Detail is the server's detail (a package, a signature), withheld for
	// a function declared outside the root.
	Detail string `json:"detail,omitempty"`
	// Defined is where the other end is declared: path and line, the
	// line not quoted.
	Defined Location `json:"defined" jsonschema:"where the caller or callee is declared"`
}

// Calls answers incoming_calls and outgoing_calls.
type Calls struct {
	Operation  string `json:"operation" jsonschema:"incoming_calls or outgoing_calls"`
	Symbol     string `json:"symbol"`
	Occurrence int    `json:"occurrence,omitempty" jsonschema:"which occurrence of symbol on the line, when not the first"`
	File       string `json:"file"`
	Line       int    `json:"line"`
	Server     string `json:"server"`
	// Function is the function the server resolved the position to.
	Function string `json:"function,omitempty" jsonschema:"the function the position names, as the server calls it"`
	// Sites are sorted by path and position, at most MaxCallSites.
	Sites []CallSite `json:"sites" jsonschema:"one call site each, sorted, cut at 200"`
	Total int        `json:"total" jsonschema:"how many call sites the server gave"`
	// Functions is how many distinct callers (or callees) the sites name.
	Functions int `json:"functions" jsonschema:"how many distinct callers or callees"`
	// Declared is the function the position names, its Site the name in
	// its declaration (Defined unset); set by CallHierarchy only.
	Declared *CallSite `json:"declared,omitempty"`
	// Loading says the server had not loaded its workspace when it
	// answered (within StartTimeout): the answer may be incomplete.
	Loading string `json:"loading,omitempty" jsonschema:"the server had not finished loading the workspace: the answer may be incomplete; ask again"`
}
