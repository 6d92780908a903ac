package stack

// SourceLine is a line of source quoted in a result.
type SourceLine struct {
	Line    int    `json:"line"`
	Text    string `json:"text"`
	Current bool   `json:"current,omitempty"`
}

// Frame is a stack frame with its source.
type Frame struct {
	ID   string `json:"id" jsonschema:"frame_id for scopes and evaluate, tied to this stop"`
	Name string `json:"name"`
	// File is relative to the root; a file outside it is named but never
	// read.
	File    string       `json:"file,omitempty"`
	Line    int          `json:"line,omitempty"`
	Outside bool         `json:"outside,omitempty" jsonschema:"the file is outside the root, so it is not quoted"`
	Missing bool         `json:"missing,omitempty" jsonschema:"no such file is in the checkout (a path from the build, such as libc's), so it is not quoted"`
	Source  []SourceLine `json:"source,omitempty"`
	Newer   bool         `json:"source_newer,omitempty" jsonschema:"the source file changed after the program was built"`
}

// Var is a variable or an evaluation's value.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Type  string `json:"type,omitempty"`
	// Ref expands it with variables, tied to this stop; "" when it has no
	// children.
	Ref string `json:"ref,omitempty"`
	// Named and Indexed are the adapter's counts of its children (DAP's
	// namedVariables and indexedVariables). Adapters often give neither
	// for a pointer or an object: then a Ref says it expands, and how many
	// children it has is unknown, never 0.
	Named   int  `json:"named_children,omitempty" jsonschema:"the adapter's count of named children, when it gave one"`
	Indexed int  `json:"indexed_children,omitempty" jsonschema:"the adapter's count of indexed children (elements), when it gave one"`
	Cut     bool `json:"cut,omitempty" jsonschema:"the value was longer than 400 characters and was cut"`
}

// Children is how many children v has as the adapter counted them, 0 when
// it gave no count (see Ref).
func (v Var) Children() int { return v.Named + v.Indexed }
