package lang

// Resolution classes, the edge vocabulary: how sure an edge is.
const (
	Exact     = "exact"     // one definition in scope: same file, same package or class, a qualified import
	ViaImport = "import"    // bound by one of the file's imports
	Candidate = "candidate" // by name only: one of a ranked list
	// Implementation is a call through an interface (or a class's method)
	// that may run this definition: listed beside the exact edge to the
	// interface's method, never instead of it.
	Implementation = "implementation"
	Unresolved     = "unresolved" // no definition in the index
)
