package lang

// Resolution classes, the edge vocabulary: how sure an edge is.
const (
	Exact     = "exact"     // one definition in scope: same file, same package or class, a qualified import
	ViaImport = "import"    // bound by one of the file's imports
	Candidate = "candidate" // by name only: one of a ranked list
	// Interface is a call through an interface (a Go, Java or TypeScript
	// interface, a Rust trait): dispatch, not a call of one body. The edge
	// leads to the interface's own method; what may run are its
	// implementation edges (and a trait method's default body).
	Interface = "interface"
	// Implementation is a call through an interface (or a class's method)
	// that may run this definition: listed beside the interface edge (or
	// the exact edge to a class's method), never instead of it.
	Implementation = "implementation"
	Unresolved     = "unresolved" // no definition in the index
)
